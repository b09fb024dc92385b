"""Exact Go resolution with the real go/types helper: annotated cases, untouched repositories, degradation.

The helper runs once per repository of each case in one module-scoped
fixture (format of the cases in tests/annotated/go/README.md). Never mocked:
without a go toolchain the module skips loudly.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.languages.go import analyzer
from indexer.languages.go import resolve as resolve_go
from snapshot_format.vocab import Confidence, EdgeKind
from tests.annotated_cases import Case, Observed, Syntax, mismatches, parse_case
from tests.go_corpus import build_go_corpus
from tests.python_corpus import BuiltCorpus

pytestmark = pytest.mark.analyzers

CASES_DIR = Path(__file__).parent / "annotated" / "go"
CASES = sorted(CASES_DIR.glob("*.go.txt"))
DEFAULT_REPO = "main"

SYNTAX = Syntax(
    "//",
    {
        "calls": EdgeKind.CALLS_DIRECT,
        "refs": EdgeKind.REFERENCES,
        "type": EdgeKind.TYPE_USES,
        "callback": EdgeKind.PASSES_AS_CALLBACK,
        "embeds": EdgeKind.EMBEDS,
        "implements": EdgeKind.IMPLEMENTS,
        "assigns": EdgeKind.ASSIGNS_FUNCTION,
    },
)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories (each with a go.mod) under ``root``; their names in order."""
    repos = case.write(root)
    modules = {repo: f"example.com/{repo}" for repo in repos}
    requires: dict[str, list[str]] = defaultdict(list)
    for name, value in case.directives:
        if name == "module":
            repo, path = value.split()
            modules[repo] = path
        elif name == "requires":
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            requires[consumer].append(provider)
    for repo in repos:
        req = "".join(f"require {modules[p]} v0.0.0\n" for p in requires[repo])
        (root / repo / "go.mod").write_text(f"module {modules[repo]}\n\ngo 1.22\n\n{req}")
    return repos


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution
    untouched: bool


@pytest.fixture(scope="module")
def state_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kivgraph-home")


@pytest.fixture(scope="module")
def ran_cases(tmp_path_factory: pytest.TempPathFactory, state_home: Path) -> dict[str, Ran]:
    if shutil.which("go") is None:
        pytest.skip("GO TOOLCHAIN UNAVAILABLE: the exact Go pass cannot be tested")
    mp = pytest.MonkeyPatch()
    mp.setenv("KIVGRAPH_HOME", str(state_home))
    out: dict[str, Ran] = {}
    try:
        for case_path in CASES:
            case = parse_case(case_path, SYNTAX)
            root = tmp_path_factory.mktemp(case_path.name.split(".")[0])
            repos = write_case(case, root)
            before = {repo: _tree(root / repo) for repo in repos}
            built = build_go_corpus([(repo, root / repo) for repo in repos])
            candidate = resolve_go(built.corpus)
            exact = ExactPass("go")
            modules = analyzer.ModuleTable(built.corpus)
            for repo in built.corpus.repositories:
                facts = analyzer.analyze_repository(repo, built.corpus, timeout=120)
                assert facts.type_errors == 0, f"{case_path.name} {repo.name}: type errors"
                exact.outcomes.append(analyzer.bind(facts, repo.name, built.corpus, modules))
            untouched = all(_tree(root / repo) == before[repo] for repo in repos)
            out[case_path.name] = Ran(case, built, merge(candidate, exact), untouched)
    finally:
        mp.undo()
    return out


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_exact_annotated_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.name]
    assert ran.case.expectations, "a case without expectations tests nothing"
    assert ran.untouched, "the analyzer wrote into a repository"
    observed = Observed().add(ran.resolution.edges, ran.resolution.unresolved, ran.built.declarations)
    failures = mismatches(ran.case, observed, SYNTAX.words, exact=lambda _e: True)
    for name, value in ran.case.directives:
        if name == "uncalled":
            key = ran.built.key(value)
            incoming = [ran.built.edge_row(e) for e in ran.resolution.edges if e.target == key]
            if incoming:
                failures.append(f"!uncalled {value}: incoming {incoming}")
        elif name not in ("module", "requires"):  # module/requires shape the go.mod files (write_case)
            failures.append(f"unknown directive !{name}")
    assert not failures, "\n".join(failures)


def test_the_workspace_lives_in_the_state_directory(ran_cases: dict[str, Ran], state_home: Path) -> None:
    works = list((state_home / "state" / "go" / "workspaces").glob("*/go.work"))
    assert works, "the cross-repository case wrote no go.work in the state directory"
    text = works[0].read_text()
    assert "use (" in text and "/lib" in text and "/app" in text


def test_a_missing_toolchain_falls_back_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "go.mod").write_text("module example.com/x\n\ngo 1.22\n")
    (tmp_path / "x.go").write_text("package x\n\nfunc F() int { return G() }\n\nfunc G() int { return 1 }\n")
    monkeypatch.setenv(analyzer.GO_ENV, str(tmp_path / "no-such-go"))
    built = build_go_corpus([("x", tmp_path)])
    pass_ = ExactPass("go")
    from indexer.exact_pass import run_exact
    from indexer.fact_cache import FactCache

    with FactCache(tmp_path / "cache", "on") as cache:
        result = run_exact("go", built.corpus, {"x": {"x.go": "h"}}, cache, timeout=30)
    assert result is not None
    analysis = result.analyses["x"]
    assert analysis.mode == "fallback"
    assert "go toolchain not found" in analysis.reason and "no-such-go" in analysis.reason
    merged = merge(resolve_go(built.corpus), result)
    assert [built.edge_row(e) for e in merged.edges] == [("CALLS_DIRECT", "F", "G")]
    assert all(e.confidence == Confidence.CANDIDATE for e in merged.edges)
    assert not pass_.outcomes


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain")
def test_test_files_are_type_checked_once(tmp_path: Path) -> None:
    """In-package and external test files are analysed; a package's files shared with its test variant once."""
    (tmp_path / "go.mod").write_text("module example.com/x\n\ngo 1.22\n")
    (tmp_path / "x.go").write_text("package x\n\nfunc F() int { return G() }\n\nfunc G() int { return 1 }\n")
    (tmp_path / "x_test.go").write_text('package x\n\nimport "testing"\n\nfunc TestG(t *testing.T) { _ = G() }\n')
    (tmp_path / "y_test.go").write_text(
        'package x_test\n\nimport (\n\t"testing"\n\n\t"example.com/x"\n)\n\nfunc TestF(t *testing.T) { _ = x.F() }\n'
    )
    facts = analyzer.facts_from_output(analyzer.run_helper(tmp_path, timeout=120), tmp_path.resolve())
    calls = sorted((u.path, u.source_qn, u.package, u.qualified_name) for u in facts.uses if u.use == "call")
    assert calls == [
        ("x.go", "F", "example.com/x", "G"),
        ("x_test.go", "TestG", "example.com/x", "G"),
        ("y_test.go", "TestF", "example.com/x", "F"),
    ]
    assert not facts.problems and facts.type_errors == 0
