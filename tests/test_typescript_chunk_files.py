"""A consumer's uses of a provider through its published build bind to the source when the checker's declaration
sits in a bundler's hashed chunk that no entry exports.

``tests/fixtures/ts_chunked``: ``lib/`` is the provider's source (registered), ``published/`` what a bundler
(tsdown-style) published for it, installed as ``app/node_modules/@fx/chunked``, and ``app/`` the consumer. The
chunks: ``subscribable-D2lAzdDi.d.ts`` and ``removable-B1nFbgZm.d.ts`` mirror ``src/subscribable.ts`` and
``src/removable.ts`` once the hash is dropped; ``chunk-5XQ7PZ2J.d.ts`` (esbuild-style) mirrors nothing, and
``Retryer`` is declared once in the source; the shared ``hydration-Bx9Kq2Lm.d.ts`` holds ``Query`` (no entry
exports it, one source declares it), two interfaces named ``Options`` (two sources declare one: never a guess)
and a class ``Emitter`` where the source has an interface (the kind differs: never the same declaration).
One real scip-typescript run over the consumer, then the same pair through the CLI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.languages.typescript.outputs import unhashed
from indexer.languages.typescript.package_map import Mapped, NotMapped, PublishedBuilds
from server.tools.consumers import find_cross_repo_consumers
from server.tools.references import find_references
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from snapshot_format.vocab import Confidence
from tests.helpers import FIXTURES, run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer
from tests.test_typescript_package_mapped import bind_consumer

Edges = dict[tuple[str, str, int], tuple[str, str, int]]
Unresolved = list[tuple[str, str, str, int, str]]


def _pair(tmp: Path) -> tuple[Path, Path]:
    lib = tmp / "lib"
    app = tmp / "app"
    shutil.copytree(FIXTURES / "ts_chunked" / "lib", lib)
    shutil.copytree(FIXTURES / "ts_chunked" / "app", app)
    shutil.copytree(FIXTURES / "ts_chunked" / "published", app / "node_modules" / "@fx" / "chunked")
    return lib, app


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> tuple[Edges, Unresolved]:
    """(target path, provenance, confidence) by (edge kind, target qualified name, line) of the edges into the
    provider, and the unresolved rows as (reason, name, package, line, detail)."""
    require_analyzer()
    lib, app = _pair(tmp_path_factory.mktemp("chunked"))
    edges, out = bind_consumer(lib, app)
    return edges, [(u.reason, u.name, u.package, u.line, u.detail) for u in out.unresolved]


@pytest.mark.analyzers
def test_a_hashed_chunk_binds_to_the_source_its_path_mirrors_once_the_hash_is_dropped(
    bound: tuple[Edges, Unresolved],
) -> None:
    edges, _ = bound
    mapped = (Confidence.EXACT_PACKAGE_MAPPED,)
    expected = {
        # subscribable-D2lAzdDi.d.ts is src/subscribable.ts: an inherited method of a class no entry exports
        ("CALLS_DIRECT", "src.subscribable.Subscribable.subscribe", 5): "src/subscribable.ts",
        # removable-B1nFbgZm.d.ts is src/removable.ts: a method and a field inherited by Query
        ("CALLS_DIRECT", "src.removable.Removable.destroy", 7): "src/removable.ts",
        ("REFERENCES", "src.removable.Removable.gcTime", 14): "src/removable.ts",
    }
    for key, path in expected.items():
        assert key in edges, (key, sorted(edges))
        assert edges[key][0] == path and (edges[key][2],) == mapped, (key, edges[key])
        assert edges[key][1] == "TYPESCRIPT_PROJECT_REFERENCE"


@pytest.mark.analyzers
def test_a_chunk_that_mirrors_no_source_binds_by_the_one_declaration_of_its_name_and_kind(
    bound: tuple[Edges, Unresolved],
) -> None:
    edges, _ = bound
    expected = {
        # chunk-5XQ7PZ2J.d.ts mirrors no file; one source declares a class Retryer
        ("CALLS_DIRECT", "src.retryer.Retryer.cancel", 8): "src/retryer.ts",
        # Query sits in the shared hydration chunk, whose mirror (src/hydration.ts) does not declare it
        ("REFERENCES", "src.query.Query.retryer", 8): "src/query.ts",
        ("CALLS_DIRECT", "src.query.Query.fetch", 9): "src/query.ts",
        ("CALLS_DIRECT", "src.query.Query.setOptions", 10): "src/query.ts",
    }
    for key, path in expected.items():
        assert key in edges, (key, sorted(edges))
        assert edges[key] == (path, "TYPESCRIPT_PROJECT_REFERENCE", Confidence.EXACT_PACKAGE_MAPPED), key


@pytest.mark.analyzers
def test_a_name_two_sources_declare_or_a_kind_the_source_lacks_stays_unbound_and_says_why(
    bound: tuple[Edges, Unresolved],
) -> None:
    edges, unresolved = bound
    # nothing bound to either Options, nor to the interface Emitter the chunk's class is not
    assert not [k for k in edges if ".Options." in k[1] or k[1].startswith("src.emitter")], sorted(edges)
    ambiguous = {
        (name, package, line)
        for reason, name, package, line, _ in unresolved
        if reason == "AMBIGUOUS_PACKAGE_DECLARATION"
    }
    # retry (line 10) is Options.retry, onError (line 13) Options$1.onError: each row asks about both sources
    assert ambiguous == {
        ("retry", "src/query.ts", 10),
        ("retry", "src/queryCache.ts", 10),
        ("onError", "src/query.ts", 13),
        ("onError", "src/queryCache.ts", 13),
    }
    detail = next(d for r, n, _p, _l, d in unresolved if (r, n) == ("AMBIGUOUS_PACKAGE_DECLARATION", "retry"))
    assert "2 sources of lib declare it: src/query.ts src.query.Options, src/queryCache.ts src.queryCache.Options" in (
        detail
    )
    (emitter,) = [(r, d) for r, n, _p, line, d in unresolved if n == "emit" and line == 11]
    assert emitter[0] == "PACKAGE_EXPORT_NOT_MAPPED" and "nor does any other source of it" in emitter[1]


@pytest.mark.analyzers
def test_the_chunk_pair_through_the_cli_answers_consumers_and_blast_radius(tmp_path: Path) -> None:
    require_analyzer()
    lib, app = _pair(tmp_path)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(lib), str(app), "--languages", "typescript").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        refs = find_references(gen, {"qualified_name": "src.subscribable.Subscribable.subscribe", "view": "full"})
        assert [
            (r["repository"], r["file_path"], r["evidence_line"], r["confidence"])
            for r in refs["results"]["references"]
            if r["repository"] == "app"
        ] == [("app", "src/main.ts", 5, "EXACT_PACKAGE_MAPPED")]
        retryer = find_cross_repo_consumers(gen, {"qualified_name": "src.retryer.Retryer.cancel", "view": "full"})
        assert {(r["category"], r["file_path"], r["confidence"]) for r in retryer["results"]["consumers"]} == {
            ("exact_symbol", "src/main.ts", "EXACT_PACKAGE_MAPPED")
        }
        # an ambiguous use is no edge, and neither Options may say a change to it reaches nothing for sure
        for qn in ("src.query.Options.retry", "src.queryCache.Options.onError"):
            blast = get_blast_radius(gen, {"qualified_name": qn, "view": "full"})
            assert blast["completeness"]["verdict"] == "LOWER_BOUND", (qn, blast["completeness"])
            assert "src/main.ts" in {b["file_path"] for b in blast["completeness"]["blind_spots"]}


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("subscribable-D2lAzdDi", "subscribable"),  # rollup, tsup, tsdown, vite: - and 8 base64url characters
        ("hydration-DHZNyHqg", "hydration"),
        ("chunk-5XQ7PZ2J", "chunk"),  # esbuild
        ("main.3f2a9c1d", "main"),  # webpack, parcel: . and hex
        ("query-client", None),  # words are no hash
        ("foo-useQuery", None),
        ("foo-Resource", None),
        ("my-module-v2", None),
        ("index", None),
    ],
)
def test_a_bundler_hash_is_told_from_a_name(name: str, stem: str | None) -> None:
    assert unhashed(name) == stem


def test_a_chunk_declaring_a_name_twice_never_picks_the_one_source_of_it(tmp_path: Path) -> None:
    manifest = '{"name": "@fx/twins", "exports": {".": {"types": "./build/index.d.ts"}}}'
    lib = write_repo(
        tmp_path / "lib",
        {
            "package.json": manifest,
            "src/index.ts": 'export { run } from "./run";\n',
            "src/run.ts": "export interface Action {\n  kind: string;\n}\n\nexport function run(a: Action): void {}\n",
            "src/state.ts": "export interface State {\n  value: number;\n}\n",
        },
    )
    app = write_repo(tmp_path / "app", {"package.json": '{"name": "app"}'})
    write_repo(
        app / "node_modules" / "@fx" / "twins",
        {
            "package.json": manifest,
            "build/index.d.ts": 'export { r as run } from "./chunk-Q2W3E4R5.js";\n',
            # the bundler inlined another Action beside the source's and renamed one of them
            "build/chunk-Q2W3E4R5.d.ts": "interface Action {\n  kind: string;\n}\ninterface Action$1 {\n  type: string;\n}\n"
            "interface State {\n  value: number;\n}\ndeclare function run(a: Action): void;\nexport { run as r };\n",
        },
    )
    builds = PublishedBuilds({"lib": str(lib), "app": str(app)}, lambda _repo, _path: None)

    def mapped(member: str) -> Mapped | NotMapped:
        return builds.map("app", "src/main.ts", "@fx/twins", "build/chunk-Q2W3E4R5.d.ts", member, "type", ("lib", ""))

    state = mapped("State.value")
    assert isinstance(state, Mapped) and (state.path, state.declaration.qualified_name) == (
        "src/state.ts",
        "src.state.State.value",
    )
    for member in ("Action.kind", "Action$1.type"):
        twin = mapped(member)
        assert isinstance(twin, NotMapped) and twin.reason == "AMBIGUOUS_PACKAGE_DECLARATION", (member, twin)
        assert "the file declares Action, Action$1 and one source of lib declares it" in twin.detail
