"""Exact Go resolution with the real go/types helper: annotated cases, untouched repositories, degradation.

The helper runs once per repository of each case in one module-scoped
fixture (format of the cases in tests/annotated/go/README.md). A case with
``!blast`` or ``!references`` directives is also indexed by the real CLI and
those questions asked of its generation through the tools. Never mocked:
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
from server.tools.references import find_references
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence, EdgeKind
from tests.annotated_cases import Case, Observed, Syntax, mismatches, parse_case, split_target
from tests.go_corpus import build_go_corpus
from tests.helpers import run_kivgraph
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
    """Write a case's repositories (each with a go.mod) under ``root``; the names of those registered, in order.

    A repository named by ``!outside: NAME`` is a module on disk that no one registers (a dependency the graph
    does not hold): its requirers reach it through a ``replace`` to its directory.
    """
    repos = case.write(root)
    modules = {repo: f"example.com/{repo}" for repo in repos}
    requires: dict[str, list[str]] = defaultdict(list)
    outside = {value.strip() for name, value in case.directives if name == "outside"}
    for name, value in case.directives:
        if name == "module":
            repo, path = value.split()
            modules[repo] = path
        elif name == "requires":
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            requires[consumer].append(provider)
    for repo in repos:
        req = "".join(f"require {modules[p]} v0.0.0\n" for p in requires[repo])
        req += "".join(f"replace {modules[p]} => ../{p}\n" for p in requires[repo] if p in outside)
        (root / repo / "go.mod").write_text(f"module {modules[repo]}\n\ngo 1.22\n\n{req}")
    return [repo for repo in repos if repo not in outside]


# Questions a case asks of its generation: ``!blast: QN -> ROW, ROW | VERDICT [dispatch_unknown] [blind:IN ...]
# [outside:NAME ...]`` (IN: the declaration each blind spot is in; NAME: each interface method outside the graph
# the root implements, ``completeness.implements_outside``) and
# ``!references: QN [KIND,KIND] -> ROW, ROW | unbound N``; a ROW is ``QN`` or ``QN via QN`` (dispatch).
QUERY_DIRECTIVES = ("blast", "references")


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution
    untouched: bool
    home: Path | None = None  # the KIVGRAPH_HOME the case was indexed into, when it asks questions


def index_case(root: Path, repos: list[str], home: Path) -> Path:
    """Index a written case with the real CLI (``kivgraph init`` + ``index``) into ``home``."""
    init = run_kivgraph(home, "init", *(f"--repository={r}={root / r}" for r in repos), "--languages", "go")
    assert init.returncode == 0, init.stderr
    indexed = run_kivgraph(home, "index", "--json")
    assert indexed.returncode == 0, indexed.stderr
    return home


def _unmatched(want: set[str], got: set[tuple[str, str, str]]) -> tuple[list[str], list[str]]:
    """Expected rows (``[repo:]QN [via QN]``) with no answer row, and answer rows (repo, QN, via) none expects."""
    parsed = []
    for row in want:
        target, _, via = row.partition(" via ")
        repo, qn = split_target(target.strip())
        parsed.append((row, repo, qn, split_target(via.strip())[1] if via else ""))

    def hit(expected: tuple[str, str | None, str, str], actual: tuple[str, str, str]) -> bool:
        _row, repo, qn, via = expected
        return actual[1] == qn and actual[2] == via and repo in (None, actual[0])

    missing = sorted(e[0] for e in parsed if not any(hit(e, a) for a in got))
    extra = sorted(
        f"{a[0]}:{a[1]}" + (f" via {a[2]}" if a[2] else "") for a in got if not any(hit(e, a) for e in parsed)
    )
    return missing, extra


def query_failures(case: Case, gen: Generation) -> list[str]:
    """Every ``!blast`` / ``!references`` directive the generation's answers do not meet."""
    failures: list[str] = []
    for name, value in case.directives:
        if name not in QUERY_DIRECTIVES:
            continue
        subject, _, rest = value.partition("->")
        rows_text, _, tail = rest.partition("|")
        target, *kinds = subject.split()
        repo, qn = split_target(target)
        selector: dict[str, object] = {"qualified_name": qn, "view": "full"}
        if repo:
            selector["repository"] = repo
        want = {r.strip() for r in rows_text.split(",") if r.strip()}
        words = tail.split()
        if name == "blast":
            answer = get_blast_radius(gen, selector)
            got = {
                (s["repository"], s["qualified_name"], s.get("dispatch_via", "")) for s in answer["results"]["symbols"]
            }
            c = answer["completeness"]
            blind = sorted(f"blind:{b.get('in', '')}" for b in c.get("blind_spots", []))
            outside = sorted(f"outside:{name}" for name in c.get("implements_outside", []))
            if (
                c["verdict"] != words[0]
                or ("dispatch_unknown" in words) != bool(c.get("dispatch_unknown"))
                or blind != sorted(w for w in words if w.startswith("blind:"))
                or outside != sorted(w for w in words if w.startswith("outside:"))
            ):
                failures.append(f"!blast {value}: completeness {c}")
        else:
            if kinds:
                selector["edge_kinds"] = kinds[0].split(",")
            answer = find_references(gen, selector)
            got = {(r["repository"], r["qualified_name"], r.get("via", "")) for r in answer["results"]["references"]}
            unbound = answer["coverage"]["unresolved_related"]
            if words[:1] != ["unbound"] or unbound != int(words[1]):
                failures.append(f"!references {value}: {unbound} unresolved related, guidance {answer.get('guidance')}")
        missing, extra = _unmatched(want, got)
        if missing or extra:
            failures.append(f"!{name} {value}: missing {missing} unexpected {extra}")
    return failures


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
            before = {repo: _tree(root / repo) for repo in case.repositories()}
            built = build_go_corpus([(repo, root / repo) for repo in repos])
            candidate = resolve_go(built.corpus)
            exact = ExactPass("go")
            modules = analyzer.ModuleTable(built.corpus)
            for repo in built.corpus.repositories:
                facts = analyzer.analyze_repository(repo, built.corpus, timeout=120)
                assert facts.type_errors == 0, f"{case_path.name} {repo.name}: type errors"
                exact.outcomes.append(analyzer.bind(facts, repo.name, built.corpus, modules))
            untouched = all(_tree(root / repo) == before[repo] for repo in before)
            home = None
            if any(name in QUERY_DIRECTIVES for name, _ in case.directives):
                home = index_case(root, repos, tmp_path_factory.mktemp(f"home-{case_path.name.split('.')[0]}"))
            out[case_path.name] = Ran(case, built, merge(candidate, exact), untouched, home)
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
        elif name not in ("module", "requires", "outside", *QUERY_DIRECTIVES):  # these shape the go.mod files
            failures.append(f"unknown directive !{name}")
    if ran.home is not None:
        gen = open_current(StateLayout(ran.home / "kivgraph.toml", ran.home / "state"))
        try:
            failures += query_failures(ran.case, gen)
        finally:
            gen.close()
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
