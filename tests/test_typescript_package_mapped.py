"""A consumer using a registered provider through its published build binds to the provider's source: EXACT_PACKAGE_MAPPED.

A small pair first (real scip-typescript): the consumer ``app`` has ``@fx/lib``'s published build in
``node_modules`` (a chunk with mangled export names, a name renamed by the bundler, a per-file output, no
declaration maps) and the provider's source is registered. Then the real pair: ``@tanstack/react-query``'s
source with ``@tanstack/query-core``'s published npm tarball installed, and query-core's source registered
(both fetched into the cache by ``benchmarks.corpora``, never committed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.corpora import fetch_npm_package
from indexer.languages.spec import ExactOutcome
from indexer.languages.typescript import analyzer as scip_ts
from server.tools.consumers import find_cross_repo_consumers
from server.tools.references import find_references
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer
from tests.typescript_corpus import build_ts_corpus

_MANIFEST = json.dumps(
    {
        "name": "@fx/lib",
        "version": "1.0.0",
        "type": "module",
        "types": "build/legacy/index.d.ts",
        "exports": {
            ".": {"import": {"types": "./build/modern/index.d.ts", "default": "./build/modern/index.js"}},
            "./legacy": {"types": "./build/modern/legacy.d.ts"},
        },
    }
)
PROVIDER = {
    "package.json": _MANIFEST,
    "src/index.ts": 'export { Greeter } from "./greeter";\nexport * from "./types";\nexport { Twin } from "./twin";\n',
    "src/greeter.ts": 'import { Subscribable } from "./subscribable";\nimport type { Hidden } from "./types";\n\n'
    "export class Greeter extends Subscribable {\n"
    '  greet(name: string): string {\n    return "hi " + name;\n  }\n\n'
    "  hidden(): Hidden {\n    return { secret: 1 };\n  }\n}\n",
    "src/subscribable.ts": "export class Subscribable {\n  subscribe(fn: () => void): () => void {\n"
    "    return fn;\n  }\n}\n",
    "src/types.ts": "export interface Options {\n  loud: boolean;\n}\n\nexport type Action = { kind: string };\n\n"
    "export interface Hidden {\n  secret: number;\n}\n",
    "src/twin.ts": "export class Twin {}\n",
    "src/legacy.ts": "export class Twin {}\n",
}
# What the bundler published (tsup-style): one chunk, its names mangled on export, a per-file output.
PUBLISHED = {
    "package.json": _MANIFEST,
    "build/modern/index.d.ts": "export { G as Greeter, O as Options, A as Action, T as Twin } from './chunk-X1.js';\n",
    "build/modern/legacy.d.ts": "export { T as Twin } from './chunk-X1.js';\n",
    "build/modern/chunk-X1.d.ts": "import { Subscribable } from './subscribable.js';\n\n"
    "type Action$1 = {\n    kind: string;\n};\n"
    "interface Options {\n    loud: boolean;\n}\n"
    "interface Hidden {\n    secret: number;\n}\n"
    "declare class Greeter extends Subscribable {\n"
    "    greet(name: string): string;\n    hidden(): Hidden;\n    extra(): void;\n}\n"
    "declare class Twin {\n}\n\n"
    "export { Action$1 as A, Greeter as G, type Hidden as H, type Options as O, Twin as T };\n",
    "build/modern/subscribable.d.ts": "declare class Subscribable {\n    subscribe(fn: () => void): () => void;\n}\n\n"
    "export { Subscribable };\n",
}
CONSUMER = {
    "package.json": '{"name": "app", "dependencies": {"@fx/lib": "1.0.0"}}',
    "src/main.ts": 'import { Greeter, Twin, type Action, type Options } from "@fx/lib";\n\n'
    "export function run(opts: Options): string {\n"
    "  const g = new Greeter();\n"
    "  g.subscribe(() => {});\n"
    '  const a: Action = { kind: "x" };\n'
    "  g.extra();\n"
    "  new Twin();\n"
    "  return g.greet(a.kind) + String(opts.loud) + g.hidden().secret;\n}\n",
}


Pair = tuple[dict[tuple[str, str, int], tuple[str, str, int]], list[tuple[str, str, str, str]]]


@pytest.fixture(scope="module")
def small_pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """(target path, provenance, confidence) by (edge kind, target qualified name, line), and the unresolved rows
    as (reason, name, package, detail)."""
    require_analyzer()
    tmp = tmp_path_factory.mktemp("pair")
    write_repo(tmp / "lib", PROVIDER)
    app = write_repo(tmp / "app", CONSUMER)
    write_repo(app / "node_modules" / "@fx" / "lib", PUBLISHED)
    edges, out = bind_consumer(tmp / "lib", app)
    return edges, [(u.reason, u.name, u.package, u.detail) for u in out.unresolved]


def bind_consumer(lib: Path, app: Path) -> tuple[dict[tuple[str, str, int], tuple[str, str, int]], ExactOutcome]:
    """One real scip-typescript run over ``app`` with ``lib`` registered: (target path, provenance, confidence)
    of the edges into ``lib`` by (edge kind, target qualified name, line), and the whole outcome."""
    built = build_ts_corpus([("lib", lib), ("app", app)])
    corpus = built.corpora["typescript"]
    repo = next(r for r in corpus.repositories if r.name == "app")
    facts = scip_ts.analyze_repository(repo, corpus, timeout=120)
    out = scip_ts.bind(facts, "app", corpus, scip_ts.ModuleTable(corpus))
    edges: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    for e in out.edges:
        target = built.declarations[e.target]
        if target.repository == "lib":
            edges[(EdgeKind(e.kind).name, target.qualified_name, e.line)] = (
                target.path,
                Provenance(e.provenance).name,
                e.confidence,
            )
    return edges, out


def test_names_the_bundler_mangled_bind_to_the_provider_source(small_pair: Pair) -> None:
    edges, _ = small_pair
    expected = {
        ("IMPORTS_SYMBOL", "src.greeter.Greeter", 1): "src/greeter.ts",
        ("CALLS_DIRECT", "src.greeter.Greeter", 4): "src/greeter.ts",  # new Greeter(): the class
        ("CALLS_DIRECT", "src.greeter.Greeter.greet", 9): "src/greeter.ts",
        ("TYPE_USES", "src.types.Options", 3): "src/types.ts",  # `export * from "./types"` followed
        ("TYPE_USES", "src.types.Action", 6): "src/types.ts",  # published as Action$1, renamed by the bundler
        ("REFERENCES", "src.types.Options.loud", 9): "src/types.ts",
        ("IMPORTS_SYMBOL", "src.index", 1): "src/index.ts",  # the module specifier: the package's source entry
    }
    for key, path in expected.items():
        assert key in edges, (key, sorted(edges))
        assert edges[key] == (path, "TYPESCRIPT_PROJECT_REFERENCE", Confidence.EXACT_PACKAGE_MAPPED), key


def test_a_declaration_no_entry_exports_maps_through_its_own_per_file_output(small_pair: Pair) -> None:
    edges, _ = small_pair
    # build/modern/subscribable.d.ts is the output of src/subscribable.ts, which declares the method
    assert edges[("CALLS_DIRECT", "src.subscribable.Subscribable.subscribe", 5)][0] == "src/subscribable.ts"


def test_what_does_not_map_uniquely_is_an_unresolved_row_never_a_guess(small_pair: Pair) -> None:
    edges, unresolved = small_pair
    rows = {(reason, name, package) for reason, name, package, _detail in unresolved}
    # Twin is public under "." (src/twin.ts) and "./legacy" (src/legacy.ts): one row asking for each of the two
    assert {
        ("AMBIGUOUS_PACKAGE_EXPORT", "Twin", "src/twin.ts"),
        ("AMBIGUOUS_PACKAGE_EXPORT", "Twin", "src/legacy.ts"),
    } <= rows
    assert not any(qn.endswith("Twin") for _kind, qn, _line in edges)
    # Hidden is exported by the chunk only (as H), by no entry of the package, and a chunk mirrors no source:
    # it binds by the one source declaring an interface Hidden (tests/test_typescript_chunk_files.py has the rest)
    assert not any(name == "secret" for _reason, name, _package in rows)
    assert edges[("REFERENCES", "src.types.Hidden.secret", 9)][::2] == ("src/types.ts", Confidence.EXACT_PACKAGE_MAPPED)
    # the published build has a member the registered source does not declare (another version)
    extra = [d for r, n, p, d in unresolved if (r, n, p) == ("PROVIDER_SOURCE_UNAVAILABLE", "extra", "src/greeter.ts")]
    assert len(extra) == 1 and "no declaration src.greeter.Greeter.extra" in extra[0]
    # `{ kind: "x" }` and `a.kind`: a member of a type literal (`type Action = { kind: string }`), which is no
    # declaration of the graph
    literal = [d for r, n, p, d in unresolved if (n, p) == ("kind", "src/types.ts")]
    assert len(literal) == 2 and all(
        "src.types.Action.typeLiteral.kind" in d and "anonymous type literal" in d for d in literal
    )
    assert len(rows) == 4, rows


def test_consumers_of_the_pair_through_the_cli(tmp_path: Path) -> None:
    require_analyzer()
    write_repo(tmp_path / "lib", PROVIDER)
    app = write_repo(tmp_path / "app", CONSUMER)
    write_repo(app / "node_modules" / "@fx" / "lib", PUBLISHED)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(tmp_path / "lib"), str(app), "--languages", "typescript").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        greeter = find_cross_repo_consumers(gen, {"qualified_name": "src.greeter.Greeter", "view": "full"})
        rows = greeter["results"]["consumers"]
        assert {(r["category"], r["file_path"], r["confidence"], r["provenance"]) for r in rows} == {
            ("exact_symbol", "src/main.ts", "EXACT_PACKAGE_MAPPED", "TYPESCRIPT_PROJECT_REFERENCE")
        }
        assert greeter["coverage"] == {"exact": len(rows), "candidate": 0, "unresolved_related": 0, "package_level": 0}
        refs = find_references(gen, {"qualified_name": "src.greeter.Greeter.greet", "view": "full"})
        assert [(r["file_path"], r["confidence"]) for r in refs["results"]["references"]] == [
            ("src/main.ts", "EXACT_PACKAGE_MAPPED")
        ]
        assert refs["coverage"]["exact"] == 1
        # an ambiguous use is no edge, but neither candidate may answer "nobody consumes it"
        for qn in ("src.twin.Twin", "src.legacy.Twin"):
            twin = find_cross_repo_consumers(gen, {"qualified_name": qn, "view": "full"})
            rows = twin["results"]["consumers"]
            assert [(r["category"], r["reason"], r["file_path"], r["start_line"]) for r in rows] == [
                ("unresolved", "AMBIGUOUS_PACKAGE_EXPORT", "src/main.ts", 1),  # the import
                ("unresolved", "AMBIGUOUS_PACKAGE_EXPORT", "src/main.ts", 8),
            ], qn  # new Twin()
            assert twin["coverage"]["unresolved_related"] == 2 and twin["coverage"]["exact"] == 0
            # and neither may say a change to it reaches nothing for sure
            refs = find_references(gen, {"qualified_name": qn, "view": "full"})
            assert refs["total"] == 0 and refs["coverage"]["unresolved_related"] >= 2
            blast = get_blast_radius(gen, {"qualified_name": qn, "view": "full"})
            assert blast["completeness"]["verdict"] == "LOWER_BOUND"
            assert {b["file_path"] for b in blast["completeness"]["blind_spots"]} == {"src/main.ts"}


# -- the real pair ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tanstack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    require_analyzer()
    provider, consumer = fetch_npm_package("query-core"), fetch_npm_package("react-query")
    assert (consumer / "node_modules/@tanstack/query-core/build/modern/index.d.ts").is_file()
    assert not list((consumer / "node_modules/@tanstack/query-core/build").rglob("*.d.ts.map"))  # no map back
    home = tmp_path_factory.mktemp("tanstack") / "home"
    assert run_kivgraph(home, "init", str(provider), str(consumer), "--languages", "typescript").returncode == 0
    result = run_kivgraph(home, "index", "--json", timeout=1200)
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        yield gen


def _consumer_files(answer: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in answer["results"]["consumers"]:
        if row["category"] == "exact_symbol":
            out.setdefault(row["confidence"], set()).add(row["file_path"])
    return out


@pytest.mark.slow
def test_react_query_consumes_query_core_through_its_published_tarball(tanstack: Generation) -> None:
    names = {r.name: r for r in tanstack.repositories()}
    provider = next(n for n in names if n.startswith("query-core"))
    consumer = next(n for n in names if n.startswith("react-query"))
    answer = find_cross_repo_consumers(
        tanstack,
        {"qualified_name": "src.queryClient.QueryClient", "repository": provider, "view": "full", "limit": 500},
    )
    files = _consumer_files(answer)
    assert set(files) == {"EXACT_PACKAGE_MAPPED"}
    assert {"src/QueryClientProvider.tsx", "src/useBaseQuery.ts", "src/useQueries.ts"} <= files["EXACT_PACKAGE_MAPPED"]
    assert answer["coverage"]["exact"] >= len(files["EXACT_PACKAGE_MAPPED"])
    assert all(r["repository"] == consumer for r in answer["results"]["consumers"] if r["category"] == "exact_symbol")
    # a method through the instance the consumer holds, and a method inherited from a class no entry exports
    for qn, expected in (
        ("src.queryClient.QueryClient.getQueryCache", "src/useIsFetching.ts"),
        ("src.subscribable.Subscribable.subscribe", "src/useBaseQuery.ts"),
    ):
        refs = find_references(
            tanstack,
            {"qualified_name": qn, "repository": provider, "view": "full", "limit": 500, "in_repository": consumer},
        )
        rows = refs["results"]["references"]
        assert expected in {r["file_path"] for r in rows}, (qn, rows)
        assert {r["confidence"] for r in rows} == {"EXACT_PACKAGE_MAPPED"}
    status = tanstack.breakdown()
    assert any(e.key == "EXACT_PACKAGE_MAPPED" and e.count > 1000 for e in status.edges_by_confidence)
