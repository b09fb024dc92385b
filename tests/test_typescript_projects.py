"""tsconfig-aware exact TypeScript on a monorepo: project references, an inferred project, allowJs.

The fixture ``tests/fixtures/ts_monorepo`` (see tests/fixtures/README.md) is
analysed in place, once per language, by the real scip-typescript; the tree
is compared before and after so nothing may be written into it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.languages import typescript as ts
from indexer.languages.typescript import analyzer as scip_ts
from indexer.languages.typescript.projects import Plan, config_inputs
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.test_typescript_annotated import require_analyzer
from tests.typescript_corpus import BuiltTsCorpus, build_ts_corpus

pytestmark = pytest.mark.analyzers

FIXTURE = Path(__file__).parent / "fixtures" / "ts_monorepo"
REPO = "mono"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(root.rglob("*"))
    }


@dataclass
class Analysed:
    built: BuiltTsCorpus
    plans: dict[str, Plan]
    merged: Resolution
    before: dict[str, bytes]
    after: dict[str, bytes]

    def edges(self, kind: EdgeKind, source: str) -> set[str]:
        """Qualified names an exact ``kind`` edge from ``source`` reaches."""
        key = self.built.key(source)
        return {
            self.built.declarations[e.target].qualified_name
            for e in self.merged.edges
            if e.source == key
            and e.kind == kind
            and e.confidence == Confidence.EXACT_TYPECHECKED
            and e.provenance == Provenance.TYPESCRIPT_CHECKER
        }


@pytest.fixture(scope="module")
def analysed() -> Analysed:
    require_analyzer()
    before = _tree(FIXTURE)
    built = build_ts_corpus([(REPO, FIXTURE)])
    merged, plans = Resolution(), {}
    for language, corpus in built.corpora.items():
        (repo,) = corpus.repositories
        files = sorted(ff.path for ff in repo.files)
        plans[language] = scip_ts.plan(FIXTURE, files, timeout=60)
        exact = ExactPass(language)
        facts = scip_ts.analyze_repository(repo, corpus, timeout=120)
        exact.outcomes.append(scip_ts.bind(facts, REPO, corpus, scip_ts.ModuleTable(corpus)))
        both = merge(ts.resolve(corpus), exact)
        merged.edges += both.edges
        merged.unresolved += both.unresolved
    return Analysed(built, plans, merged, before, _tree(FIXTURE))


def _owner(plan: Plan, path: str) -> str:
    for config, files in plan.assigned.items():
        if path in files:
            return Path(config).relative_to(FIXTURE.resolve()).as_posix()
    return "<inferred>" if path in plan.inferred else "<none>"


def test_each_file_is_checked_in_the_project_whose_tsconfig_claims_it(analysed: Analysed) -> None:
    owners = {
        p: _owner(analysed.plans["typescript"], p)
        for p in (
            "packages/core/src/math.ts",
            "packages/core/src/index.ts",
            "packages/app/src/main.ts",
            "packages/core/src/math.test.ts",
            "scripts/report.ts",
        )
    }
    assert owners == {
        "packages/core/src/math.ts": "packages/core/tsconfig.json",
        "packages/core/src/index.ts": "packages/core/tsconfig.json",
        # reached only through the solution's `references` (no tsconfig.json in packages/app)
        "packages/app/src/main.ts": "packages/app/tsconfig.build.json",
        "packages/core/src/math.test.ts": "<inferred>",  # excluded by core's tsconfig
        "scripts/report.ts": "<inferred>",  # under no tsconfig but the solution, which lists no files
    }
    assert _owner(analysed.plans["javascript"], "packages/app/src/legacy.js") == "packages/app/tsconfig.build.json"
    # extends chains are the compiler's: the base config is what composite projects extend
    core = analysed.plans["typescript"].projects[str(FIXTURE.resolve() / "packages/core/tsconfig.json")]
    assert core.extended == (str(FIXTURE.resolve() / "tsconfig.base.json"),)


def test_app_calls_into_core_through_the_project_reference_are_exact_edges_to_core_source(analysed: Analysed) -> None:
    assert analysed.edges(EdgeKind.CALLS_DIRECT, "packages.app.src.main.run") == {
        "packages.core.src.math.Calculator",
        "packages.core.src.math.Calculator.add",
        "packages.core.src.math.square",
        "packages.app.src.legacy.scaled",
    }
    assert analysed.edges(EdgeKind.CALLS_DIRECT, "packages.app.src.main.Circle.area") == {
        "packages.core.src.math.square"
    }
    assert analysed.edges(EdgeKind.IMPLEMENTS, "packages.app.src.main.Circle") == {"packages.core.src.math.Shape"}
    assert "packages.core.src.math.Shape.area" in analysed.edges(
        EdgeKind.IMPLEMENTS, "packages.app.src.main.Circle.area"
    )
    # the import names the barrel's re-exported symbols by their declarations in core's source
    assert {"packages.core.src.math.Calculator", "packages.core.src.math.square"} <= analysed.edges(
        EdgeKind.IMPORTS_SYMBOL, "packages.app.src.main"
    )


def test_a_js_file_under_allow_js_calls_into_the_typescript_project_it_references(analysed: Analysed) -> None:
    assert analysed.edges(EdgeKind.CALLS_DIRECT, "packages.app.src.legacy.scaled") == {"packages.core.src.math.square"}


def test_files_no_tsconfig_claims_are_checked_in_the_inferred_project(analysed: Analysed) -> None:
    assert analysed.edges(EdgeKind.CALLS_DIRECT, "scripts.report.report") == {
        "packages.core.src.math.Calculator",
        "packages.core.src.math.Calculator.twice",
    }
    assert analysed.edges(EdgeKind.CALLS_DIRECT, "packages.core.src.math.test.checkSquare") == {
        "packages.core.src.math.square"
    }


def test_no_candidate_edge_is_left_where_the_checker_answered(analysed: Analysed) -> None:
    candidates = [e for e in analysed.merged.edges if e.confidence == Confidence.CANDIDATE]
    assert not candidates, [
        (analysed.built.declarations[e.source].qualified_name, analysed.built.declarations[e.target].qualified_name)
        for e in candidates
    ]


def test_nothing_is_written_into_the_repository(analysed: Analysed) -> None:
    assert analysed.after == analysed.before


def test_the_cache_key_follows_every_tsconfig_and_the_bases_they_extend(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    shutil.copytree(FIXTURE, root)
    built = build_ts_corpus([(REPO, root)])
    repo = built.corpora["typescript"].repositories[0]
    hashes = {REPO: {ff.path: "h" for ff in repo.files}}

    def key() -> bytes:
        return scip_ts.cache_key(repo, hashes, "analyzer")

    assert {p for p, _ in config_inputs(root)} == {
        "tsconfig.json",
        "tsconfig.base.json",
        "packages/core/tsconfig.json",
        "packages/app/tsconfig.build.json",
    }
    first = key()
    (root / "README.md").write_text("not a config\n")
    assert key() == first
    # the typescript run's key follows the javascript sources its programs read (hashes name only .ts files)
    legacy = root / "packages/app/src/legacy.js"
    legacy.write_text(legacy.read_text() + "\nexport const more = 1;\n")
    assert key() != first
    first = key()
    for config in ("tsconfig.base.json", "packages/app/tsconfig.build.json", "tsconfig.json"):
        path = root / config
        path.write_text(path.read_text().replace("{", "{ ", 1))
        changed = key()
        assert changed != first, config
        first = changed
    # a base in node_modules (an @tsconfig package) is an input too, though node_modules is never discovered
    base = root / "node_modules" / "@tsconfig" / "strict" / "tsconfig.json"
    base.parent.mkdir(parents=True)
    base.write_text('{"compilerOptions": {"strict": true}}')
    core = root / "packages/core/tsconfig.json"
    core.write_text(
        core.read_text().replace(
            '"extends": "../../tsconfig.base.json"', '"extends": ["../../tsconfig.base.json", "@tsconfig/strict"]'
        )
    )
    with_base = key()
    base.write_text('{"compilerOptions": {"strict": false}}')
    assert key() != with_base


def test_a_project_extending_a_config_that_is_not_there_leaves_its_files_to_the_inferred_project(
    tmp_path: Path,
) -> None:
    # a published tarball ships build/tools/tsconfig.json extending the monorepo's root config, not shipped
    require_analyzer()
    from tests.helpers import write_repo

    root = write_repo(
        tmp_path / "pkg",
        {
            "src/a.ts": "export function f(): number {\n  return 1;\n}\n",
            "tools/tsconfig.json": '{"extends": "../../tsconfig.json", "include": ["*.ts"]}',
            "tools/gen.ts": 'import { f } from "../src/a";\n\nexport const g = f();\n',
        },
    )
    built = build_ts_corpus([("pkg", root)])
    corpus = built.corpora["typescript"]
    (repo,) = corpus.repositories
    plan = scip_ts.plan(root, sorted(ff.path for ff in repo.files), timeout=120)
    assert plan.inferred == ["src/a.ts", "tools/gen.ts"] and not plan.assigned
    facts = scip_ts.analyze_repository(repo, corpus, timeout=120)  # before: "did not check 1 of 2 projects"
    out = scip_ts.bind(facts, "pkg", corpus, scip_ts.ModuleTable(corpus))
    assert (built.key("tools.gen.g"), built.key("src.a.f")) in {
        (e.source, e.target) for e in out.edges if e.kind == EdgeKind.CALLS_DIRECT
    }
