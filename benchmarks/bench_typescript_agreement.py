"""find_references on a real TypeScript package against the TypeScript language service, plus index time.

The corpus is ``@tanstack/query-core`` at a pinned version (``npm pack`` into
the cache; its ``build/`` output is excluded, its ``src/`` indexed). kivgraph
indexes it cold (a fresh state directory: extraction and scip-typescript run)
and warm (the same state again: fact cache and cached analyzer run), through
the real CLI. For ten symbols, the files holding kivgraph's incoming
references (every reference kind, from the published generation) are compared
with the files holding a non-definition reference in the language service's
own ``findReferences`` (typescript 5.9.3, the same compiler options as the
analyzer's inferred project): precision and recall at file level.

    python -m benchmarks.bench_typescript_agreement

Writes benchmarks/results/typescript-agreement-<corpus>.json and .md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.corpora import NPM_CORPORA, fetch_npm_package
from indexer.languages.typescript import analyzer as scip_ts
from indexer.languages.typescript.modules import TS_EXTENSIONS
from server.queries.references import ALL_KINDS, find_references
from server.queries.symbols import find_symbols
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from snapshot_format.records import Symbol

CORPUS = "query-core"
# (qualified name, kind): classes, functions, a singleton, methods
SUBJECTS: list[tuple[str, str]] = [
    ("src.queryClient.QueryClient", "class"),
    ("src.queryCache.QueryCache", "class"),
    ("src.queryObserver.QueryObserver", "class"),
    ("src.subscribable.Subscribable", "class"),
    ("src.notifyManager.notifyManager", "variable"),
    ("src.utils.hashKey", "function"),
    ("src.utils.replaceEqualDeep", "function"),
    ("src.utils.matchQuery", "function"),
    ("src.queryCache.QueryCache.build", "method"),
    ("src.query.Query.setData", "method"),
]
RESULTS = Path(__file__).parent / "results"
ORACLE = Path(__file__).parent / "ts_language_service_refs.cjs"


def _cli(home: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _index(home: Path) -> dict[str, Any]:
    proc = _cli(home, "index", "--json")
    if proc.returncode != 0:
        raise RuntimeError(f"kivgraph index failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])["result"]


def _name_column(line: str, start_col: int, name: str) -> int:
    m = re.compile(rf"\b{re.escape(name)}\b").search(line, start_col)
    return m.start() if m else start_col


def file_level(rows: list[dict[str, Any]], theirs: list[set[str]]) -> dict[str, Any]:
    """Precision and recall of kivgraph's files against the language service's, each row given its differences."""
    tp = fp = fn = 0
    for row, oracle in zip(rows, theirs, strict=True):
        ours = set(row["kivgraph_files"])
        row["language_service_files"] = sorted(oracle)
        row["missing"] = sorted(oracle - ours)
        row["extra"] = sorted(ours - oracle)
        tp += len(ours & oracle)
        fp += len(ours - oracle)
        fn += len(oracle - ours)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "tp": tp, "fp": fp, "fn": fn}


def oracle_query(root: Path, subject: Symbol) -> dict[str, Any]:
    """The language service's question for a declaration: its file, line and the column of its name."""
    line = (root / subject.path).read_text().splitlines()[subject.start_line - 1]
    col = _name_column(line, subject.start_col, subject.qualified_name.rsplit(".", 1)[-1])
    return {"file": str(root / subject.path), "line": subject.start_line, "col": col}


def _oracle(root: Path, files: list[str], queries: list[dict[str, Any]]) -> tuple[str, list[set[str]]]:
    config = scip_ts.project_config(root, files)
    payload = {
        "root": str(root),
        "files": config["files"],
        "compilerOptions": config["compilerOptions"],
        "queries": queries,
    }
    env = {**os.environ, "NODE_PATH": str(scip_ts.install_dir() / "node_modules")}
    proc = subprocess.run(
        ["node", str(ORACLE)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    data = json.loads(proc.stdout)
    out = [
        {Path(f).relative_to(root).as_posix() for f, _line, _col in rows if Path(f).is_relative_to(root)}
        for rows in data["results"]
    ]
    return data["version"], out


def main() -> int:
    root = fetch_npm_package(CORPUS)
    package, version = NPM_CORPORA[CORPUS]
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-ts-") as tmp:
        home = Path(tmp)
        if _cli(home, "init", str(root), "--languages", "typescript").returncode != 0:
            raise RuntimeError("kivgraph init failed")
        config = home / "kivgraph.toml"
        config.write_text(config.read_text() + 'exclude = ["build"]\n')
        cold = _index(home)
        warm = _index(home)
        layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
        rows: list[dict[str, Any]] = []
        queries: list[dict[str, Any]] = []
        with open_current(layout) as gen:
            files = sorted(
                p.relative_to(root).as_posix() for p in (root / "src").rglob("*") if p.name.endswith(TS_EXTENSIONS)
            )
            for qn, kind in SUBJECTS:
                name = qn.rsplit(".", 1)[-1]
                (subject,) = [s for s in find_symbols(gen, name) if s.qualified_name == qn and s.kind == kind]
                refs = find_references(gen, subject, kinds=ALL_KINDS)  # the service counts exports too
                ours = {r.other.path for r in refs.rows}
                queries.append(oracle_query(root, subject))
                rows.append(
                    {
                        "symbol": qn,
                        "kind": kind,
                        "kivgraph_files": sorted(ours),
                        "exact_rows": sum(1 for r in refs.rows if r.confidence == 1),
                        "rows": len(refs.rows),
                    }
                )
        ts_version, theirs = _oracle(root, files, queries)
    agreement = file_level(rows, theirs)
    total_cold, total_warm = cold["timings"]["total"], warm["timings"]["total"]
    analyzer_cold = cold["timings"].get("analyzer.typescript", 0.0)
    analyzer_warm = warm["timings"].get("analyzer.typescript", 0.0)
    result = {
        "corpus": f"{package}@{version}",
        "files": cold["index"]["typescript"]["files"],
        "symbols": cold["counts"]["symbols"],
        "edges": cold["counts"]["edges"],
        "mode": cold["index"]["typescript"]["mode"],
        "analyzer": f"{scip_ts.ANALYZER} {scip_ts.PINNED_VERSION}",
        "oracle": f"typescript {ts_version} LanguageService.findReferences",
        "file_level": agreement,
        "index_seconds": {
            "cold_total": total_cold,
            "cold_analyzer": analyzer_cold,
            "cold_analyzer_share": round(analyzer_cold / total_cold, 3) if total_cold else 0.0,
            "warm_total": total_warm,
            "warm_analyzer": analyzer_warm,
            "warm_analyzer_runs": warm["index"]["typescript"]["analyzer_runs"],
            "warm_analyzer_cache_hits": warm["index"]["typescript"]["analyzer_cache_hits"],
        },
        "timings_cold": cold["timings"],
        "timings_warm": warm["timings"],
        "symbols_compared": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    stem = f"typescript-agreement-{CORPUS}-{version}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# find_references vs the TypeScript language service: {package}@{version}",
        "",
        f"{result['files']} files, {result['symbols']} symbols, {result['edges']} edges, mode {result['mode']} "
        f"({result['analyzer']}; oracle {result['oracle']}).",
        "",
        f"File level over {len(rows)} symbols: precision {agreement['precision']:.3f}, recall "
        f"{agreement['recall']:.3f} (tp {agreement['tp']}, fp {agreement['fp']}, fn {agreement['fn']}).",
        "",
        f"Index time: cold {total_cold:.2f} s (analyzer {analyzer_cold:.2f} s, "
        f"{result['index_seconds']['cold_analyzer_share']:.0%}); warm {total_warm:.2f} s "
        f"(analyzer {analyzer_warm:.2f} s, cached runs {result['index_seconds']['warm_analyzer_cache_hits']}).",
        "",
        "| symbol | kivgraph files | language service files | missing | extra |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(
            f"| {row['symbol']} | {len(row['kivgraph_files'])} | {len(row['language_service_files'])} | "
            f"{', '.join(row['missing']) or '-'} | {', '.join(row['extra']) or '-'} |"
        )
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
