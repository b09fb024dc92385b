"""Go: kivgraph's find_references and IMPLEMENTS against go/types' own answers: pflag, cobra; golang-lru, gods.

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

Generics: github.com/hashicorp/golang-lru/v2 (its ``simplelru.LRUCache[K, V]`` is a generic interface
that the generic ``simplelru.LRU``, ``expirable.LRU`` and ``lru.Cache`` implement, and
``TwoQueueCache`` calls through) and github.com/emirpasic/gods/v2 (containers behind generic
interfaces that embed one another), pinned, are each indexed in a home of their own and compared on

- IMPLEMENTS, type level and method level: kivgraph's incoming IMPLEMENTS rows of every interface
  (and interface method) the module declares against go_refs ``-implements``, which lists a pair when
  go/types' ``types.Implements`` holds for a witness instantiation (type arguments drawn from int,
  string and the type's own type parameters, constraints checked), non-test packages on both sides;
  relations the helper left undecided (``DISPATCH_UNDECIDED`` rows) are counted apart;
- references for a few symbols each, direct rows as above, and the dispatch rows of each method (callers
  through an interface method it implements) against the files whose ``Uses`` point at the interface
  methods go/types says it implements; and each symbol's blast-radius verdict.

Interfaces outside the graph, on every corpus (``compare_outside``, go_refs ``-outside``): over the
interface methods of the standard library and of unregistered modules that the code uses, the
methods of non-test types that implement them (EXTERNAL_IMPLEMENTS rows against ``types.Implements``)
and, per such method, the files of its dispatch rows through them against the files whose ``Uses``
point there.

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


# corpus -> its symbols: (package (import path suffix, "" = the module's root package), qualified name, kind, why)
GENERIC_SYMBOLS: dict[str, list[tuple[str, str, str, str]]] = {}
GENERIC_SYMBOLS["golang-lru"] = [
    ("simplelru", "LRUCache", "type", "generic interface, a field type of TwoQueueCache"),
    ("simplelru", "LRUCache.Get", "method", "generic interface method, called through LRUCache[K, V] fields"),
    ("simplelru", "LRUCache.Add", "method", "generic interface method, called through LRUCache[K, struct{}] too"),
    ("simplelru", "LRU.Get", "method", "generic type's method: direct calls, and calls through LRUCache.Get"),
    ("expirable", "LRU.Add", "method", "same name in another package; implements LRUCache.Add"),
    ("", "Cache.Get", "method", "the root package's generic Cache, which implements LRUCache too"),
    ("simplelru", "NewLRU", "func", "generic constructor, instantiated explicitly and by inference"),
    ("internal", "LruList.PushFront", "method", "generic internal list, used by both LRUs"),
]
GENERIC_SYMBOLS["gods"] = [
    ("containers", "Container.Values", "method", "generic interface method, called through Container[T]"),
    ("lists/arraylist", "List.Values", "method", "one of many implementations of Container.Values"),
    ("maps/treemap", "Map.Put", "method", "generic map over a generic red-black tree"),
]


def _go_refs(
    roots: dict[str, Path], keys: list[str], env: dict[str, str], *, implements: bool = False
) -> tuple[dict[str, set[tuple[str, str]]], dict[str, Any]]:
    """go/types' listing: key -> {(repository, relative path)}, and the raw output (implementation pairs, and the
    uses and implementations of the interfaces outside the modules, ``-outside``)."""
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
        args = [str(exe), "-outside", *(["-implements"] if implements else [])]
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
    return {key: _relative(roots, files) for key, files in data["refs"].items()}, data


def _relative(roots: dict[str, Path], files: list[str]) -> set[tuple[str, str]]:
    """Absolute files as (repository, path relative to its root)."""
    resolved = {name: root.resolve() for name, root in roots.items()}
    found: set[tuple[str, str]] = set()
    for f in files:
        for name, root in resolved.items():
            try:
                found.add((name, Path(f).resolve().relative_to(root).as_posix()))
                break
            except ValueError:
                continue
    return found


def compare_outside(gen: Any, roots: dict[str, Path], raw: dict[str, Any]) -> dict[str, Any]:
    """Interfaces outside the graph against go/types (go_refs ``-outside``), over the outside interface methods
    the modules use: the methods each non-test type implements (kivgraph's EXTERNAL_IMPLEMENTS rows against
    types.Implements on a witness instantiation), and per method the files of its dispatch rows through them
    against the files whose ``Uses`` point at the interface methods go/types says it implements; with the
    methods whose blast radius is a lower bound because their type is converted to such an interface."""
    from server.queries import traverse
    from server.queries.references import find_references
    from server.tools.traversal import get_blast_radius
    from snapshot_format.vocab import EXTERNAL_CONVERSION

    used = {key: _relative(roots, files) for key, files in raw["outside_refs"].items()}
    truth_pairs = {(i, m) for i, m in raw["outside_implements"] if i in used}
    methods = [
        s
        for repo in roots
        for f in gen.files(repo)
        if f.status == "indexed" and not f.path.endswith("_test.go")
        for s in gen.declarations(repo, f.path)
        if s.path == f.path and s.kind == "method"
    ]
    got_pairs: set[tuple[str, str]] = set()
    per_method: dict[str, tuple[set[tuple[str, str]], set[tuple[str, str]]]] = {}
    converted = 0
    for s in methods:
        key = f"{s.package}.{s.qualified_name}"
        names = set(traverse.outside_names(gen, s))
        got_pairs |= {(n, key) for n in names if n in used}
        through = {i for i, m in truth_pairs if m == key}
        if not names and not through:
            continue
        rows = find_references(gen, s).rows
        got = {(r.other.repository, r.other.path) for r in rows if r.via in names}
        want: set[tuple[str, str]] = set()
        for i in through:
            want |= used[i]
        per_method[key] = (got, want)
        spots = get_blast_radius(gen, {"stable_key": s.key, "view": "full"})["completeness"].get("blind_spots", [])
        converted += any(b["reason"] == EXTERNAL_CONVERSION for b in spots)
    got_files = sum(len(g) for g, _w in per_method.values())
    want_files = sum(len(w) for _g, w in per_method.values())
    agree = sum(len(g & w) for g, w in per_method.values())
    return {
        "interface_methods_used": len(used),
        "call_files": len(set().union(*used.values())) if used else 0,
        "pairs": _pr(got_pairs, truth_pairs),
        "pairs_only_kivgraph": sorted(f"{m} implements {i}" for i, m in got_pairs - truth_pairs),
        "pairs_only_go_types": sorted(f"{m} implements {i}" for i, m in truth_pairs - got_pairs),
        "methods": len(per_method),
        "dispatch_files": {
            "kivgraph": got_files,
            "go_types": want_files,
            "agree": agree,
            "precision": round(agree / got_files, 4) if got_files else 1.0,
            "recall": round(agree / want_files, 4) if want_files else 1.0,
        },
        "dispatch_disagreements": sorted(
            f"{k}: only kivgraph {sorted(f'{r}:{p}' for r, p in g - w) or '-'}, "
            f"only go/types {sorted(f'{r}:{p}' for r, p in w - g) or '-'}"
            for k, (g, w) in per_method.items()
            if g != w
        ),
        "lower_bound_by_conversion": converted,
    }


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
        truth, raw = _go_refs(roots, keys, env, implements=True)
        outside = compare_outside(gen, roots, raw)
        type_relations = compare_implements(gen, list(roots), raw)

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
        "implements": type_relations,
        "outside": outside,
        "analyses": analyses,
    }


def compare_generic(home: Path, repo: str, root: Path, env: dict[str, str]) -> dict[str, Any]:
    """IMPLEMENTS and references of one generic corpus against go/types (see the module docstring)."""
    from server.queries import traverse
    from server.queries.references import find_references
    from server.tools.traversal import get_blast_radius
    from snapshot_format.layout import resolve_layout
    from snapshot_format.reader import open_current
    from snapshot_format.vocab import EdgeKind

    module = GO_CORPORA[repo][0]
    gen = open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)}))
    try:

        def key(s: Any) -> str:
            return f"{s.package}.{s.qualified_name}"

        def subject(package: str, qn: str, kind: str) -> Any:
            want = f"{module}/{package}" if package else module
            found = [
                s for s in gen.symbols_by_qualified_name(qn, repository=repo) if s.kind == kind and s.package == want
            ]
            if len(found) != 1:
                raise SystemExit(f"{repo} {want}.{qn} ({kind}): {len(found)} declarations in the generation")
            return found[0]

        subjects = [(subject(p, qn, k), why) for p, qn, k, why in GENERIC_SYMBOLS[repo]]
        _ifaces, iface_methods = declared_interfaces(gen, [repo])
        keys = sorted({key(s) for s, _ in subjects} | {key(m) for m in iface_methods})
        truth, raw = _go_refs({repo: root}, keys, env, implements=True)
        outside = compare_outside(gen, {repo: root}, raw)
        implements = compare_implements(gen, [repo], raw)
        method_truth = {(i, m) for i, m in raw["method_implements"]}
        per_symbol = []
        for s, why in subjects:
            rows = find_references(gen, s).rows
            direct = {(r.other.repository, r.other.path) for r in rows if not r.via and r.kind != EdgeKind.IMPLEMENTS}
            outside_via = set(traverse.outside_names(gen, s))
            dispatch = {(r.other.repository, r.other.path) for r in rows if r.via and r.via not in outside_via}
            through = sorted({i for i, m in method_truth if m == key(s)})
            dispatch_truth: set[tuple[str, str]] = set()
            for i in through:
                dispatch_truth |= truth.get(i, set())
            blast = get_blast_radius(gen, {"stable_key": s.key, "view": "full"})
            per_symbol.append(
                {
                    "symbol": f"{repo}:{(s.package.removeprefix(module).lstrip('/') + '.').lstrip('.')}{s.qualified_name}",
                    "kind": s.kind,
                    "go_types_key": key(s),
                    "why": why,
                    "all_files": _pr(direct, truth.get(key(s), set())),
                    "non_test_files": _pr(
                        {g for g in direct if not _is_test(g)}, {w for w in truth.get(key(s), set()) if not _is_test(w)}
                    ),
                    "only_kivgraph": sorted(p for _r, p in direct - truth.get(key(s), set())),
                    "only_go_types": sorted(p for _r, p in truth.get(key(s), set()) - direct),
                    "implements_through": through,
                    "dispatch_files": _pr(dispatch, dispatch_truth),
                    "blast_radius": {
                        "total": blast["total"],
                        "dispatch_rows": sum(1 for r in blast["results"]["symbols"] if r.get("dispatch_via")),
                        "verdict": blast["completeness"]["verdict"],
                        "dispatch_unknown": blast["completeness"].get("dispatch_unknown", ""),
                    },
                }
            )
    finally:
        gen.close()
    return {"implements": implements, "symbols": per_symbol, "overall": _overall(per_symbol), "outside": outside}


def declared_interfaces(gen: Any, repos: list[str]) -> tuple[list[Any], list[Any]]:
    """The interfaces the repositories' non-test files declare, and their methods."""
    declared = [
        s
        for repo in repos
        for f in gen.files(repo)
        if f.status == "indexed" and not f.path.endswith("_test.go")
        for s in gen.declarations(repo, f.path)
        if s.path == f.path
    ]
    ifaces = [s for s in declared if s.kind == "type" and s.signature.endswith(" interface")]
    iface_keys = {s.key for s in ifaces}
    return ifaces, [s for s in declared if s.kind == "method" and s.container in iface_keys]


def compare_implements(gen: Any, repos: list[str], raw: dict[str, Any]) -> dict[str, Any]:
    """kivgraph's incoming IMPLEMENTS rows of every interface (and interface method) the repositories declare,
    non-test types only, against go_refs ``-implements`` over the same modules; undecided relations apart."""
    from server.queries.references import find_references
    from snapshot_format.vocab import DISPATCH_UNDECIDED, EdgeKind

    implements_only = frozenset({EdgeKind.IMPLEMENTS})
    ifaces, iface_methods = declared_interfaces(gen, repos)

    def implemented(of: list[Any]) -> set[tuple[str, str]]:
        return {
            (f"{i.package}.{i.qualified_name}", f"{r.other.package}.{r.other.qualified_name}")
            for i in of
            for r in find_references(gen, i, kinds=implements_only).rows
            if not r.other.path.endswith("_test.go")
        }

    type_truth = {(i, t) for i, t in raw["implements"]}
    # methods of the declared interfaces (one embedded from outside the graph, flag.Value in pflag's goBoolFlag, is
    # compared with the outside interfaces)
    declared = {f"{m.package}.{m.qualified_name}" for m in iface_methods}
    method_truth = {(i, m) for i, m in raw["method_implements"] if i in declared}
    type_got, method_got = implemented(ifaces), implemented(iface_methods)
    undecided = sorted(
        (u.path, u.line, u.package + "." + u.name, u.detail)
        for repo in repos
        for u in gen.unresolved_in(repo)
        if u.reason == DISPATCH_UNDECIDED
    )
    return {
        "interfaces": len(ifaces),
        "interface_methods": len(iface_methods),
        "types": _pr(type_got, type_truth),
        "methods": _pr(method_got, method_truth),
        "pairs": sorted(f"{t} implements {i}" for i, t in type_got | type_truth),
        "only_kivgraph": sorted(f"{t} implements {i}" for i, t in type_got - type_truth),
        "only_go_types": sorted(f"{t} implements {i}" for i, t in type_truth - type_got),
        "methods_only_kivgraph": sorted(f"{m} implements {i}" for i, m in method_got - method_truth),
        "methods_only_go_types": sorted(f"{m} implements {i}" for i, m in method_truth - method_got),
        "cross_repository": sorted(
            f"{t} implements {i}"
            for i, t in type_got
            if not any(t.startswith(GO_CORPORA[r][0]) and i.startswith(GO_CORPORA[r][0]) for r in repos)
        ),
        "undecided": [f"{p}:{line} {name}: {detail}" for p, line, name, detail in undecided],
    }


def _overall(per_symbol: list[dict[str, Any]]) -> dict[str, Any]:
    """Summed counts over the symbols (each symbol's file sets are disjoint keys)."""
    out: dict[str, Any] = {}
    for field in ("all_files", "non_test_files", "dispatch_files"):
        got = sum(s[field]["kivgraph"] for s in per_symbol)
        truth = sum(s[field]["go_types"] for s in per_symbol)
        agree = sum(s[field]["agree"] for s in per_symbol)
        out[field] = {
            "kivgraph": got,
            "go_types": truth,
            "agree": agree,
            "precision": round(agree / got, 4) if got else 1.0,
            "recall": round(agree / truth, 4) if truth else 1.0,
        }
    return out


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


def _init(home: Path, roots: dict[str, Path], env: dict[str, str]) -> None:
    """``kivgraph init`` of the Go repositories in a benchmark's KIVGRAPH_HOME."""
    repositories = [f"--repository={n}={p}" for n, p in roots.items()]
    subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "init", *repositories, "--languages", "go"],
        cwd=REPO_ROOT,
        env={**env, "KIVGRAPH_HOME": str(home)},
        check=True,
        capture_output=True,
    )


def timing(run: dict[str, Any]) -> dict[str, Any]:
    """An index run's wall and pipeline times, the analyzer's share and the cache figures."""
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


def _generic_corpus(name: str, env: dict[str, str]) -> dict[str, Any]:
    """Fetch, index (a home of its own) and compare one generic corpus."""
    root = fetch_go_module(name)
    with tempfile.TemporaryDirectory(prefix=f"kivgraph-bench-go-{name}-") as tmp:
        home = Path(tmp)
        _init(home, {name: root}, env)
        run = index_run(home, env)
        compared = compare_generic(home, name, root, env)
    module, version = GO_CORPORA[name]
    return {
        "corpus": {"name": name, "module": module, "version": version, "path": str(root)},
        "counts": run["counts"],
        "time": timing(run),
        **compared,
    }


def bench() -> dict[str, Any]:
    roots = {name: fetch_go_module(name) for name in ("pflag", "cobra")}
    env = go_env()
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-go-") as tmp:
        home = Path(tmp)
        _init(home, roots, env)
        cold = index_run(home, env)
        warm = [index_run(home, env) for _ in range(2)]
        warm_best = min(warm, key=lambda r: r["wall_seconds"])
        # analyzer cold, fact cache warm: only the go/types runs redone
        shutil.rmtree(home / "state" / "factcache", ignore_errors=True)
        refacts = index_run(home, env)
        agreement = compare(home, roots, {n: GO_CORPORA[n][0] for n in roots}, env)
    generic = [_generic_corpus(name, env) for name in GENERIC_SYMBOLS]
    go_version = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()

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
        "generic": generic,
    }


def report(d: dict[str, Any]) -> str:
    o, c = d["overall"], d["cross_repository"]
    lines = [
        "# Go: find_references and IMPLEMENTS against go/types: pflag and cobra; generics on golang-lru and gods",
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
        *_implements_report(d["implements"], "pflag and cobra declare"),
        "Pairs across the two repositories (a pflag type implementing a cobra interface: pflag cannot see cobra, "
        "so cobra's go/types run pairs them): " + ("; ".join(d["implements"]["cross_repository"]) or "none") + ".",
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
        "",
        *_outside_report(d["outside"], "pflag and cobra"),
        *(line for g in d["generic"] for line in _generic_report(g)),
    ]
    return "\n".join(lines) + "\n"


def _generic_report(g: dict[str, Any]) -> list[str]:
    im, c = g["implements"], g["counts"]
    lines = [
        f"## Generics: {g['corpus']['module']}@{g['corpus']['version']}",
        "",
        f"{c['files']} files, {c['symbols']} symbols, {c['edges']} edges, {c['unresolved']} unresolved; "
        f"indexed cold in {g['time']['wall_seconds']} s (analyzer.go {g['time']['analyzer_go']} s).",
        "",
        *_implements_report(im, "the module declares"),
        "References (direct rows against `types.Info.Uses`, as above) and dispatch rows (kivgraph's rows `via` an "
        "interface method, against the files whose `Uses` point at the interface methods go/types says the "
        "symbol implements):",
        "",
        "| symbol | kind | files kivgraph / go/types | precision | recall | dispatch files kivgraph / go/types "
        "| dispatch precision | dispatch recall | blast radius rows (dispatch) | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in g["symbols"]:
        a, dsp, b = s["all_files"], s["dispatch_files"], s["blast_radius"]
        lines.append(
            f"| {s['symbol']} | {s['kind']} | {a['kivgraph']} / {a['go_types']} | {a['precision']} | {a['recall']} | "
            f"{dsp['kivgraph']} / {dsp['go_types']} | {dsp['precision']} | {dsp['recall']} | "
            f"{b['total']} ({b['dispatch_rows']}) | {b['verdict']} |"
        )
    o = g["overall"]
    a, n, dsp = o["all_files"], o["non_test_files"], o["dispatch_files"]
    lines += [
        f"| **overall** | | {a['kivgraph']} / {a['go_types']} | **{a['precision']}** | **{a['recall']}** | "
        f"{dsp['kivgraph']} / {dsp['go_types']} | **{dsp['precision']}** | **{dsp['recall']}** | | |",
        "",
        f"Non-test files: precision {n['precision']}, recall {n['recall']}.",
        "",
        "Reference disagreements: "
        + (
            "; ".join(
                f"{s['symbol']}: only kivgraph {s['only_kivgraph'] or '-'}, only go/types {s['only_go_types'] or '-'}"
                for s in g["symbols"]
                if s["only_kivgraph"] or s["only_go_types"]
            )
            or "none"
        )
        + ".",
        "",
        *_outside_report(g["outside"], g["corpus"]["name"]),
    ]
    return lines


def _implements_report(im: dict[str, Any], scope: str) -> list[str]:
    t, m = im["types"], im["methods"]
    return [
        f"IMPLEMENTS over the {im['interfaces']} interfaces ({im['interface_methods']} methods) {scope}, "
        "non-test packages: kivgraph's incoming IMPLEMENTS rows against go/types' `types.Implements` on witness "
        "instantiations (benchmarks/go_refs `-implements`: type arguments from int, string and the type's own "
        "type parameters, constraints checked).",
        "",
        "| level | kivgraph pairs | go/types pairs | precision | recall |",
        "| --- | --- | --- | --- | --- |",
        f"| type | {t['kivgraph']} | {t['go_types']} | {t['precision']} | {t['recall']} |",
        f"| method | {m['kivgraph']} | {m['go_types']} | {m['precision']} | {m['recall']} |",
        "",
        (
            "Pairs: " + ("; ".join(im["pairs"]) or "none") + "."
            if len(im["pairs"]) <= 12
            else f"{len(im['pairs'])} pairs, listed in the JSON."
        ),
        "",
        "Disagreements: "
        + (
            "; ".join(
                [f"only kivgraph {x}" for x in im["only_kivgraph"] + im["methods_only_kivgraph"]]
                + [f"only go/types {x}" for x in im["only_go_types"] + im["methods_only_go_types"]]
            )
            or "none"
        )
        + ". Undecided (DISPATCH_UNDECIDED): "
        + ("; ".join(im["undecided"]) or "none")
        + ".",
        "",
    ]


def _outside_report(o: dict[str, Any], corpus: str) -> list[str]:
    p, dsp = o["pairs"], o["dispatch_files"]
    disagreements = o["pairs_only_kivgraph"] + o["pairs_only_go_types"] + o["dispatch_disagreements"]
    return [
        f"Interfaces outside the graph ({corpus}): methods of interfaces of the standard library (or of "
        f"unregistered modules) that the code uses: {o['interface_methods_used']}, in {o['call_files']} files. "
        "Pairs = kivgraph's EXTERNAL_IMPLEMENTS rows of non-test methods against go/types' `types.Implements` "
        "(benchmarks/go_refs `-outside`); dispatch files = the files of each such method's rows via an outside "
        "interface method against the files whose `Uses` point at the ones go/types says it implements (a "
        "method's own call through the interface is not its row, as for interfaces in the graph).",
        "",
        "| what | kivgraph | go/types | precision | recall |",
        "| --- | --- | --- | --- | --- |",
        f"| method pairs | {p['kivgraph']} | {p['go_types']} | {p['precision']} | {p['recall']} |",
        f"| dispatch files ({o['methods']} methods) | {dsp['kivgraph']} | {dsp['go_types']} | {dsp['precision']} | "
        f"{dsp['recall']} |",
        "",
        f"{o['lower_bound_by_conversion']} of those methods answer LOWER_BOUND with an EXTERNAL_CONVERSION blind "
        "spot (their type is converted to such an interface in the module). Disagreements: "
        + ("; ".join(disagreements[:10]) or "none")
        + (f" (and {len(disagreements) - 10} more in the JSON)" if len(disagreements) > 10 else "")
        + ".",
        "",
    ]


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
