"""Exact Go resolution with the real go/types helper: annotated cases, untouched repositories, degradation.

The helper runs once per repository of each case in one module-scoped
fixture (format of the cases in tests/annotated/go/README.md). Never mocked:
without a go toolchain the module skips loudly.
"""

from __future__ import annotations

import re
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
from tests.go_corpus import build_go_corpus
from tests.python_corpus import BuiltCorpus

CASES_DIR = Path(__file__).parent / "annotated" / "go"
CASES = sorted(CASES_DIR.glob("*.go.txt"))
DEFAULT_REPO = "main"

_MARKER = re.compile(r"^// --- path: (?:(?P<repo>[\w.-]+):)?(?P<path>\S+) ---\s*$")
_ANNOTATION = re.compile(r"^\s*//\s*\^\s*(?P<body>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\s*//\s*!(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
_EDGE_WORDS = {
    "calls": EdgeKind.CALLS_DIRECT,
    "refs": EdgeKind.REFERENCES,
    "type": EdgeKind.TYPE_USES,
    "callback": EdgeKind.PASSES_AS_CALLBACK,
    "embeds": EdgeKind.EMBEDS,
    "implements": EdgeKind.IMPLEMENTS,
    "assigns": EdgeKind.ASSIGNS_FUNCTION,
}


@dataclass(frozen=True)
class Expectation:
    repo: str
    path: str
    line: int
    col: int
    word: str
    value: str
    source: str
    where: str


@dataclass
class Case:
    files: dict[tuple[str, str], str]
    expectations: list[Expectation]
    directives: list[tuple[str, str]]


def parse_case(path: Path) -> Case:
    files: dict[tuple[str, str], list[str]] = {}
    expectations: list[Expectation] = []
    directives: list[tuple[str, str]] = []
    current: tuple[str, str] | None = None
    code_line, code_text = 0, ""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        where = f"{path.name}:{number}"
        marker = _MARKER.match(text)
        directive = _DIRECTIVE.match(text)
        if marker:
            current = (marker["repo"] or DEFAULT_REPO, marker["path"])
            files[current] = []
            code_line = 0
            continue
        if directive:
            directives.append((directive["name"], directive["value"]))
        if current is None:
            assert not text.strip() or text.lstrip().startswith("//"), f"{where}: code before a marker"
            continue
        lines = files[current]
        lines.append(text)
        annotation = _ANNOTATION.match(text)
        if annotation:
            assert code_line, f"{where}: annotation with no code line above"
            col = text.index("^")
            assert col < len(code_text) and not code_text[col].isspace(), f"{where}: caret points at nothing"
            body = annotation["body"]
            if body == "none":
                expectations.append(Expectation(*current, code_line, col, "none", "", "", where))
                continue
            word, _, rest = body.partition(":")
            assert word.strip() in _EDGE_WORDS or word.strip() == "unresolved", f"{where}: unknown {body!r}"
            value, _, source = rest.strip().partition(" from ")
            expectations.append(Expectation(*current, code_line, col, word.strip(), value.strip(), source.strip(),
                                            where))
        elif not directive:
            code_line, code_text = len(lines), text
    return Case({k: "\n".join(v) + "\n" for k, v in files.items()}, expectations, directives)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories (each with a go.mod) under ``root``; their names in order."""
    repos: list[str] = []
    for repo, rel in case.files:
        if repo not in repos:
            repos.append(repo)
        target = root / repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case.files[(repo, rel)])
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
            case = parse_case(case_path)
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


def _matches(expected: str, repo: str, qn: str) -> bool:
    exp_repo, sep, exp_qn = expected.rpartition(":")
    return qn == exp_qn and (not sep or exp_repo == repo)


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_exact_annotated_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.name]
    assert ran.case.expectations, "a case without expectations tests nothing"
    assert ran.untouched, "the analyzer wrote into a repository"
    edges_at: dict[tuple[str, str, int, int], list[tuple[EdgeKind, str, str, str, int]]] = defaultdict(list)
    for edge in ran.resolution.edges:
        src = ran.built.declarations[edge.source]
        dst = ran.built.declarations[edge.target]
        edges_at[(src.repository, src.path, edge.line, edge.col)].append(
            (EdgeKind(edge.kind), dst.repository, dst.qualified_name, src.qualified_name, edge.confidence))
    unresolved_at: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    for row in ran.resolution.unresolved:
        unresolved_at[(row.repository, row.path, row.line, row.col)].append(row.reason)
    by_position: dict[tuple[str, str, int, int], list[Expectation]] = defaultdict(list)
    for exp in ran.case.expectations:
        by_position[(exp.repo, exp.path, exp.line, exp.col)].append(exp)
    failures: list[str] = []
    for pos, exps in by_position.items():
        edges = edges_at.get(pos, [])
        reasons = sorted(unresolved_at.get(pos, []))
        where = exps[0].where
        if any(e.word == "none" for e in exps):
            if edges or reasons:
                failures.append(f"{where}: expected nothing, got {edges} {reasons}")
            continue
        for word, kind in _EDGE_WORDS.items():
            wanted = [e for e in exps if e.word == word]
            if not wanted:
                continue
            actual = [(r, q, s, c) for k, r, q, s, c in edges if k == kind]
            missing = [e.value for e in wanted if not any(_matches(e.value, r, q) for r, q, _, _ in actual)]
            extra = [f"{r}:{q}" for r, q, _, _ in actual if not any(_matches(e.value, r, q) for e in wanted)]
            if missing or extra:
                failures.append(f"{where}: {word} missing {missing} unexpected {extra} (edges here: {edges})")
            if any(c != Confidence.EXACT_TYPECHECKED for _, _, _, c in actual):
                failures.append(f"{where}: {word} edges are not all EXACT_TYPECHECKED: {actual}")
            for e in wanted:
                if e.source and any(s != e.source for r, q, s, _ in actual if _matches(e.value, r, q)):
                    failures.append(f"{where}: {word} {e.value} expected from {e.source}, got {actual}")
        wanted_reasons = sorted(e.value for e in exps if e.word == "unresolved")
        if wanted_reasons != reasons:
            failures.append(f"{where}: unresolved expected {wanted_reasons}, got {reasons}")
    for name, value in ran.case.directives:
        if name == "uncalled":
            key = ran.built.key(value)
            incoming = [ran.built.edge_row(e) for e in ran.resolution.edges if e.target == key]
            if incoming:
                failures.append(f"!uncalled {value}: incoming {incoming}")
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
    (tmp_path / "x_test.go").write_text("package x\n\nimport \"testing\"\n\nfunc TestG(t *testing.T) { _ = G() }\n")
    (tmp_path / "y_test.go").write_text(
        "package x_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/x\"\n)\n\nfunc TestF(t *testing.T) { _ = x.F() }\n")
    facts = analyzer.facts_from_output(analyzer.run_helper(tmp_path, timeout=120), tmp_path.resolve())
    calls = sorted((u.path, u.source_qn, u.package, u.qualified_name) for u in facts.uses if u.use == "call")
    assert calls == [
        ("x.go", "F", "example.com/x", "G"),
        ("x_test.go", "TestG", "example.com/x", "G"),
        ("y_test.go", "TestF", "example.com/x", "F"),
    ]
    assert not facts.problems and facts.type_errors == 0
