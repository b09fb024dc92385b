"""The TypeScript exact pass end to end through the real CLI: exact mode, cache, and degradation when missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.languages.typescript import analyzer as scip_ts
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import run_kivgraph, write_repo
from tests.test_typescript_annotated import require_analyzer
from tests.typescript_corpus import build_ts_corpus

pytestmark = pytest.mark.analyzers

_FILES = {
    "src/a.ts": "export function f(): number {\n  return 1;\n}\n",
    "src/b.ts": "import { f } from './a';\n\nexport function g(): number {\n  return f();\n}\n",
    "src/c.js": "import { g } from './b';\n\nexport function h() {\n  return g();\n}\n",
}


def _index(home: Path, **env: str) -> dict[str, object]:
    result = run_kivgraph(home, "index", "--json", **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["result"]


def test_a_missing_analyzer_degrades_typescript_to_the_fallback_with_the_reason_in_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", _FILES)
    env = {scip_ts.EXECUTABLE_ENV: str(tmp_path / "no-such-scip-typescript")}
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript", **env).returncode == 0
    report = _index(home, **env)
    assert report["index"]["typescript"]["mode"] == "fallback"  # type: ignore[index]
    assert report["index"]["javascript"]["mode"] == "fallback"  # type: ignore[index]
    status = json.loads(run_kivgraph(home, "status", "--json", **env).stdout)
    reasons = {a["language"]: a["reason"] for a in status["repositories"][0]["analyses"]}
    assert reasons["typescript"].startswith("scip-typescript failed: scip-typescript not found at")
    assert set(status["edges_by_confidence"]) == {"CANDIDATE"}
    doctor = run_kivgraph(home, "doctor", **env).stdout
    assert "analyzer.typescript.exact: WARN (scip-typescript not found" in doctor


def test_typescript_and_javascript_index_exactly_and_the_analyzer_run_is_cached(tmp_path: Path) -> None:
    require_analyzer()
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", _FILES)
    before = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript,javascript").returncode == 0
    first = _index(home)
    index = first["index"]
    assert index["typescript"]["mode"] == "exact" and index["javascript"]["mode"] == "exact"  # type: ignore[index]
    assert index["typescript"]["analyzer_runs"] == 1  # type: ignore[index]
    assert "analyzer.typescript" in first["timings"]  # type: ignore[operator]
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")) == before  # nothing written
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    # b and c each import a module, a name from it and call that name: every edge is the checker's
    assert status["edges_by_confidence"] == {"EXACT_TYPECHECKED": 6}
    assert _index(home)["published"] is False  # unchanged: nothing published
    (home / "state" / "CURRENT").unlink()  # a run that must publish again takes the analyzer run from the cache
    second = _index(home)
    assert second["index"]["typescript"]["analyzer_runs"] == 0  # type: ignore[index]
    assert second["index"]["typescript"]["analyzer_cache_hits"] == 1  # type: ignore[index]


def test_a_foreign_symbol_binds_only_to_the_single_registered_provider_of_its_package(tmp_path: Path) -> None:
    lib = "export function start(): number {\n  return 1;\n}\n"
    write_repo(tmp_path / "a", {"package.json": '{"name": "only"}', "src/index.ts": lib})
    write_repo(tmp_path / "b", {"package.json": '{"name": "dup"}', "src/index.ts": lib})
    write_repo(tmp_path / "c", {"package.json": '{"name": "dup"}', "src/index.ts": lib})
    write_repo(tmp_path / "main", {"use.ts": "export function go(): number {\n  return 1;\n}\n"})
    built = build_ts_corpus([(n, tmp_path / n) for n in ("main", "a", "b", "c")])
    corpus = built.corpora["typescript"]

    def use(package: str, file: str, member: str, col: int) -> scip_ts.TsUse:
        return scip_ts.TsUse("use.ts", 2, col, "use.go", "function", "call", package=package, file=file, member=member)

    facts = scip_ts.RepositoryTsFacts(
        "scip-typescript 0.4.0",
        uses=(
            use("only", "src/index.ts", "start", 10),
            use("dup", "src/index.ts", "start", 20),
            use("react", "index.d.ts", "useState", 30),
            use("only", "dist/index.d.ts", "start", 40),
        ),
    )
    out = scip_ts.bind(facts, "main", corpus, scip_ts.ModuleTable(corpus))
    (edge,) = out.edges
    assert (
        EdgeKind(edge.kind),
        built.declarations[edge.target].repository,
        built.declarations[edge.target].qualified_name,
    ) == (EdgeKind.CALLS_DIRECT, "a", "src.index.start")
    assert (edge.confidence, edge.provenance) == (Confidence.EXACT_TYPECHECKED, Provenance.TYPESCRIPT_CHECKER)
    assert out.cross_repository == 1
    assert sorted((u.reason, u.col) for u in out.unresolved) == [
        ("AMBIGUOUS_PACKAGE_PROVIDER", 20),
        ("DECLARATION_SOURCE_NOT_MAPPED", 40),
    ]
    assert {col for _src, _line, col in out.covered} == {10, 20, 30, 40}
