"""Compiled JavaScript beside TypeScript sources is a build output: skipped as generated, with the reason.

``tests/fixtures/ts_compiled_js`` is laid out as zod's npm tarball is: ``src/**/*.ts``, the compiled
``index.js``/``index.cjs``/``index.d.ts``/``index.d.cts`` beside ``package.json``, and ``v2/`` (a directory the
``exports`` point into, neither ``dist/`` nor ``build/``) holding ``.js``/``.cjs``/``.d.ts``/``.d.cts`` and a
bundler chunk. Also ``src/legacy.js`` beside ``src/legacy.ts`` (``tsc`` without an ``outDir``) and
``out-tsc/`` (the tsconfig's ``outDir``). Hand-written JavaScript stays: ``plugins/index.js`` (an ``exports``
target whose directory holds no compiled output, although its name mirrors ``src/index.ts``) and
``scripts/release.mjs``. Indexed through the real CLI and scip-typescript.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.discover import discover
from indexer.languages.registry import EXTENSIONS
from indexer.languages.typescript.outputs import mark_build_outputs
from server.tools.intent import find_by_intent
from server.tools.references import find_references
from server.tools.symbols import find_symbol
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from tests.helpers import FIXTURES, copy_fixture, ranked_files, run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer

_CODE = {e: lang for lang in ("typescript", "javascript") for e in EXTENSIONS[lang]}
_BESIDE = "generated (build output: mirrors a TypeScript source under src/)"
_V2 = "generated (build output: v2/ is a directory exports of package.json points into)"
SKIPPED = {
    "index.js": _BESIDE,
    "index.cjs": _BESIDE,
    "index.d.ts": _BESIDE,
    "index.d.cts": _BESIDE,
    **{f"v2/{name}": _V2 for name in ("index.js", "index.cjs", "index.d.ts", "index.d.cts")},
    **{f"v2/{name}": _V2 for name in ("schema.js", "schema.cjs", "schema.d.ts", "schema.d.cts")},
    "v2/chunk-5XQ7PZ2J.js": _V2,  # a chunk mirrors nothing, but v2/ holds what the sources compile to
    "src/legacy.js": "generated (build output: beside the TypeScript source of the same name)",
    "out-tsc/v2/schema.js": "generated (build output: out-tsc/ is the outDir of tsconfig.json)",
}
SOURCES = {"src/index.ts", "src/legacy.ts", "src/v2/index.ts", "src/v2/schema.ts"}
HAND_WRITTEN = {"plugins/index.js", "scripts/release.mjs"}


def _skipped(root: Path) -> dict[str, str]:
    found = mark_build_outputs(root, discover(root, _CODE))
    return {c.path: c.skip_reason for c in found.files if c.skip_reason}


def test_compiled_javascript_and_declarations_are_generated_and_hand_written_javascript_stays() -> None:
    root = FIXTURES / "ts_compiled_js"
    assert _skipped(root) == SKIPPED
    kept = {c.path for c in discover(root, _CODE).files} - set(SKIPPED)
    assert kept == SOURCES | HAND_WRITTEN


def test_a_javascript_library_with_typed_tests_and_a_ts_config_keeps_its_files(tmp_path: Path) -> None:
    root = write_repo(
        tmp_path / "chalkish",
        {
            "package.json": '{"name": "chalkish", "type": "module", "exports": "./source/index.js",'
            ' "types": "./source/index.d.ts"}',
            "source/index.js": "export function paint(s) {\n  return s;\n}\n",
            "source/utilities.js": "export const id = (x) => x;\n",
            "source/index.d.ts": "export declare function paint(s: string): string;\n",
            "index.test-d.ts": 'import { paint } from "./source/index.js";\npaint("x");\n',
            "test/paint.test.ts": 'import { paint } from "../source/index.js";\npaint("y");\n',
        },
    )
    assert _skipped(root) == {}  # typed tests compile to no published output
    (root / "vitest.config.ts").write_text("export default {};\n")
    # a TypeScript config file is a source, but source/ holds no file a source compiles to: its .js stay
    assert {p for p in _skipped(root) if p.endswith(".js")} == set()


def test_an_output_directory_is_known_by_its_declarations_or_two_compiled_sources(tmp_path: Path) -> None:
    files = {
        "package.json": '{"name": "f", "exports": {"import": "./dist/esm/index.js", "require": "./dist/cjs/index.cjs",'
        ' "types": "./dist/types/index.d.ts"}}',
        "src/index.ts": 'export { a } from "./a";\n',
        "src/a.ts": "export const a = 1;\n",
        "dist/esm/index.js": 'export { a } from "./a.js";\n',
        "dist/esm/a.js": "export const a = 1;\n",
        "dist/esm/chunk-Q2W3E4R5.js": "export const shared = 2;\n",
        "dist/cjs/index.cjs": "exports.a = 1;\n",
        "dist/types/index.d.ts": 'export { a } from "./a.js";\n',
    }
    root = write_repo(tmp_path / "formats", files)
    # dist/esm/: two of its files are two sources' outputs; dist/cjs/: a lone index, but dist/types/ holds the
    # declarations, which makes dist/ (a conventional name) what the sources compile to
    why = "a directory exports of package.json points into"
    assert _skipped(root) == {
        "dist/esm/index.js": f"generated (build output: dist/esm/ is {why})",
        "dist/esm/a.js": f"generated (build output: dist/esm/ is {why})",
        "dist/esm/chunk-Q2W3E4R5.js": f"generated (build output: dist/esm/ is {why})",
        "dist/cjs/index.cjs": "generated (build output: dist/ is a conventional build directory (dist/) beside "
        "TypeScript sources)",
        "dist/types/index.d.ts": f"generated (build output: dist/types/ is {why})",
    }


# -- through the CLI and the real analyzer ------------------------------------------------------------


def _index(home: Path) -> dict[str, Any]:
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["result"]["index"]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any], Generation]]:
    require_analyzer()
    tmp = tmp_path_factory.mktemp("compiled")
    repo = copy_fixture("ts_compiled_js", tmp)
    home = tmp / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript").returncode == 0
    report = _index(home)
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        yield home, report, gen


@pytest.mark.analyzers
def test_the_javascript_run_reads_only_hand_written_javascript(
    indexed: tuple[Path, dict[str, Any], Generation],
) -> None:
    _home, report, gen = indexed
    (repo,) = gen.repositories()
    indexed_paths = {f.path for f in gen.files(repo.name) if f.status != "skipped"}
    assert indexed_paths == SOURCES | HAND_WRITTEN
    assert (report["typescript"]["files"], report["javascript"]["files"]) == (len(SOURCES), len(HAND_WRITTEN))
    assert report["typescript"]["skipped"] + report["javascript"]["skipped"] == len(SKIPPED)


@pytest.mark.analyzers
def test_symbols_references_and_blast_radius_show_no_compiled_copy(
    indexed: tuple[Path, dict[str, Any], Generation],
) -> None:
    _home, _report, gen = indexed
    for name, path in (("Schema", "src/v2/schema.ts"), ("safeParse", "src/v2/schema.ts"), ("parse", None)):
        answer = find_symbol(gen, {"name": name, "view": "full"})
        paths = {r["file_path"] for r in answer["results"]}
        assert paths <= SOURCES and (path is None or paths == {path}), (name, paths)
    (legacy,) = find_symbol(gen, {"name": "legacyParse", "view": "full"})["results"]
    assert legacy["file_path"] == "src/legacy.ts"  # not AMBIGUOUS with src/legacy.js
    refs = find_references(gen, {"qualified_name": "src.v2.schema.parse", "view": "full"})
    callers = {(r["file_path"], r["confidence"]) for r in refs["results"]["references"]}
    # the TypeScript caller and the hand-written plugin, both exact; no compiled copy calls it
    assert {"src/legacy.ts", "plugins/index.js"} <= {p for p, _ in callers}
    assert {p for p, _ in callers} <= SOURCES | HAND_WRITTEN
    blast = get_blast_radius(gen, {"qualified_name": "src.v2.schema.Schema.parse", "view": "full"})
    reached = {r["file_path"] for r in blast["results"]["symbols"]}
    assert reached and reached <= SOURCES | HAND_WRITTEN, reached
    ranked = ranked_files(find_by_intent(gen, {"query": "schema parse safe parse"})["results"])
    assert ranked and {r["file"] for r in ranked} <= SOURCES | HAND_WRITTEN


@pytest.mark.analyzers
def test_status_names_each_skipped_file_with_its_reason(indexed: tuple[Path, dict[str, Any], Generation]) -> None:
    home, _report, _gen = indexed
    payload = json.loads(run_kivgraph(home, "status", "--json").stdout)
    (row,) = payload["repositories"]
    listed = {p: reason for reason, group in row["skipped"].items() for p in group["paths"]}
    assert listed == SKIPPED
    text = run_kivgraph(home, "status").stdout
    assert f"skipped 4, {_BESIDE}: index.cjs, index.d.cts, index.d.ts, index.js" in text


@pytest.mark.analyzers
def test_include_build_outputs_indexes_the_compiled_javascript_too(tmp_path: Path) -> None:
    require_analyzer()
    repo = copy_fixture("ts_compiled_js", tmp_path)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript").returncode == 0
    config = home / "kivgraph.toml"
    config.write_text(config.read_text() + "include_build_outputs = true\n")
    report = _index(home)
    assert report["typescript"]["skipped"] + report["javascript"]["skipped"] == 0
    with open_current(StateLayout(config, home / "state")) as gen:
        paths = {r["file_path"] for r in find_symbol(gen, {"name": "Schema", "view": "full"})["results"]}
    assert {"src/v2/schema.ts", "v2/schema.js", "v2/schema.cjs", "v2/schema.d.ts"} <= paths


@pytest.mark.analyzers
def test_a_language_whose_files_are_all_build_outputs_says_so_not_candidate(tmp_path: Path) -> None:
    require_analyzer()
    repo = write_repo(
        tmp_path / "only-compiled", {"src/a.ts": "export const a = 1;\n", "src/a.js": "export const a = 1;\n"}
    )
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript").returncode == 0
    _index(home)
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        (row,) = gen.repositories()
        reasons = {a.language: a.reason for a in row.analyses}
    assert reasons["javascript"] == "no javascript file to analyze (1 skipped)"
