"""Go: kivgraph's find_references against go/types' own reference listing, on pflag and cobra.

Fetches github.com/spf13/pflag and github.com/spf13/cobra at pinned versions
through the Go module proxy into the cache (``benchmarks.corpora``), registers
both in a temporary KIVGRAPH_HOME and indexes them with the real CLI
(``kivgraph init``; ``kivgraph index --json``) with GOMODCACHE at the cache's
module cache, so the hermetic analyzer run (GOPROXY=off) finds cobra's
dependencies. Then, for ten symbols:

- kivgraph: the files of the incoming references of the default edge kinds
  (``server.queries.references.find_references``, what the find_references
  tool answers), IMPLEMENTS rows counted apart (a declaration relation, not a
  use: go/types' ``Uses`` map never lists them);
- go/types: every file whose ``types.Info.Uses`` points at the object
  (``benchmarks/go_refs``, a small standard-library program: each package
  type-checked with its in-package test files, each external test package
  on its own);

precision and recall at file level per symbol and overall, over all files and
over non-test files (the helper type-checks test variants too, ``go list
-test``). Also the cross-repository check (cobra's
files among the consumers of pflag's FlagSet methods) and index time cold and
warm with the analyzer's share (``timings["analyzer.go"]``).

    python -m benchmarks.bench_go_agreement

Writes benchmarks/results/go-agreement.json and go-agreement.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.corpora import GO_CORPORA, fetch_go_module, go_env
from benchmarks.index_runs import index_run, to_builtins

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
GO_REFS = Path(__file__).resolve().parent / "go_refs"

# (repository, qualified name, kind, why it is in the set)
SYMBOLS: list[tuple[str, str, str, str]] = [
    ("pflag", "FlagSet.Lookup", "method", "FlagSet method used by cobra"),
    ("pflag", "FlagSet.VisitAll", "method", "FlagSet method used by cobra, passed a func literal"),
    ("pflag", "FlagSet.AddFlagSet", "method", "FlagSet method used by cobra"),
    ("pflag", "FlagSet.StringVarP", "method", "FlagSet method used by cobra"),
    ("pflag", "FlagSet.Name", "method", "same name as cobra's Command.Name"),
    ("cobra", "Command.Name", "method", "same name as pflag's FlagSet.Name"),
    ("pflag", "Value.Type", "method", "interface method, called through the interface"),
    ("pflag", "Value.String", "method", "interface method; Value is embedded in the boolFlag interface"),
    ("pflag", "Flag", "type", "type uses across both repositories"),
    ("cobra", "Command.Flags", "method", "cobra method returning *pflag.FlagSet"),
]


def _go_refs(roots: dict[str, Path], keys: list[str], env: dict[str, str]) -> dict[str, set[tuple[str, str]]]:
    """go/types' listing: key -> {(repository, relative path)}."""
    hermetic = {
        **env,
        "GOPROXY": "off",
        "GOFLAGS": "-mod=readonly",
        "GOWORK": "off",
        "CGO_ENABLED": "0",
        "GOTOOLCHAIN": "local",
    }
    with tempfile.TemporaryDirectory(prefix="kivgraph-gorefs-") as tmp:
        exe = Path(tmp) / "go_refs"
        subprocess.run(["go", "build", "-o", str(exe), "."], cwd=GO_REFS, env=hermetic, check=True, timeout=600)
        args = [str(exe)]
        for k in keys:
            args += ["-key", k]
        proc = subprocess.run(
            [*args, *(str(r) for r in roots.values())], env=hermetic, capture_output=True, text=True, timeout=1800
        )
    if proc.returncode != 0:
        raise SystemExit(f"go_refs failed: {proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)
    if data["errors"]:
        raise SystemExit(f"go_refs: {data['errors']} type errors: the reference listing would be incomplete")
    out: dict[str, set[tuple[str, str]]] = {}
    resolved = {name: root.resolve() for name, root in roots.items()}
    for key, files in data["refs"].items():
        found = out.setdefault(key, set())
        for f in files:
            for name, root in resolved.items():
                try:
                    found.add((name, Path(f).resolve().relative_to(root).as_posix()))
                    break
                except ValueError:
                    continue
    return out


def _pr(got: set[Any], truth: set[Any]) -> dict[str, Any]:
    tp = len(got & truth)
    return {
        "kivgraph": len(got),
        "go_types": len(truth),
        "agree": tp,
        "precision": round(tp / len(got), 4) if got else 1.0,
        "recall": round(tp / len(truth), 4) if truth else 1.0,
    }


def _is_test(item: tuple[str, str]) -> bool:
    return item[1].endswith("_test.go")


def compare(home: Path, roots: dict[str, Path], modules: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    from server.queries.references import find_references
    from snapshot_format.layout import resolve_layout
    from snapshot_format.reader import open_current
    from snapshot_format.vocab import Confidence, EdgeKind

    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    gen = open_current(layout)
    try:

        def subject(repo: str, qn: str, kind: str) -> Any:
            found = [s for s in gen.symbols_by_qualified_name(qn, repository=repo) if s.kind == kind]
            if len(found) != 1:
                raise SystemExit(f"{repo} {qn} ({kind}): {len(found)} declarations in the generation")
            return found[0]

        def go_key(repo: str, s: Any) -> str:
            return f"{s.package}.{s.qualified_name}"

        subjects = [(subject(r, qn, k), why) for r, qn, k, why in SYMBOLS]
        flagset_methods = _all_methods(gen, "pflag", "FlagSet.")
        keys = sorted({go_key(s.repository, s) for s, _ in subjects} | {go_key("pflag", s) for s in flagset_methods})
        truth = _go_refs(roots, keys, env)

        per_symbol, all_got, all_truth = [], set(), set()
        for s, why in subjects:
            rows = find_references(gen, s).rows
            got = {(r.other.repository, r.other.path) for r in rows if r.kind != EdgeKind.IMPLEMENTS}
            implements = {(r.other.repository, r.other.path) for r in rows if r.kind == EdgeKind.IMPLEMENTS}
            key = go_key(s.repository, s)
            want = truth.get(key, set())
            confidences: dict[str, int] = {}
            for r in rows:
                name = Confidence(r.confidence).name
                confidences[name] = confidences.get(name, 0) + 1
            entry = {
                "symbol": f"{s.repository}:{s.qualified_name}",
                "kind": s.kind,
                "go_types_key": key,
                "why": why,
                "all_files": _pr(got, want),
                "non_test_files": _pr({g for g in got if not _is_test(g)}, {w for w in want if not _is_test(w)}),
                "only_kivgraph": sorted(f"{r}:{p}" for r, p in got - want),
                "only_go_types": sorted(f"{r}:{p}" for r, p in want - got),
                "implements_files": len(implements - got),
                "rows_by_confidence": confidences,
            }
            per_symbol.append(entry)
            all_got |= {(key, *g) for g in got}
            all_truth |= {(key, *w) for w in want}

        # find_cross_repo_consumers-style: cobra's files among the incoming references of FlagSet methods
        cobra_got: set[str] = set()
        cobra_truth: set[str] = set()
        for s in flagset_methods:
            for r in find_references(gen, s).rows:
                if r.other.repository == "cobra" and r.kind != EdgeKind.IMPLEMENTS:
                    cobra_got.add(r.other.path)
            cobra_truth |= {p for repo, p in truth.get(go_key("pflag", s), set()) if repo == "cobra"}
        cross = {
            "flagset_methods": len(flagset_methods),
            "all_files": _pr(cobra_got, cobra_truth),
            "non_test_files": _pr(
                {p for p in cobra_got if not p.endswith("_test.go")},
                {p for p in cobra_truth if not p.endswith("_test.go")},
            ),
            "cobra_files": sorted(cobra_got),
            "only_kivgraph": sorted(cobra_got - cobra_truth),
            "only_go_types": sorted(cobra_truth - cobra_got),
        }
        analyses = {
            r.name: [to_builtins(a) for a in r.analyses] for r in (gen.repository(n) for n in roots) if r is not None
        }
    finally:
        gen.close()
    return {
        "symbols": per_symbol,
        "overall": {
            "all_files": _pr(all_got, all_truth),
            "non_test_files": _pr(
                {g for g in all_got if not g[2].endswith("_test.go")},
                {w for w in all_truth if not w[2].endswith("_test.go")},
            ),
        },
        "cross_repository": cross,
        "analyses": analyses,
    }


def _all_methods(gen: Any, repo: str, prefix: str) -> list[Any]:
    """Every method of ``repo`` whose qualified name starts with ``prefix``."""
    out = []
    for f in gen.files(repo):
        if f.status != "indexed":
            continue
        out.extend(
            s
            for s in gen.declarations(repo, f.path)
            if s.kind == "method" and s.qualified_name.startswith(prefix) and s.path == f.path
        )
    return out


def bench() -> dict[str, Any]:
    roots = {name: fetch_go_module(name) for name in ("pflag", "cobra")}
    env = go_env()
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-go-") as tmp:
        home = Path(tmp)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kivgraph_cli",
                "init",
                *(f"--repository={n}={p}" for n, p in roots.items()),
                "--languages",
                "go",
            ],
            cwd=REPO_ROOT,
            env={**env, "KIVGRAPH_HOME": str(home)},
            check=True,
            capture_output=True,
        )
        cold = index_run(home, env)
        warm = [index_run(home, env) for _ in range(2)]
        warm_best = min(warm, key=lambda r: r["wall_seconds"])
        # analyzer cold, fact cache warm: only the go/types runs redone
        shutil.rmtree(home / "state" / "factcache", ignore_errors=True)
        refacts = index_run(home, env)
        agreement = compare(home, roots, {n: GO_CORPORA[n][0] for n in roots}, env)
    go_version = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()

    def timing(run: dict[str, Any]) -> dict[str, Any]:
        t = run["timings"]
        return {
            "wall_seconds": run["wall_seconds"],
            "total": t.get("total"),
            "analyzer_go": t.get("analyzer.go"),
            "analyzer_share": round(t.get("analyzer.go", 0) / t["total"], 3) if t.get("total") else None,
            "phases": t,
            "analyzer_runs": run["index"]["go"]["analyzer_runs"],
            "analyzer_cache_hits": run["index"]["go"]["analyzer_cache_hits"],
            "fact_cache": run["cache"],
        }

    return {
        "benchmark": "go-agreement",
        "corpora": {
            n: {"module": GO_CORPORA[n][0], "version": GO_CORPORA[n][1], "path": str(p)} for n, p in roots.items()
        },
        "machine": {
            "python": platform.python_version(),
            "go": go_version,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "counts": cold["counts"],
        "index": cold["index"],
        "time": {"cold": timing(cold), "warm": timing(warm_best), "fact_cache_dropped": timing(refacts)},
        **agreement,
    }


def report(d: dict[str, Any]) -> str:
    o, c = d["overall"], d["cross_repository"]
    lines = [
        "# Go: find_references against go/types, pflag and cobra",
        "",
        ", ".join(f"{n} {v['module']}@{v['version']}" for n, v in d["corpora"].items())
        + f"; {d['machine']['go']}, {d['machine']['cpus']} CPUs. "
        f"{d['counts']['files']} files, {d['counts']['symbols']} symbols, {d['counts']['edges']} edges, "
        f"{d['counts']['unresolved']} unresolved. Produced by `python -m benchmarks.bench_go_agreement`.",
        "",
        "File level: kivgraph = files of the incoming references of the default edge kinds (IMPLEMENTS rows "
        "counted apart); go/types = files whose `types.Info.Uses` points at the object (benchmarks/go_refs, "
        "test files type-checked too); the analyzer type-checks test variants as well (`go list -deps -test`).",
        "",
        "| symbol | kind | kivgraph files | go/types files | precision | recall | non-test precision | non-test recall |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in d["symbols"]:
        a, n = s["all_files"], s["non_test_files"]
        lines.append(
            f"| {s['symbol']} | {s['kind']} | {a['kivgraph']} | {a['go_types']} | {a['precision']} | "
            f"{a['recall']} | {n['precision']} | {n['recall']} |"
        )
    a, n = o["all_files"], o["non_test_files"]
    lines += [
        f"| **overall** | | {a['kivgraph']} | {a['go_types']} | **{a['precision']}** | **{a['recall']}** | "
        f"**{n['precision']}** | **{n['recall']}** |",
        "",
        "Disagreements:",
        "",
    ]
    any_dis = False
    for s in d["symbols"]:
        if s["only_kivgraph"] or s["only_go_types"]:
            any_dis = True
            lines.append(
                f"- {s['symbol']}: only kivgraph {s['only_kivgraph'] or '-'}; only go/types {s['only_go_types'] or '-'}"
            )
    if not any_dis:
        lines.append("- none")
    ca, cn = c["all_files"], c["non_test_files"]
    lines += [
        "",
        f"Cross-repository: cobra's files among the incoming references of pflag's {c['flagset_methods']} FlagSet "
        f"methods: kivgraph {ca['kivgraph']}, go/types {ca['go_types']}, precision {ca['precision']}, recall "
        f"{ca['recall']} (non-test: {cn['precision']} / {cn['recall']}). Files: {', '.join(c['cobra_files'])}.",
        "",
        "| index run | wall s | pipeline total s | analyzer.go s | analyzer share | analyzer runs / cache hits |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, t in d["time"].items():
        lines.append(
            f"| {name} | {t['wall_seconds']} | {t['total']} | {t['analyzer_go']} | {t['analyzer_share']} | "
            f"{t['analyzer_runs']} / {t['analyzer_cache_hits']} |"
        )
    lines += [
        "",
        "Wall time includes interpreter start-up of the child process; cold = fresh state directory "
        "(the helper binary already built in the cache).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    data = bench()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "go-agreement.json").write_text(json.dumps(data, indent=2) + "\n")
    text = report(data)
    (RESULTS / "go-agreement.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
