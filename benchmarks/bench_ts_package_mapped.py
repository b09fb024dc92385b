"""Cross-repository references through a published npm build against the TypeScript language service.

Two pairs. ``5.59.0``: ``@tanstack/query-core``'s source (the provider,
registered) and ``@tanstack/react-query``'s source (the consumer, registered),
whose ``node_modules/@tanstack/query-core`` holds query-core's *published*
tarball (bundled, chunked ``.d.ts``, no declaration maps). ``chunked``: the
same at 5.108.4, built with tsdown, whose ``build/modern`` keeps declarations
no entry exports in hashed chunk files (``subscribable-D2lAzdDi.d.ts``,
``removable-B1nFbgZm.d.ts``, the shared ``hydration-DArUEfp7.d.ts``), with a
second, small consumer of ours (``benchmarks/ts_consumers/query-core-chunks``:
caches, observers, managers and mutations used through those chunks).
``benchmarks.corpora`` installs the tarballs with react-query's ``@types``
dependencies, all fetched into the cache, never committed. kivgraph indexes
each pair cold and warm through the real CLI. For each provider symbol, the
consumer files holding kivgraph's incoming references (every reference kind,
EXACT_PACKAGE_MAPPED edges across the repositories) are compared with the
consumer files holding a non-definition reference in the language service's own
``findReferences`` (typescript 5.9.3, ``ts_language_service_refs.cjs``) over a
program of the consumer's files whose ``compilerOptions.paths`` maps
``@tanstack/query-core`` to the provider's ``src/index.ts``, the analyzer's
options otherwise: precision and recall at file level. Each symbol's row names
the hashed chunk files of the installed build that declare it.

    python -m benchmarks.bench_ts_package_mapped [--pair 5.59.0|chunked]

Writes benchmarks/results/ts-package-mapped-<consumer>-<provider>.json and .md per pair.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.bench_typescript_agreement import file_level, oracle_query
from benchmarks.corpora import NPM_CORPORA, fetch_npm_package
from indexer.languages.typescript import analyzer as scip_ts
from server.queries.references import ALL_KINDS, find_references
from server.queries.symbols import find_symbols
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence

PACKAGE = "@tanstack/query-core"
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
# declared, in the tsdown build, only in hashed chunk files no entry exports
CHUNK_SUBJECTS: list[tuple[str, str]] = [
    ("src.subscribable.Subscribable.hasListeners", "method"),
    ("src.removable.Removable.destroy", "method"),
    ("src.removable.Removable.gcTime", "property"),
    ("src.query.Query.fetch", "method"),
    ("src.queryCache.QueryCache.getAll", "method"),
    ("src.mutationCache.MutationCache.getAll", "method"),
    ("src.onlineManager.OnlineManager.isOnline", "method"),
]
SMALL_CONSUMER = Path(__file__).parent / "ts_consumers" / "query-core-chunks"
# pair -> (provider corpus, consumer corpora; "small" is SMALL_CONSUMER with the provider's tarball installed)
PAIRS: dict[str, tuple[str, list[str], list[tuple[str, str]]]] = {
    "5.59.0": ("query-core", ["react-query"], SUBJECTS),
    "chunked": ("query-core-chunked", ["react-query-chunked", "small"], SUBJECTS + CHUNK_SUBJECTS),
}
# Why a row's files differ, where they do for a reason the comparison cannot see
NOTES: dict[str, str] = {
    "src.removable.Removable.destroy": "`query.destroy()` calls `Query.destroy`, which overrides `Removable.destroy`: "
    "kivgraph binds the call to the override (EXACT_PACKAGE_MAPPED to `src.query.Query.destroy`), the language "
    "service counts it as a reference of the base method too"
}
RESULTS = Path(__file__).parent / "results"
ORACLE = Path(__file__).parent / "ts_language_service_refs.cjs"
_CHUNK = re.compile(r"-[A-Za-z0-9_-]{8}\.d\.(c|m)?ts$")


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


def _oracle(
    consumer: Path, provider: Path, files: list[str], queries: list[dict[str, Any]]
) -> tuple[str, str | None, list[set[str]]]:
    config = scip_ts.project_config(consumer, files)
    compiler = config["compilerOptions"]
    assert isinstance(compiler, dict)
    options: dict[str, object] = {
        **compiler,
        "baseUrl": str(consumer),
        "paths": {PACKAGE: [str(provider / "src" / "index.ts")]},
    }
    payload = {
        "root": str(consumer),
        "files": config["files"],
        "compilerOptions": options,
        "queries": queries,
        "resolve": [{"from": str(consumer / files[0]), "specifier": PACKAGE}],
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


def _small_consumer(tmp: Path, provider_corpus: str) -> Path:
    """Our small consumer, with the provider's published tarball installed as npm would."""
    dest = tmp / "query-core-chunks"
    shutil.copytree(SMALL_CONSUMER, dest)
    shutil.copytree(
        fetch_npm_package(provider_corpus),
        dest / "node_modules" / PACKAGE,
        ignore=shutil.ignore_patterns(".kivgraph-complete"),
    )
    return dest


def _chunk_files(installed: Path, top: str) -> list[str]:
    """The hashed chunk files of the installed build that declare ``top``."""
    declares = re.compile(rf"^(?:declare |export )*(?:abstract )?(?:class|interface|function|const|type|enum) {top}\b")
    out = []
    for f in sorted((installed / "build" / "modern").glob("*.d.ts")):
        if _CHUNK.search(f.name) and any(declares.match(line) for line in f.read_text().splitlines()):
            out.append(f"build/modern/{f.name}")
    return out


def _label(corpus: str) -> str:
    return (
        "small consumer (benchmarks/ts_consumers/query-core-chunks)"
        if corpus == "small"
        else (f"{NPM_CORPORA[corpus][0]}@{NPM_CORPORA[corpus][1]} (source)")
    )


def bench(pair: str) -> dict[str, Any]:
    provider_corpus, consumer_corpora, subjects = PAIRS[pair]
    provider = fetch_npm_package(provider_corpus)
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-tspm-") as tmp:
        consumers = {
            c: _small_consumer(Path(tmp), provider_corpus) if c == "small" else fetch_npm_package(c)
            for c in consumer_corpora
        }
        home = Path(tmp) / "home"
        roots = [str(provider), *map(str, consumers.values())]
        if _cli(home, "init", *roots, "--languages", "typescript").returncode != 0:
            raise RuntimeError("kivgraph init failed")
        cold = _index(home)
        warm = _index(home)
        layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
        compared: dict[str, Any] = {}
        with open_current(layout) as gen:
            by_root = {Path(r.root).resolve(): r.name for r in gen.repositories()}
            provider_repo = by_root[provider.resolve()]
            skipped = sum(1 for f in gen.files(provider_repo) if f.reason.startswith("generated"))
            found = {}
            for qn, kind in subjects:
                name = qn.rsplit(".", 1)[-1]
                (subject,) = [
                    s for s in find_symbols(gen, name, repo=provider_repo) if s.qualified_name == qn and s.kind == kind
                ]
                found[qn] = subject
            for corpus, root in consumers.items():
                consumer_repo = by_root[root.resolve()]
                files = sorted(f.path for f in gen.files(consumer_repo) if f.status != "skipped")
                rows: list[dict[str, Any]] = []
                queries: list[dict[str, Any]] = []
                for qn, kind in subjects:
                    subject = found[qn]
                    name = qn.rsplit(".", 1)[-1]
                    refs = find_references(gen, subject, kinds=ALL_KINDS, repo=consumer_repo)
                    queries.append(oracle_query(provider, subject))
                    rows.append(
                        {
                            "symbol": qn,
                            "kind": kind,
                            "published_in_chunks": _chunk_files(root / "node_modules" / PACKAGE, qn.split(".")[2]),
                            "kivgraph_files": sorted({r.other.path for r in refs.rows}),
                            "rows": len(refs.rows),
                            "package_mapped_rows": sum(
                                1 for r in refs.rows if r.confidence == Confidence.EXACT_PACKAGE_MAPPED
                            ),
                        }
                    )
                unresolved: dict[str, int] = {}
                for u in gen.unresolved_in(consumer_repo):
                    if u.reason.startswith(("PACKAGE_", "AMBIGUOUS_PACKAGE", "PROVIDER_", "DECLARATION_")):
                        unresolved[u.reason] = unresolved.get(u.reason, 0) + 1
                compared[corpus] = {
                    "root": root,
                    "files": files,
                    "rows": rows,
                    "queries": queries,
                    "unresolved": unresolved,
                }
            edges = {e.key: e.count for e in gen.breakdown().edges_by_confidence}
            unresolved_all = {e.key: e.count for e in gen.breakdown().unresolved_by_reason}
        results = []
        for corpus, c in compared.items():
            ts_version, resolved, theirs = _oracle(c["root"], provider, c["files"], c["queries"])
            results.append(
                {
                    "consumer": _label(corpus) + " with the provider's published tarball in node_modules",
                    "consumer_files": len(c["files"]),
                    "oracle_resolution": resolved,
                    "file_level": file_level(c["rows"], theirs),
                    "unresolved_package_rows": c["unresolved"],
                    "symbols_compared": c["rows"],
                }
            )
    return {
        "pair": pair,
        "provider": _label(provider_corpus),
        "analyzer": f"{scip_ts.ANALYZER} {scip_ts.PINNED_VERSION}",
        "oracle": f"typescript {ts_version} LanguageService.findReferences, paths maps the package to the "
        "provider's src/index.ts",
        "provider_generated_files_skipped": skipped,
        "edges_by_confidence": edges,
        "unresolved_by_reason": unresolved_all,
        "index_seconds": {
            "cold_total": cold["timings"]["total"],
            "cold_analyzer": cold["timings"].get("analyzer.typescript", 0.0),
            "warm_total": warm["timings"]["total"],
            "warm_analyzer_runs": warm["index"]["typescript"]["analyzer_runs"],
        },
        "consumers": results,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        "# Cross-repository references through a published build vs the TypeScript language service",
        "",
        f"Command: `python -m benchmarks.bench_ts_package_mapped --pair {result['pair']}`",
        "",
        f"Provider {result['provider']}, {result['provider_generated_files_skipped']} files of its published build "
        f"skipped as generated; {result['analyzer']}; oracle {result['oracle']}.",
        "",
        f"Edges by confidence: {result['edges_by_confidence']}. Index: cold {result['index_seconds']['cold_total']:.1f} s "
        f"(analyzer {result['index_seconds']['cold_analyzer']:.1f} s), warm {result['index_seconds']['warm_total']:.1f} s "
        f"(analyzer runs {result['index_seconds']['warm_analyzer_runs']}).",
    ]
    for c in result["consumers"]:
        fl = c["file_level"]
        lines += [
            "",
            f"## {c['consumer']}",
            "",
            f"{c['consumer_files']} files; the oracle resolves the package to `{c['oracle_resolution']}`. File level "
            f"over {len(c['symbols_compared'])} provider symbols: precision {fl['precision']:.3f}, recall "
            f"{fl['recall']:.3f} (tp {fl['tp']}, fp {fl['fp']}, fn {fl['fn']}). Unresolved package rows: "
            f"{c['unresolved_package_rows'] or 'none'}.",
            "",
            "| symbol | declared in hashed chunks | kivgraph files | language service files "
            "| EXACT_PACKAGE_MAPPED rows | missing | extra |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in c["symbols_compared"]:
            lines.append(
                f"| {row['symbol']} | {', '.join(row['published_in_chunks']) or '-'} | {len(row['kivgraph_files'])} | "
                f"{len(row['language_service_files'])} | {row['package_mapped_rows']}/{row['rows']} | "
                f"{', '.join(row['missing']) or '-'} | {', '.join(row['extra']) or '-'} |"
            )
        notes = [
            f"- {row['symbol']}: {NOTES[row['symbol']]}"
            for row in c["symbols_compared"]
            if (row["missing"] or row["extra"]) and row["symbol"] in NOTES
        ]
        if notes:
            lines += ["", *notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--pair", choices=sorted(PAIRS), action="append", help="default: every pair")
    args = parser.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    for pair in args.pair or list(PAIRS):
        result = bench(pair)
        provider_corpus, consumers, _ = PAIRS[pair]
        version = NPM_CORPORA[provider_corpus][1]
        stem = f"ts-package-mapped-{'-'.join(c.removesuffix('-chunked') for c in consumers)}-query-core-{version}"
        (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
        text = report(result)
        (RESULTS / f"{stem}.md").write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
