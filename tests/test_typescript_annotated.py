"""Annotated TypeScript/JavaScript resolution cases, CANDIDATE and exact (tests/annotated/typescript/README.md).

The real scip-typescript runs once per repository and language of each case,
in one module-scoped fixture. Never mocked: without the analyzer the module
skips loudly (``make setup`` installs it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.facts import EdgeFact
from indexer.languages import typescript as ts
from indexer.languages.typescript import analyzer as scip_ts
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import Case, Observed, Syntax, mismatches, parse_case
from tests.typescript_corpus import BuiltTsCorpus, build_ts_corpus

pytestmark = pytest.mark.analyzers

CASES_DIR = Path(__file__).parent / "annotated" / "typescript"
CASES = sorted(CASES_DIR.glob("*.ts"))
DEFAULT_REPO = "main"

EDGE_WORDS = {
    "calls": EdgeKind.CALLS_DIRECT,
    "refs": EdgeKind.REFERENCES,
    "imports": EdgeKind.IMPORTS_SYMBOL,
    "exports": EdgeKind.EXPORTS,
    "reexports": EdgeKind.REEXPORTS,
    "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS,
    "type": EdgeKind.TYPE_USES,
    "callback": EdgeKind.PASSES_AS_CALLBACK,
    "overrides": EdgeKind.OVERRIDES,
}
# An annotation without a mode is about the exact pass; ``candidate`` ones about the resolver alone.
SYNTAX = Syntax("//", EDGE_WORDS, modes=("candidate",), keep_annotations=False)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@dataclass
class Ran:
    case: Case
    built: BuiltTsCorpus
    candidate: Resolution
    merged: Resolution
    exact: list[ExactPass]
    untouched: bool


def run_case(case: Case, root: Path) -> Ran:
    repos = case.write(root)
    before = {repo: _tree(root / repo) for repo in repos}
    built = build_ts_corpus([(repo, root / repo) for repo in repos])
    candidate, merged, passes = Resolution(), Resolution(), []
    for language, corpus in built.corpora.items():
        cand = ts.resolve(corpus)
        exact = ExactPass(language)
        modules = scip_ts.ModuleTable(corpus)
        for repo in corpus.repositories:
            if repo.files:
                facts = scip_ts.analyze_repository(repo, corpus, timeout=120)
                exact.outcomes.append(scip_ts.bind(facts, repo.name, corpus, modules))
        both = merge(cand, exact)
        for res, into in ((cand, candidate), (both, merged)):
            into.edges += res.edges
            into.unresolved += res.unresolved
            into.package_dependencies += res.package_dependencies
        passes.append(exact)
    untouched = all(_tree(root / repo) == before[repo] for repo in repos)
    return Ran(case, built, candidate, merged, passes, untouched)


def require_analyzer() -> None:
    exe = scip_ts.executable()
    if not exe.exists():
        pytest.skip(f"SCIP-TYPESCRIPT UNAVAILABLE at {exe}: run `make setup` (python -m indexer.setup_analyzers)")


@pytest.fixture(scope="module")
def ran_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    require_analyzer()
    return {p.stem: run_case(parse_case(p, SYNTAX), tmp_path_factory.mktemp(p.stem)) for p in CASES}


def _is_exact(e: EdgeFact) -> bool:
    return e.confidence == Confidence.EXACT_TYPECHECKED and e.provenance == Provenance.TYPESCRIPT_CHECKER


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_annotated_typescript_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.stem]
    assert ran.case.expectations, "a case without expectations tests nothing"
    assert ran.untouched, "the analyzer wrote into a repository"
    for e in ran.candidate.edges:
        assert e.confidence == Confidence.CANDIDATE and e.provenance == Provenance.TREE_SITTER_SYNTAX
    observed = Observed()
    observed.add(ran.candidate.edges, ran.candidate.unresolved, ran.built.declarations, mode="candidate")
    observed.add(ran.merged.edges, ran.merged.unresolved, ran.built.declarations, keep=_is_exact)
    failures = mismatches(ran.case, observed, EDGE_WORDS)
    for name, value in ran.case.directives:
        assert name == "uncalled", f"unknown directive !{name}"
        key = ran.built.key(value)
        calls = [e for e in ran.merged.edges if e.target == key and e.kind == EdgeKind.CALLS_DIRECT]
        if calls:
            failures.append(f"!uncalled {value}: called by {calls}")
    assert not failures, "\n".join(failures)


def test_every_case_ran_the_analyzer_in_exact_mode(ran_cases: dict[str, Ran]) -> None:
    for name, ran in ran_cases.items():
        exact_edges = [e for e in ran.merged.edges if e.provenance == Provenance.TYPESCRIPT_CHECKER]
        assert exact_edges, f"{name}: no TYPESCRIPT_CHECKER edge"


def test_exports_and_reexports_are_recorded_but_are_not_uses(ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases["barrel"]
    helper = ran.built.key("src.lib.impl.helper")
    kinds = {
        EdgeKind(e.kind)
        for e in ran.merged.edges
        if e.target == helper and e.provenance == Provenance.TYPESCRIPT_CHECKER
    }
    assert EdgeKind.REEXPORTS in kinds and EdgeKind.CALLS_DIRECT in kinds
    barrel_module = ran.built.key("src.lib.index")
    from_barrel = {EdgeKind(e.kind) for e in ran.merged.edges if e.source == barrel_module}
    assert from_barrel <= {EdgeKind.REEXPORTS, EdgeKind.IMPORTS_SYMBOL}, from_barrel


def test_cross_repository_use_counts_and_records_the_package_dependency(ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases["cross_repository"]
    assert sum(o.cross_repository for p in ran.exact for o in p.outcomes) >= 3
    deps = {
        (d.consumer_repository, d.provider_repository, d.provider_package) for d in ran.candidate.package_dependencies
    }
    assert ("app", "provlib", "provlib") in deps
