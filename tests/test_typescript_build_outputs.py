"""Build outputs are not sources: declaration files a repository's own sources produce are skipped as generated.

``tests/fixtures/ts_built`` commits three build outputs of its ``src/``: ``out/`` (the tsconfig's outDir),
``build/`` (where package.json ``types`` points) and ``dist/legacy`` (a bundled chunk under a conventional
directory), plus a hand-written ``src/global.d.ts`` that stays a source. Indexed through the real CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.config import ConfigError, load
from indexer.discover import discover
from indexer.languages.typescript.outputs import mark_build_outputs, output_directories
from server.tools.intent import find_by_intent
from server.tools.symbols import find_symbol
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from tests.helpers import FIXTURES, copy_fixture, ranked_files, run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer

_TS = {".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript"}
GENERATED = [
    "build/greeter.d.ts",
    "build/index.d.ts",
    "build/util.d.ts",
    "dist/legacy/index-Bq3xT9aZ.d.cts",
    "out/greeter.d.ts",
    "out/util.d.ts",
]


def _skipped(root: Path) -> dict[str, str]:
    found = mark_build_outputs(root, discover(root, _TS))
    return {c.path: c.skip_reason for c in found.files if c.skip_reason}


def test_each_output_directory_is_found_with_the_evidence_that_names_it() -> None:
    dirs = {
        o.path: o.why
        for o in output_directories(FIXTURES / "ts_built", [c.path for c in discover(FIXTURES / "ts_built", _TS).files])
    }
    assert dirs == {
        "out": "the outDir of tsconfig.json",
        "build": "a directory types of package.json points into",
        "dist": "a conventional build directory (dist/) beside TypeScript sources",
    }


def test_declarations_under_outputs_are_generated_and_a_hand_written_global_stays() -> None:
    skipped = _skipped(FIXTURES / "ts_built")
    assert sorted(skipped) == GENERATED
    assert skipped["out/util.d.ts"] == "generated (build output: out/ is the outDir of tsconfig.json)"
    assert "src/global.d.ts" not in skipped


def test_a_javascript_library_keeps_its_hand_written_types(tmp_path: Path) -> None:
    root = write_repo(
        tmp_path / "jslib",
        {
            "package.json": '{"name": "jslib", "types": "types/index.d.ts", "main": "lib/index.js"}',
            "lib/index.js": "module.exports = {}\n",
            "types/index.d.ts": "export declare function f(): void;\n",
            "lib/extra.d.ts": "export declare const x: number;\n",
        },
    )
    assert _skipped(root) == {}  # no TypeScript source could have produced them


def test_a_directory_holding_sources_is_never_an_output(tmp_path: Path) -> None:
    root = write_repo(
        tmp_path / "ws",
        {
            "package.json": '{"name": "ws", "types": "./lib/index.d.ts", "exports": {".": "./src/index.ts"}}',
            "tsconfig.json": '{"compilerOptions": {"outDir": "lib", "declarationDir": "./lib/types"}}',
            "src/index.ts": "export const a = 1\n",
            "src/env.d.ts": "declare const ENV: string;\n",
            "lib/index.ts": "export const b = 2\n",
            "lib/ambient.d.ts": "declare const AMBIENT: number;\n",
            "packages/p/package.json": '{"name": "p", "typings": "dist/index.d.ts"}',
            "packages/p/src/p.ts": "export const p = 1\n",
            "packages/p/dist/index.d.ts": "export declare const p: 1;\n",
        },
    )
    # lib/ holds a source, so neither the outDir nor the types pointer makes it one; src/ is named as a source
    assert _skipped(root) == {
        "packages/p/dist/index.d.ts": "generated (build output: packages/p/dist/ is a directory typings of "
        "packages/p/package.json points into)"
    }


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Generation]]:
    tmp = tmp_path_factory.mktemp("built")
    repo = copy_fixture("ts_built", tmp)
    home = tmp / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        yield home, gen


def test_find_symbol_returns_only_the_source_declaration(indexed: tuple[Path, Generation]) -> None:
    _home, gen = indexed
    for name, path in (("Greeter", "src/greeter.ts"), ("greet", "src/greeter.ts"), ("shout", "src/util.ts")):
        answer = find_symbol(gen, {"name": name, "view": "full"})
        assert [r["file_path"] for r in answer["results"]] == [path], answer
    assert (
        find_symbol(gen, {"name": "FIXTURE_PUNCTUATION", "view": "full"})["results"][0]["file_path"]
        == "src/global.d.ts"
    )
    # and no bundle outranks the sources when the name is not known
    ranked = ranked_files(find_by_intent(gen, {"query": "greeter greet shout"})["results"])
    assert ranked and {r["file"] for r in ranked} <= {"src/greeter.ts", "src/util.ts", "src/index.ts"}


def test_status_lists_the_skipped_outputs_with_the_reason(indexed: tuple[Path, Generation]) -> None:
    home, gen = indexed
    (repo,) = gen.repositories()
    files = {f.path: f for f in gen.files(repo.name)}
    assert {p for p, f in files.items() if f.status == "skipped"} == set(GENERATED)
    payload = json.loads(run_kivgraph(home, "status", "--json").stdout)
    (row,) = payload["repositories"]
    assert row["skipped"] == {
        "generated (build output: build/ is a directory types of package.json points into)": {
            "count": 3,
            "paths": ["build/greeter.d.ts", "build/index.d.ts", "build/util.d.ts"],
        },
        "generated (build output: dist/ is a conventional build directory (dist/) beside TypeScript sources)": {
            "count": 1,
            "paths": ["dist/legacy/index-Bq3xT9aZ.d.cts"],
        },
        "generated (build output: out/ is the outDir of tsconfig.json)": {
            "count": 2,
            "paths": ["out/greeter.d.ts", "out/util.d.ts"],
        },
    }
    text = run_kivgraph(home, "status").stdout
    assert (
        "skipped 2, generated (build output: out/ is the outDir of tsconfig.json): out/greeter.d.ts, out/util.d.ts"
    ) in text


def _index_report(home: Path) -> dict[str, Any]:
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["result"]["index"]["typescript"]


def test_the_flag_indexes_build_outputs_too_and_the_caches_follow_it(tmp_path: Path) -> None:
    require_analyzer()
    repo = copy_fixture("ts_built", tmp_path)
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript").returncode == 0
    first, again = _index_report(home), _index_report(home)
    assert (first["skipped"], first["analyzer_runs"]) == (len(GENERATED), 1)
    assert (again["analyzer_runs"], again["extracted"]) == (0, 0)  # unchanged: nothing re-read, nothing published
    config = home / "kivgraph.toml"
    config.write_text(config.read_text() + "include_build_outputs = true\n")
    assert load(config).repositories[0].include_build_outputs
    included = _index_report(home)
    # the outputs are extracted now, and the analyzer's inputs changed with them: its cached run is not reused
    assert (included["skipped"], included["extracted"], included["analyzer_runs"]) == (0, len(GENERATED), 1)
    with open_current(StateLayout(config, home / "state")) as gen:
        paths = {r["file_path"] for r in find_symbol(gen, {"name": "Greeter", "view": "full"})["results"]}
    assert paths == {"src/greeter.ts", "build/greeter.d.ts", "out/greeter.d.ts", "dist/legacy/index-Bq3xT9aZ.d.cts"}


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('[indexing]\ninclude_build_outputs = "yes"\n', "indexing.include_build_outputs"),
        (
            '[[repository]]\nname = "r"\npath = "."\nlanguages = ["ts"]\ninclude_build_outputs = 1\n',
            "repository[0].include_build_outputs",
        ),
    ],
)
def test_a_bad_flag_value_names_its_key(tmp_path: Path, body: str, key: str) -> None:
    path = tmp_path / "kivgraph.toml"
    path.write_text(body)
    with pytest.raises(ConfigError, match=re.escape(f"key '{key}'")):
        load(path)


def test_the_repository_setting_overrides_the_indexing_one(tmp_path: Path) -> None:
    path = tmp_path / "kivgraph.toml"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path.write_text(
        "[indexing]\ninclude_build_outputs = true\n"
        '[[repository]]\nname = "a"\npath = "a"\nlanguages = ["ts"]\n'
        '[[repository]]\nname = "b"\npath = "b"\nlanguages = ["ts"]\ninclude_build_outputs = false\n'
    )
    a, b = load(path).repositories
    assert a.include_build_outputs and not b.include_build_outputs
