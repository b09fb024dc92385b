"""Annotated TypeScript/JavaScript resolution cases, CANDIDATE and exact (tests/annotated/typescript/README.md).

The real scip-typescript runs once per repository and language of each case,
in one module-scoped fixture. Never mocked: without the analyzer the module
skips loudly (``make setup`` installs it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.languages import typescript as ts
from indexer.languages.typescript import analyzer as scip_ts
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.typescript_corpus import BuiltTsCorpus, build_ts_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "typescript"
CASES = sorted(CASES_DIR.glob("*.ts"))
DEFAULT_REPO = "main"

_MARKER = re.compile(r"^// --- path: (?:(?P<repo>[\w.-]+):)?(?P<path>\S+) ---\s*$")
_ANNOTATION = re.compile(r"^\s*//\s*\^\s*(?P<body>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\s*//\s*!(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
EDGE_WORDS = {
    "calls": EdgeKind.CALLS_DIRECT, "refs": EdgeKind.REFERENCES, "imports": EdgeKind.IMPORTS_SYMBOL,
    "exports": EdgeKind.EXPORTS, "reexports": EdgeKind.REEXPORTS, "extends": EdgeKind.EXTENDS,
    "implements": EdgeKind.IMPLEMENTS, "type": EdgeKind.TYPE_USES, "callback": EdgeKind.PASSES_AS_CALLBACK,
    "overrides": EdgeKind.OVERRIDES,
}


@dataclass(frozen=True)
class Expectation:
    repo: str
    path: str
    line: int
    col: int
    mode: str  # "exact" | "candidate"
    word: str
    value: str
    source: str
    where: str


@dataclass
class TsCase:
    files: dict[tuple[str, str], str]
    expectations: list[Expectation]
    directives: list[tuple[str, str]] = field(default_factory=list)


def parse_ts_case(path: Path) -> TsCase:
    files: dict[tuple[str, str], list[str]] = {}
    expectations: list[Expectation] = []
    directives: list[tuple[str, str]] = []
    current: tuple[str, str] | None = None
    code_line, code_text = 0, ""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        where = f"{path.name}:{number}"
        marker = _MARKER.match(text)
        if marker:
            current = (marker["repo"] or DEFAULT_REPO, marker["path"])
            files[current] = []
            code_line = 0
            continue
        if current is None:
            assert not text.strip() or text.startswith("//"), f"{where}: code before a marker"
            continue
        annotation, directive = _ANNOTATION.match(text), _DIRECTIVE.match(text)
        if annotation:
            col = text.index("^")
            assert code_line and col < len(code_text) and not code_text[col].isspace(), \
                f"{where}: the caret points at nothing in {code_text!r}"
            body = annotation["body"]
            mode = "exact"
            if body.startswith("candidate "):
                mode, body = "candidate", body[len("candidate "):]
            word, _, rest = body.partition(":")
            word = word.strip()
            assert word in EDGE_WORDS or word in ("unresolved", "none"), f"{where}: unknown annotation {body!r}"
            value, _, source = rest.strip().partition(" from ")
            expectations.append(Expectation(*current, code_line, col, mode, word, value.strip(), source.strip(), where))
            continue
        if directive:
            directives.append((directive["name"], directive["value"]))
            continue
        files[current].append(text)
        code_line, code_text = len(files[current]), text
    return TsCase({k: "\n".join(v) + "\n" for k, v in files.items()}, expectations, directives)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@dataclass
class Ran:
    case: TsCase
    built: BuiltTsCorpus
    candidate: Resolution
    merged: Resolution
    exact: list[ExactPass]
    untouched: bool


def run_case(case: TsCase, root: Path) -> Ran:
    repos: list[str] = []
    for (repo, rel), text in case.files.items():
        if repo not in repos:
            repos.append(repo)
        target = root / repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
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
    return {p.stem: run_case(parse_ts_case(p), tmp_path_factory.mktemp(p.stem)) for p in CASES}


def _matches(expected: str, repo: str, qn: str) -> bool:
    exp_repo, sep, exp_qn = expected.rpartition(":")
    return qn == exp_qn and (not sep or exp_repo == repo)


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_annotated_typescript_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.stem]
    assert ran.case.expectations, "a case without expectations tests nothing"
    assert ran.untouched, "the analyzer wrote into a repository"
    decl = ran.built.declarations
    at: dict[tuple[str, str, str, int, int], list[tuple[EdgeKind, str, str, str]]] = defaultdict(list)
    for mode, res in (("candidate", ran.candidate), ("exact", ran.merged)):
        for e in res.edges:
            exact = e.confidence == Confidence.EXACT_TYPECHECKED and e.provenance == Provenance.TYPESCRIPT_CHECKER
            if (mode == "exact") != exact:
                continue
            if mode == "candidate":
                assert e.confidence == Confidence.CANDIDATE and e.provenance == Provenance.TREE_SITTER_SYNTAX
            s, d = decl[e.source], decl[e.target]
            at[(mode, s.repository, s.path, e.line, e.col)].append(
                (EdgeKind(e.kind), d.repository, d.qualified_name, s.qualified_name))
    unresolved: dict[tuple[str, str, str, int, int], list[str]] = defaultdict(list)
    for mode, res in (("candidate", ran.candidate), ("exact", ran.merged)):
        for u in res.unresolved:
            unresolved[(mode, u.repository, u.path, u.line, u.col)].append(u.reason)
    groups: dict[tuple[str, str, str, int, int], list[Expectation]] = defaultdict(list)
    for exp in ran.case.expectations:
        groups[(exp.mode, exp.repo, exp.path, exp.line, exp.col)].append(exp)
    failures: list[str] = []
    for pos, exps in groups.items():
        edges, reasons, where = at.get(pos, []), sorted(unresolved.get(pos, [])), exps[0].where
        if any(e.word == "none" for e in exps):
            if edges:
                failures.append(f"{where}: expected no edge, got {edges}")
            continue
        for word, kind in EDGE_WORDS.items():
            wanted = [e for e in exps if e.word == word]
            if not wanted:
                continue
            actual = [(r, q, src) for k, r, q, src in edges if k == kind]
            missing = [e.value for e in wanted if not any(_matches(e.value, r, q) for r, q, _ in actual)]
            extra = [f"{r}:{q}" for r, q, _ in actual if not any(_matches(e.value, r, q) for e in wanted)]
            if missing or extra:
                failures.append(f"{where}: {pos[0]} {word} missing {missing} unexpected {extra} (all: {edges})")
            for e in wanted:
                if e.source and any(src != e.source for r, q, src in actual if _matches(e.value, r, q)):
                    failures.append(f"{where}: {word} {e.value} expected from {e.source}, got {actual}")
        wanted_reasons = sorted(e.value for e in exps if e.word == "unresolved")
        if wanted_reasons and wanted_reasons != reasons:
            failures.append(f"{where}: {pos[0]} unresolved expected {wanted_reasons}, got {reasons}")
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
    kinds = {EdgeKind(e.kind) for e in ran.merged.edges
             if e.target == helper and e.provenance == Provenance.TYPESCRIPT_CHECKER}
    assert EdgeKind.REEXPORTS in kinds and EdgeKind.CALLS_DIRECT in kinds
    barrel_module = ran.built.key("src.lib.index")
    from_barrel = {EdgeKind(e.kind) for e in ran.merged.edges if e.source == barrel_module}
    assert from_barrel <= {EdgeKind.REEXPORTS, EdgeKind.IMPORTS_SYMBOL}, from_barrel


def test_cross_repository_use_counts_and_records_the_package_dependency(ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases["cross_repository"]
    assert sum(o.cross_repository for p in ran.exact for o in p.outcomes) >= 3
    deps = {(d.consumer_repository, d.provider_repository, d.provider_package)
            for d in ran.candidate.package_dependencies}
    assert ("app", "provlib", "provlib") in deps
