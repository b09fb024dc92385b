"""Cross-repository references through a published npm build against the TypeScript language service.

The pair: ``@tanstack/query-core``'s source (the provider, registered) and
``@tanstack/react-query``'s source (the consumer, registered), whose
``node_modules/@tanstack/query-core`` holds query-core's *published* tarball
(bundled, chunked ``.d.ts``, no declaration maps; ``benchmarks.corpora``
installs it with react-query's ``@types`` dependencies, all fetched into the
cache, never committed). kivgraph indexes both cold and warm through the real
CLI. For about ten provider symbols, the consumer files holding kivgraph's
incoming references (every reference kind, EXACT_PACKAGE_MAPPED edges across
the repositories) are compared with the consumer files holding a
non-definition reference in the language service's own ``findReferences``
(typescript 5.9.3, ``ts_language_service_refs.cjs``) over a program of the
consumer's files whose ``compilerOptions.paths`` maps ``@tanstack/query-core``
to the provider's ``src/index.ts``, the analyzer's options otherwise: precision
and recall at file level.

    python -m benchmarks.bench_ts_package_mapped

Writes benchmarks/results/ts-package-mapped-<consumer>-<provider>.json and .md.
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
from server.queries.references import ALL_KINDS, find_references
from server.queries.symbols import find_symbols
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence

PROVIDER, CONSUMER = "query-core", "react-query"
# (qualified name, kind) in the provider: classes, methods (one inherited from a class no entry exports),
# functions, singletons
SUBJECTS: list[tuple[str, str]] = [
    ("src.queryClient.QueryClient", "class"),
    ("src.queryClient.QueryClient.getQueryCache", "method"),
    ("src.queryClient.QueryClient.prefetchQuery", "method"),
    ("src.queryObserver.QueryObserver", "class"),
    ("src.queryObserver.QueryObserver.getOptimisticResult", "method"),
    ("src.subscribable.Subscribable.subscribe", "method"),
    ("src.mutationObserver.MutationObserver", "class"),
    ("src.queriesObserver.QueriesObserver", "class"),
    ("src.notifyManager.notifyManager", "variable"),
    ("src.utils.skipToken", "variable"),
    ("src.utils.replaceEqualDeep", "function"),
    ("src.utils.hashKey", "function"),
]
RESULTS = Path(__file__).parent / "results"
ORACLE = Path(__file__).parent / "ts_language_service_refs.cjs"


def _cli(home: Path, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
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


def _oracle(
    consumer: Path, provider: Path, files: list[str], queries: list[dict[str, Any]]
) -> tuple[str, str | None, list[set[str]]]:
    package = NPM_CORPORA[PROVIDER][0]
    config = scip_ts.project_config(consumer, files)
    compiler = config["compilerOptions"]
    assert isinstance(compiler, dict)
    options: dict[str, object] = {
        **compiler,
        "baseUrl": str(consumer),
        "paths": {package: [str(provider / "src" / "index.ts")]},
    }
    payload = {
        "root": str(consumer),
        "files": config["files"],
        "compilerOptions": options,
        "queries": queries,
        "resolve": [{"from": str(consumer / files[0]), "specifier": package}],
    }
    env = {**os.environ, "NODE_PATH": str(scip_ts.install_dir() / "node_modules")}
    proc = subprocess.run(
        ["node", str(ORACLE)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=True,
    )
    data = json.loads(proc.stdout)
    out = [
        {
            Path(f).relative_to(consumer).as_posix()
            for f, _line, _col in rows
            if Path(f).is_relative_to(consumer) and "node_modules" not in Path(f).relative_to(consumer).parts
        }
        for rows in data["results"]
    ]
    return data["version"], data["resolved"][0], out


def bench() -> dict[str, Any]:
    provider, consumer = fetch_npm_package(PROVIDER), fetch_npm_package(CONSUMER)
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-tspm-") as tmp:
        home = Path(tmp)
        if _cli(home, "init", str(provider), str(consumer), "--languages", "typescript").returncode != 0:
            raise RuntimeError("kivgraph init failed")
        cold = _index(home)
        warm = _index(home)
        layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
        rows: list[dict[str, Any]] = []
        queries: list[dict[str, Any]] = []
        with open_current(layout) as gen:
            repos = [r.name for r in gen.repositories()]
            provider_repo = next(r for r in repos if r.startswith(PROVIDER))
            consumer_repo = next(r for r in repos if r.startswith(CONSUMER))
            files = sorted(f.path for f in gen.files(consumer_repo) if f.status != "skipped")
            skipped = sum(1 for f in gen.files(provider_repo) if f.reason.startswith("generated"))
            for qn, kind in SUBJECTS:
                name = qn.rsplit(".", 1)[-1]
                (subject,) = [
                    s for s in find_symbols(gen, name, repo=provider_repo) if s.qualified_name == qn and s.kind == kind
                ]
                refs = find_references(gen, subject, kinds=ALL_KINDS, repo=consumer_repo)
                line = (provider / subject.path).read_text().splitlines()[subject.start_line - 1]
                queries.append(
                    {
                        "file": str(provider / subject.path),
                        "line": subject.start_line,
                        "col": _name_column(line, subject.start_col, name),
                    }
                )
                rows.append(
                    {
                        "symbol": qn,
                        "kind": kind,
                        "kivgraph_files": sorted({r.other.path for r in refs.rows}),
                        "rows": len(refs.rows),
                        "package_mapped_rows": sum(
                            1 for r in refs.rows if r.confidence == Confidence.EXACT_PACKAGE_MAPPED
                        ),
                    }
                )
            edges = {e.key: e.count for e in gen.breakdown().edges_by_confidence}
            unresolved = {e.key: e.count for e in gen.breakdown().unresolved_by_reason}
        ts_version, resolved, theirs = _oracle(consumer, provider, files, queries)
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
    return {
        "provider": f"{NPM_CORPORA[PROVIDER][0]}@{NPM_CORPORA[PROVIDER][1]} (source)",
        "consumer": f"{NPM_CORPORA[CONSUMER][0]}@{NPM_CORPORA[CONSUMER][1]} (source, provider's published tarball "
        "in node_modules)",
        "analyzer": f"{scip_ts.ANALYZER} {scip_ts.PINNED_VERSION}",
        "oracle": f"typescript {ts_version} LanguageService.findReferences, paths maps the package to the "
        "provider's src/index.ts",
        "oracle_resolution": resolved,
        "consumer_files": len(files),
        "provider_generated_files_skipped": skipped,
        "file_level": {"precision": round(precision, 4), "recall": round(recall, 4), "tp": tp, "fp": fp, "fn": fn},
        "edges_by_confidence": edges,
        "unresolved_by_reason": unresolved,
        "index_seconds": {
            "cold_total": cold["timings"]["total"],
            "cold_analyzer": cold["timings"].get("analyzer.typescript", 0.0),
            "warm_total": warm["timings"]["total"],
            "warm_analyzer_runs": warm["index"]["typescript"]["analyzer_runs"],
        },
        "symbols_compared": rows,
    }


def report(result: dict[str, Any]) -> str:
    fl = result["file_level"]
    lines = [
        "# Cross-repository references through a published build vs the TypeScript language service",
        "",
        "Command: `python -m benchmarks.bench_ts_package_mapped`",
        "",
        f"Provider {result['provider']}; consumer {result['consumer']}; {result['analyzer']}; oracle "
        f"{result['oracle']} (it resolves the package to `{result['oracle_resolution']}`).",
        "",
        f"File level over {len(result['symbols_compared'])} provider symbols: precision {fl['precision']:.3f}, "
        f"recall {fl['recall']:.3f} (tp {fl['tp']}, fp {fl['fp']}, fn {fl['fn']}).",
        "",
        f"Edges by confidence: {result['edges_by_confidence']}. Index: cold {result['index_seconds']['cold_total']:.1f} s "
        f"(analyzer {result['index_seconds']['cold_analyzer']:.1f} s), warm {result['index_seconds']['warm_total']:.1f} s "
        f"(analyzer runs {result['index_seconds']['warm_analyzer_runs']}).",
        "",
        "| symbol | kivgraph files | language service files | EXACT_PACKAGE_MAPPED rows | missing | extra |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in result["symbols_compared"]:
        lines.append(
            f"| {row['symbol']} | {len(row['kivgraph_files'])} | {len(row['language_service_files'])} | "
            f"{row['package_mapped_rows']}/{row['rows']} | {', '.join(row['missing']) or '-'} | "
            f"{', '.join(row['extra']) or '-'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    result = bench()
    RESULTS.mkdir(exist_ok=True)
    stem = f"ts-package-mapped-{CONSUMER}-{PROVIDER}-{NPM_CORPORA[PROVIDER][1]}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    text = report(result)
    (RESULTS / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
