"""Shared test helpers: running the real kivgraph CLI in a private KIVGRAPH_HOME."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


def kivgraph_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIVGRAPH_FAULT")}
    env["KIVGRAPH_HOME"] = str(home)
    env.update(extra)
    return env


def run_kivgraph(home: Path, *args: str, timeout: float = 300, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m kivgraph_cli ARGS` as a real child process."""
    return subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", *args],
        env=kivgraph_env(home, **extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
    )


def copy_fixture(name: str, dest: Path) -> Path:
    """A private copy of tests/fixtures/NAME (fixtures live inside this git repository)."""
    target = dest / name
    shutil.copytree(FIXTURES / name, target, symlinks=True)
    return target


def write_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def group_entries(results: dict[str, Any], field: str = "files") -> list[tuple[str | None, str, Any]]:
    """(repository, path, entry) of every entry of a compact answer's file groups (``{path: [entry, …]}``, a key
    ``repo:path`` for another repository's file), flat or under ``groups``, in order."""
    from server.views import split_group_key

    hoisted = results.get("repository")
    out: list[tuple[str | None, str, Any]] = []
    for group in results.get("groups", [results]):
        for key, entries in (group.get(field) or {}).items():
            repository, path = split_group_key(key, hoisted)
            out.extend((repository, path, entry) for entry in entries)
    return out


def labels_of(results: dict[str, Any], field: str = "files") -> list[str]:
    """The labels (``qn@start[-end]``) of a compact answer's file groups, tails dropped."""
    return [entry if isinstance(entry, str) else entry[0] for _repo, _path, entry in group_entries(results, field)]


def row_dicts(results: dict[str, Any], field: str = "files") -> list[dict[str, Any]]:
    """Every row of a compact page read through the page's ``columns``: ``{column: value}``, a value the row
    leaves empty taken from its group's header or the page's (where a header default applies), plus the
    row's ``repository`` and ``path``."""
    columns = results["columns"]
    out = []
    hoisted = results.get("repository")
    from server.views import split_group_key

    for group in results.get("groups", [results]):
        for key, entries in (group.get(field) or {}).items():
            repository, path = split_group_key(key, hoisted)
            for entry in entries:
                cells = [entry] if isinstance(entry, str) else list(entry)
                assert len(cells) <= len(columns), (entry, columns)
                row: dict[str, Any] = {"repository": repository, "path": path}
                for i, column in enumerate(columns):
                    value = cells[i] if i < len(cells) else ""
                    row[column] = value if value != "" else group.get(column, results.get(column, ""))
                out.append(row)
    return out


def ranked_files(results: dict[str, Any]) -> list[dict[str, Any]]:
    """find_by_intent's ranked rows read through ``columns``: ``{repo, file, terms, symbols, kinds}`` (the
    repository and the symbols' kinds filled from the header where the row leaves them to it)."""
    from server.views import split_group_key

    if not results["files"]:
        return []
    columns, symbol_columns = results["columns"], results["symbol_columns"]
    assert columns == ["file", "terms", "symbols"] and symbol_columns == ["at", "kind"], (columns, symbol_columns)
    out = []
    for row in results["files"]:
        assert isinstance(row, list) and 2 <= len(row) <= 3, row
        repo, file = split_group_key(row[0], results.get("repository"))
        symbols = [[s] if isinstance(s, str) else s for s in (row[2] if len(row) > 2 else [])]
        out.append(
            {
                "repo": repo,
                "file": file,
                "terms": row[1],
                "symbols": [s[0] for s in symbols],
                "kinds": [s[1] if len(s) > 1 else results["kind"] for s in symbols],
            }
        )
    return out


@contextlib.contextmanager
def kept_signal_handlers() -> Iterator[None]:
    """Put this process's signal handlers back afterwards: ``kivgraph index`` run in-process installs its own."""
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)
    saved = {sig: signal.getsignal(sig) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
