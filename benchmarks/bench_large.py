"""Large real corpora end to end: django 5.1.4 (Python), effect 3.12.0 and rxjs 7.8.1 (TypeScript).

For each corpus, one cold `kivgraph index --json` in a private KIVGRAPH_HOME (fact cache included, so the
run pays every analyzer run), then one unchanged re-index. Records wall time, the analyzer's share, the
exact and candidate edge counts, which files the analyzer was run without and why (scip-python 0.6.6
crashes on one django test file), and whether the unchanged re-index ran the analyzer again.

For the TypeScript corpora (npm tarballs shipping their sources next to their build outputs, which are
skipped as generated) it also counts the exported top-level declarations of every ``src/**/*.ts`` file
and compares them, file by file, with what the TypeScript checker reports as exported for the same files
(``getExportsOfModule``, ``ts_exported_declarations.cjs``): a declaration exported under another name
(``export { let_ as let }``) counts, a re-export and a namespace's members do not.

    python -m benchmarks.bench_large                 # all three
    python -m benchmarks.bench_large --corpus effect --corpus rxjs
    python -m benchmarks.bench_large --layers        # django + ten small repositories as layers

Writes benchmarks/results/large-<corpus>.json and large-<corpus>.md (``--layers``: large-layers.json and
large-layers.md, see benchmarks/bench_large_layers.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpora import NPM_CORPORA, PYPI_CORPORA, fetch_npm_package, fetch_pypi_sdist

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
ORACLE = Path(__file__).parent / "ts_exported_declarations.cjs"
CORPORA = {"django": "python", "effect": "typescript", "rxjs": "typescript"}


def _index(home: Path) -> dict[str, Any]:
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=4 * 3600,
    )
    wall = time.perf_counter() - started
    result = next(
        (json.loads(line)["result"] for line in proc.stdout.splitlines() if json.loads(line).get("event") == "result"),
        None,
    )
    if proc.returncode != 0 or result is None:
        raise SystemExit(f"index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return {"wall_seconds": round(wall, 1), "result": result}


def _status(home: Path) -> dict[str, Any]:
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "status", "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def _excluded(home: Path, repository: str) -> list[dict[str, Any]]:
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import open_current

    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        return [
            {"path": u.path, "why": u.detail} for u in gen.unresolved_in(repository) if u.reason == "ANALYZER_FAILED"
        ]


def _declaration_agreement(home: Path, root: Path, repository: str) -> dict[str, Any]:
    """Exported top-level declarations of src/**/*.ts: ours against the TypeScript checker's, per file."""
    from indexer.languages.typescript import analyzer as scip_ts
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import open_current

    files = sorted(p for p in (root / "src").rglob("*.ts") if not p.name.endswith(".d.ts"))
    env = {**os.environ, "NODE_PATH": str(scip_ts.install_dir() / "node_modules")}
    proc = subprocess.run(
        ["node", str(ORACLE)],
        input=json.dumps({"files": [str(f) for f in files]}),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    theirs = {Path(k).relative_to(root).as_posix(): set(v) for k, v in json.loads(proc.stdout).items()}
    ours: dict[str, set[str]] = {}
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        for rel in theirs:
            decls = list(gen.declarations(repository, rel))
            module = next((s.key for s in decls if s.kind == "module"), None)
            ours[rel] = {s.name for s in decls if s.exported and s.container in ("", module) and s.kind != "module"}
    missing = {p: sorted(theirs[p] - ours[p]) for p in theirs if theirs[p] - ours[p]}
    extra = {p: sorted(ours[p] - theirs[p]) for p in theirs if ours[p] - theirs[p]}
    return {
        "files": len(theirs),
        "typescript_checker": sum(len(v) for v in theirs.values()),
        "kivgraph": sum(len(ours[p] & theirs[p]) for p in theirs),
        "missing": sum(len(v) for v in missing.values()),
        "extra": sum(len(v) for v in extra.values()),
        "missing_by_file": dict(list(missing.items())[:20]),
        "extra_by_file": dict(list(extra.items())[:20]),
    }


def bench(corpus: str) -> dict[str, Any]:
    language = CORPORA[corpus]
    root = fetch_pypi_sdist(corpus) if corpus in PYPI_CORPORA else fetch_npm_package(corpus)
    version = PYPI_CORPORA.get(corpus) or NPM_CORPORA[corpus][1]
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-large-") as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "KIVGRAPH_HOME": str(home)}
        subprocess.run(
            [sys.executable, "-m", "kivgraph_cli", "init", str(root), "--languages", language],
            cwd=REPO_ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        cold = _index(home)
        warm = _index(home)
        status = _status(home)
        (repo,) = status["repositories"]
        data: dict[str, Any] = {
            "corpus": f"{corpus}-{version}",
            "language": language,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "cold_seconds": cold["wall_seconds"],
            "warm_seconds": warm["wall_seconds"],
            "cold_timings": cold["result"]["timings"],
            "counts": cold["result"]["counts"],
            "index": cold["result"]["index"],
            "warm_index": warm["result"]["index"],
            "edges_by_confidence": status["edges_by_confidence"],
            "analyses": repo["analyses"],
            "files_by_status": repo["languages"],
            "excluded_files": _excluded(home, repo["name"]),
        }
        if language == "typescript":
            data["exported_declarations"] = _declaration_agreement(home, root, repo["name"])
    return data


def report(data: dict[str, Any]) -> str:
    lang = data["language"]
    idx, warm = data["index"].get(lang, {}), data["warm_index"].get(lang, {})
    lines = [
        f"# {data['corpus']} ({lang}): large-corpus index",
        "",
        "Command: `python -m benchmarks.bench_large --corpus " + data["corpus"].rsplit("-", 1)[0] + "`",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| cold index | {data['cold_seconds']} s (analyzer {data['cold_timings'].get(f'analyzer.{lang}', 0):.1f} s) |",
        f"| unchanged re-index | {data['warm_seconds']} s, analyzer runs {warm.get('analyzer_runs', 0)}, "
        f"cached {warm.get('analyzer_cache_hits', 0)} |",
        f"| files / partial / failed | {idx.get('files', 0)} / {idx.get('partial', 0)} / {idx.get('parse_failed', 0)} |",
        f"| skipped (generated build outputs, vendored, ...) | {idx.get('skipped', 0)} |",
        f"| symbols / edges | {data['counts']['symbols']} / {data['counts']['edges']} |",
        f"| edges by confidence | {data['edges_by_confidence']} |",
        f"| mode | {idx.get('mode', '')} |",
    ]
    for a in data["analyses"]:
        lines.append(f"| analysis ({a['language']}) | {a['mode']}: {a.get('reason', '')} |")
    lines += ["", f"Files the analyzer was run without: {len(data['excluded_files'])}"]
    lines += [f"- `{e['path']}`: {e['why']}" for e in data["excluded_files"]]
    decl = data.get("exported_declarations")
    if decl:
        lines += [
            "",
            f"Exported top-level declarations in {decl['files']} `src/**/*.ts` files: TypeScript checker "
            f"(getExportsOfModule) {decl['typescript_checker']}, kivgraph {decl['kivgraph']} "
            f"(missing {decl['missing']}, extra {decl['extra']}).",
        ]
        for label, key in (("missing", "missing_by_file"), ("extra", "extra_by_file")):
            lines += [f"- {label} in `{p}`: {', '.join(names)}" for p, names in decl[key].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append")
    parser.add_argument(
        "--layers",
        action="store_true",
        help="django plus ten small repositories registered as layers: publication after one small repository "
        "changes against index --full, the link step against cross-repository edges, serve's memory "
        "(large-layers.json/.md)",
    )
    parser.add_argument(
        "--exact-python",
        action="store_true",
        help="with --layers: run scip-python on the Python repositories (django: ~12 minutes cold on 2 cores); "
        "by default they run on their CANDIDATE fallback",
    )
    parser.add_argument(
        "--no-one-environment",
        action="store_true",
        help="with --layers: skip the one-environment generation serve's memory is compared with",
    )
    parser.add_argument("--keep", type=Path, help="with --layers: copy the private home and sources to this directory")
    args = parser.parse_args(argv)
    if args.layers:
        from benchmarks import bench_large_layers

        return bench_large_layers.main(
            exact_python=args.exact_python, one_env=not args.no_one_environment, keep=args.keep
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpus or sorted(CORPORA):
        data = bench(corpus)
        (RESULTS / f"large-{corpus}.json").write_text(json.dumps(data, indent=2) + "\n")
        text = report(data)
        (RESULTS / f"large-{corpus}.md").write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
