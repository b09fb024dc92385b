"""Python's exact pass after an edit: scip-python over the files the edit reaches vs over the whole repository.

On a private copy of click (the pinned sdist bench_fresh uses), one whole run first; then each scripted edit
is applied in turn and the repository's facts are computed twice, by the incremental route
(``ScipPythonAdapter.update`` from the last facts) and by a whole run, and must be equal (the route falls
back to a whole run, and says so, when the reach is most files). Reported per edit: how many files the
edit reaches, the seconds of each route, and whether the facts are equal.

    python -m benchmarks.bench_python_incremental

Writes benchmarks/results/python-incremental.json and .md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.corpora import fetch_pypi_sdist

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgspec  # noqa: E402

from indexer.corpus import Corpus, RepositoryFacts  # noqa: E402
from indexer.languages import python as py  # noqa: E402
from indexer.languages.python import adapter as python_adapter  # noqa: E402
from indexer.languages.python import incremental  # noqa: E402


def corpus_of(root: Path) -> Corpus:
    """The repository's Python files extracted as the pipeline extracts them (no stable keys: not bound)."""
    paths: list[str] = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        paths += [Path(d, f).relative_to(root).as_posix() for f in files if f.endswith(py.EXTENSIONS)]
    paths.sort()
    everything = frozenset(paths)
    repo = RepositoryFacts(name="click", root=str(root))
    for path in paths:
        repo.files.append(py.extract(path, (root / path).read_bytes(), py.package_for(path, everything)))
    return Corpus(language="python", repositories=[repo], key_of=lambda *_a: None)


def replace(root: Path, path: str, old: str, new: str) -> Callable[[], None]:
    def apply() -> None:
        text = (root / path).read_text()
        assert old in text, (path, old)
        (root / path).write_text(text.replace(old, new, 1))

    return apply


def edits(root: Path) -> list[tuple[str, str, Callable[[], None]]]:
    """(label, file, change): body edits, a caller added, two signature edits, a file deleted."""
    return [
        (
            "body edit in a leaf module (TextWrapper.indent_only)",
            "src/click/_textwrap.py",
            replace(
                root, "src/click/_textwrap.py", "        rv = []\n", "        rv = []\n        rv.append(text[:0])\n"
            ),
        ),
        (
            "body edit of a function writing a global (termui.getchar)",
            "src/click/termui.py",
            replace(
                root, "src/click/termui.py", "    if _getchar is None:", "    if _getchar is None or echo is None:"
            ),
        ),
        (
            "a caller added in a test",
            "tests/test_termui.py",
            replace(
                root,
                "tests/test_termui.py",
                "def test_progressbar_strip_regression",
                "def test_kivgraph():\n    click.echo('x')\n\n\ndef test_progressbar_strip_regression",
            ),
        ),
        (
            "signature edit of a function used in 6 files (utils.format_filename)",
            "src/click/utils.py",
            replace(
                root,
                "src/click/utils.py",
                "    shorten: bool = False,\n) -> str:",
                "    shorten: bool = False,\n    quote: bool = False,\n) -> str:",
            ),
        ),
        (
            "signature edit of the most used function (utils.echo)",
            "src/click/utils.py",
            replace(
                root,
                "src/click/utils.py",
                '    color: t.Optional[bool] = None,\n) -> None:\n    """Print a message',
                '    color: t.Optional[bool] = None,\n    extra: int = 0,\n) -> None:\n    """Print a message',
            ),
        ),
        ("a test file deleted", "tests/test_parser.py", lambda: (root / "tests/test_parser.py").unlink()),
    ]


def main() -> None:
    source = fetch_pypi_sdist("click")
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-pyinc-") as tmp:
        root = Path(tmp) / "click"
        shutil.copytree(source, root)
        adapter = python_adapter.ADAPTER
        corpus = corpus_of(root)
        started = time.perf_counter()
        previous = adapter.analyze(corpus.repositories[0], corpus, timeout=1800)
        first = time.perf_counter() - started
        print(f"whole run: {first:.1f}s over {len(corpus.repositories[0].files)} files", flush=True)
        for label, path, change in edits(root):
            change()
            corpus = corpus_of(root)
            repo = corpus.repositories[0]
            files = sorted(ff.path for ff in repo.files if ff.parsed)
            before = {fu.path: fu.units for fu in previous.units}
            reached = incremental.reach(before, {path}, files, incremental._Files(root))
            started = time.perf_counter()
            updated = adapter.update(previous, {path}, repo, corpus, timeout=1800)
            incremental_s = time.perf_counter() - started
            started = time.perf_counter()
            whole = adapter.analyze(repo, corpus, timeout=1800)
            whole_s = time.perf_counter() - started
            row = {
                "edit": label,
                "file": path,
                "files": len(files),
                "reached": None if reached is None else len(reached),
                "route": "incremental" if updated is not None else "whole (reach too wide)",
                "incremental_seconds": round(incremental_s, 2) if updated is not None else None,
                "whole_seconds": round(whole_s, 2),
                "equal": updated is None or msgspec.msgpack.encode(updated) == msgspec.msgpack.encode(whole),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
            previous = whole
    meta = {"corpus": source.name, "first_whole_seconds": round(first, 2), "machine": platform.platform()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "python-incremental.json").write_text(json.dumps({**meta, "edits": rows}, indent=2) + "\n")
    lines = [
        f"# Python incremental exact pass on {source.name}",
        "",
        f"First whole run {first:.1f}s ({meta['machine']}).",
        "",
        "| edit | reached / files | route | incremental s | whole s | equal |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        inc = "" if r["incremental_seconds"] is None else f"{r['incremental_seconds']:.1f}"
        lines.append(
            f"| {r['edit']} | {r['reached']} / {r['files']} | {r['route']} | {inc} | {r['whole_seconds']:.1f} "
            f"| {'yes' if r['equal'] else 'NO'} |"
        )
    (RESULTS / "python-incremental.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not all(r["equal"] for r in rows):
        raise SystemExit("an incremental run disagreed with a whole one")


if __name__ == "__main__":
    main()
