"""Exact Python resolution with the real scip-python: annotated cases, an untouched repository, degradation.

scip-python runs once per repository of each case, in one module-scoped
fixture; the cases' files live in tests/annotated/python_exact (format in its
README.md). Never mocked: if the analyzer is absent the module skips loudly
(``make setup`` installs it).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.facts import EdgeFact
from indexer.languages.python import analyzer as scip_python
from indexer.languages.python.adapter import ADAPTER
from indexer.languages.spec import ExactOutcome
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import Case, Observed, mismatches, parse_case
from tests.helpers import run_kivgraph, write_repo
from tests.python_corpus import BuiltCorpus, build_corpus
from tests.test_python_annotated import SYNTAX, stands_failures

pytestmark = pytest.mark.analyzers

CASES_DIR = Path(__file__).parent / "annotated" / "python_exact"
# Cases of the CANDIDATE resolver the analyzer must answer alike (the same file, run in both harnesses).
SHARED_CASES = [Path(__file__).parent / "annotated" / "python" / "stubs.py"]
# Cases whose edges the checker cannot make (pytest fills a test's parameters at run time): the CANDIDATE
# resolver's answers must survive the exact pass as they are, candidates beside the checker's exact edges.
CANDIDATE_KEPT = [Path(__file__).parent / "annotated" / "python" / "pytest_fixtures.py"]
CASES = sorted(CASES_DIR.glob("*.py")) + SHARED_CASES


def _require_analyzer() -> None:
    exe = scip_python.executable()
    if not exe.exists():
        pytest.skip(f"SCIP-PYTHON UNAVAILABLE at {exe}: run `make setup` (python -m indexer.setup_analyzers)")


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


class Ran:
    def __init__(
        self, case: Case, built: BuiltCorpus, resolution: Resolution, exact: ExactPass, untouched: bool
    ) -> None:
        self.case, self.built, self.resolution, self.exact, self.untouched = (case, built, resolution, exact, untouched)


@pytest.fixture(scope="module")
def ran_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    _require_analyzer()
    out: dict[str, Ran] = {}
    for case_path in [*CASES, *CANDIDATE_KEPT]:
        case = parse_case(case_path, SYNTAX)
        root = tmp_path_factory.mktemp(case_path.stem)
        repos = case.write(root)
        before = {repo: _tree(root / repo) for repo in repos}
        built = build_corpus([(repo, root / repo) for repo in repos])
        candidate = built.resolve()
        exact = ExactPass("python")
        modules = scip_python.ModuleTable(built.corpus)
        for repo in built.corpus.repositories:
            facts = scip_python.analyze_repository(repo, built.corpus, timeout=120)
            exact.outcomes.append(ADAPTER.bind(facts, repo.name, built.corpus, modules))
        untouched = all(_tree(root / repo) == before[repo] for repo in repos)
        out[case_path.stem] = Ran(case, built, merge(candidate, exact), exact, untouched)
    return out


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_exact_annotated_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.stem]
    assert ran.case.expectations, "a case without expectations tests nothing"
    for edge in ran.resolution.edges:
        if Confidence(edge.confidence) == Confidence.EXACT_TYPECHECKED:
            assert edge.provenance in (Provenance.PYTHON_INDEXER_USE, Provenance.PYTHON_INDEXER_DEF)
        elif edge.kind == EdgeKind.STANDS_FOR:  # a relation Python's import rules make certain, never a use
            assert (edge.confidence, edge.provenance) == (
                Confidence.STRUCTURAL_CERTAIN,
                Provenance.PYTHON_IMPORT_SYSTEM,
            )
        else:
            assert not Confidence(edge.confidence).is_exact

    def is_exact(e: EdgeFact) -> bool:
        return Confidence(e.confidence) == Confidence.EXACT_TYPECHECKED

    exact = Observed().add(ran.resolution.edges, ran.resolution.unresolved, ran.built.declarations, keep=is_exact)
    failures = mismatches(ran.case, exact, SYNTAX.words)
    # Where the analyzer settled a site, no candidate edge of the same kind survives next to the exact one.
    candidate = Observed().add(ran.resolution.edges, (), ran.built.declarations, keep=lambda e: not is_exact(e))
    for exp in ran.case.expectations:
        kind = SYNTAX.words.get(exp.word)
        leftovers = [f for f in candidate.edges.get(exp.position, []) if f.kind == kind]
        if leftovers:
            failures.append(f"{exp.where}: candidate {exp.word} edges survived next to the exact one: {leftovers}")
    for name, value in ran.case.directives:
        if name in ("stands", "stands-alone"):
            failures += stands_failures(name, value, ran.built, ran.resolution.edges)
        if name == "uncalled":
            key = ran.built.key(value)
            hits = [e for e in ran.resolution.edges if e.target == key and Confidence(e.confidence).is_exact]
            if hits:
                failures.append(f"!uncalled {value}: exact edges {hits}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("case_path", CANDIDATE_KEPT, ids=[p.stem for p in CANDIDATE_KEPT])
def test_candidate_answers_the_checker_cannot_give_survive_the_exact_pass(
    case_path: Path, ran_cases: dict[str, Ran]
) -> None:
    ran = ran_cases[case_path.stem]
    observed = Observed().add(ran.resolution.edges, ran.resolution.unresolved, ran.built.declarations)
    assert not mismatches(ran.case, observed, SYNTAX.words)
    targets = {ran.built.key("kit.runner.Runner.invoke"), ran.built.key("kit.runner.Other.invoke")}
    into = [e for e in ran.resolution.edges if e.kind == EdgeKind.CALLS_DIRECT and e.target in targets]
    assert len(into) == 6 and all(Confidence(e.confidence) == Confidence.CANDIDATE for e in into)


def test_the_analyzer_writes_nothing_into_the_repositories(ran_cases: dict[str, Ran]) -> None:
    assert ran_cases and all(r.untouched for r in ran_cases.values())


def _foreign_use(namespace: str, member: str, line: int, col: int) -> scip_python.ScipUse:
    return scip_python.ScipUse(
        "use.py", line, col, "use.go", "function", "call", True, package=namespace, member=member
    )


def test_a_foreign_target_binds_only_when_exactly_one_registered_repository_provides_it(tmp_path: Path) -> None:
    lib = "def start() -> int:\n    return 1\n"
    write_repo(tmp_path / "a", {"src/dup/__init__.py": lib, "src/only/core.py": lib})
    write_repo(tmp_path / "b", {"dup/__init__.py": lib})
    write_repo(tmp_path / "main", {"use.py": "def go():\n    return 1\n"})
    built = build_corpus([("main", tmp_path / "main"), ("a", tmp_path / "a"), ("b", tmp_path / "b")])
    facts = scip_python.RepositoryScipFacts(
        "scip-python 0.6.6",
        uses=(
            _foreign_use("only.core", "start", 2, 11),
            _foreign_use("dup", "start", 2, 20),
            _foreign_use("nobody", "thing", 2, 30),
            _foreign_use("only.core", "missing", 2, 40),
        ),
    )
    outcome = ADAPTER.bind(facts, "main", built.corpus, scip_python.ModuleTable(built.corpus))
    assert [built.edge_row(e) for e in outcome.edges] == [("CALLS_DIRECT", "use.go", "only.core.start")]
    assert built.declarations[outcome.edges[0].target].repository == "a"  # provider identity
    assert outcome.edges[0].confidence == Confidence.EXACT_TYPECHECKED
    assert outcome.cross_repository == 1
    assert [(u.reason, u.col, u.detail) for u in outcome.unresolved] == [
        ("AMBIGUOUS_PACKAGE_PROVIDER", 20, "provided by a, b")
    ]
    # an unregistered package settles the site without an edge; a member the provider lacks does not
    assert {(line, col) for _src, line, col in outcome.covered} == {(2, 11), (2, 20), (2, 30)}


def test_a_missing_analyzer_degrades_python_to_the_fallback_with_the_reason_in_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", {"m.py": "def f():\n    return 1\n\n\ndef g():\n    return f()\n"})
    env = {"KIVGRAPH_SCIP_PYTHON": str(tmp_path / "no-such-scip-python")}
    assert run_kivgraph(home, "init", str(repo), "--languages", "python", **env).returncode == 0
    result = run_kivgraph(home, "index", "--json", **env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])["result"]
    assert report["index"]["python"]["mode"] == "fallback"
    assert report["counts"]["edges"] == 1  # the candidate call g -> f is kept
    status = json.loads(run_kivgraph(home, "status", "--json", **env).stdout)
    (analysis,) = status["repositories"][0]["analyses"]
    assert analysis["mode"] == "fallback"
    assert analysis["reason"].startswith("scip-python failed: scip-python not found at")
    assert status["edges_by_confidence"] == {"CANDIDATE": 1}
    assert "python analysis: fallback (scip-python failed" in run_kivgraph(home, "status", **env).stdout
    doctor = run_kivgraph(home, "doctor", **env).stdout
    assert "analyzer.python.exact: WARN (scip-python not found" in doctor


def test_the_exact_pass_is_cached_and_reported_with_its_own_time(tmp_path: Path) -> None:
    _require_analyzer()
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", {"m.py": "def f():\n    return 1\n\n\ndef g():\n    return f()\n"})
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    first = json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]
    assert first["index"]["python"]["mode"] == "exact"
    assert first["index"]["python"]["analyzer_runs"] == 1
    assert "analyzer.python" in first["timings"]
    assert json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]["published"] is False
    (home / "state" / "CURRENT").unlink()  # a run that must publish again takes the analyzer run from the cache
    second = json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]
    assert second["index"]["python"]["analyzer_runs"] == 0
    assert second["index"]["python"]["analyzer_cache_hits"] == 1
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    (analysis,) = status["repositories"][0]["analyses"]
    assert (analysis["mode"], analysis["analyzer"], analysis["analyzer_version"]) == (
        "exact",
        "scip-python",
        scip_python.PINNED_VERSION,
    )
    assert status["edges_by_confidence"] == {"EXACT_TYPECHECKED": 1}
    (repo / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return f() + f()\n")
    third = json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]
    assert third["index"]["python"]["analyzer_runs"] == 1  # a changed file re-runs the analyzer


# -- two real repositories: pyrepo_b (drawing) imports pyrepo_a (shapes) -----------------------------------

FIXTURES = Path(__file__).parent / "fixtures"
_SKIP_DIRS = ("vendor", "ignored_dir")

# B's uses of A, by site (path, line, col) -> (edge kind, A's qualified name): each must be an exact edge
B_INTO_A = {
    ("drawing/canvas.py", 4, 19): (EdgeKind.IMPORTS_SYMBOL, "shapes.circle.Circle"),  # through shapes/__init__
    ("drawing/canvas.py", 4, 27): (EdgeKind.IMPORTS_SYMBOL, "shapes.circle.circle_area"),  # `as area_of_circle`
    ("drawing/canvas.py", 11, 25): (EdgeKind.TYPE_USES, "shapes.base.Shape"),  # shapes.Shape annotation
    ("drawing/canvas.py", 13, 25): (EdgeKind.TYPE_USES, "shapes.base.Shape"),
    ("drawing/canvas.py", 19, 17): (EdgeKind.CALLS_DIRECT, "shapes.circle.Circle"),  # Circle(radius)
    ("drawing/canvas.py", 21, 15): (EdgeKind.CALLS_DIRECT, "shapes.circle.circle_area"),  # area_of_circle(...)
    ("drawing/canvas.py", 25, 16): (EdgeKind.CALLS_DIRECT, "shapes.base.Shape.describe"),  # item.describe()
    ("drawing/canvas.py", 31, 15): (EdgeKind.CALLS_DIRECT, "shapes.square.Square"),  # shapes.Square(1.0)
}


class CrossRun:
    def __init__(
        self,
        built: BuiltCorpus,
        resolution: Resolution,
        outcome: ExactOutcome,
        provided: list[scip_python.ProvidedPackage],
    ) -> None:
        self.built, self.resolution, self.outcome, self.provided = built, resolution, outcome, provided

    def edges_from_b(self) -> dict[tuple[str, int, int], list[tuple[EdgeKind, str, str, Confidence, Provenance]]]:
        out: dict[tuple[str, int, int], list[tuple[EdgeKind, str, str, Confidence, Provenance]]] = defaultdict(list)
        for e in self.resolution.edges:
            src = self.built.declarations[e.source]
            dst = self.built.declarations[e.target]
            if src.repository == "pyrepo_b":
                out[(src.path, e.line, e.col)].append(
                    (
                        EdgeKind(e.kind),
                        dst.repository,
                        dst.qualified_name,
                        Confidence(e.confidence),
                        Provenance(e.provenance),
                    )
                )
        return out


def _run_b(repositories: list[tuple[str, Path]]) -> CrossRun:
    """The real scip-python over pyrepo_b only, with whatever else is registered; merged like the pipeline."""
    built = build_corpus(repositories, skip_dirs=_SKIP_DIRS)
    repo_b = next(r for r in built.corpus.repositories if r.name == "pyrepo_b")
    facts = scip_python.analyze_repository(repo_b, built.corpus, timeout=120)
    outcome = ADAPTER.bind(facts, "pyrepo_b", built.corpus, scip_python.ModuleTable(built.corpus))
    exact = ExactPass("python", outcomes=[outcome])
    return CrossRun(built, merge(built.resolve(), exact), outcome, scip_python.providers(repo_b, built.corpus))


@pytest.fixture(scope="module")
def cross_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CrossRun]:
    _require_analyzer()
    a, b = FIXTURES / "pyrepo_a", FIXTURES / "pyrepo_b"
    twin = tmp_path_factory.mktemp("twin") / "pyrepo_a_fork"  # a second registered provider of `shapes`
    for path in (a / "src").rglob("*.py"):
        target = twin / path.relative_to(a)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    before = {str(p): _tree(p) for p in (a, b)}
    runs = {
        "registered": _run_b([("pyrepo_a", a), ("pyrepo_b", b)]),
        "unregistered": _run_b([("pyrepo_b", b)]),
        "ambiguous": _run_b([("pyrepo_a", a), ("pyrepo_a_fork", twin), ("pyrepo_b", b)]),
    }
    assert {str(p): _tree(p) for p in (a, b)} == before, "the analyzer wrote into a fixture repository"
    return runs


def test_a_consumer_analyzer_sees_the_registered_provider_package(cross_runs: dict[str, CrossRun]) -> None:
    (provided,) = cross_runs["registered"].provided
    assert (provided.repository, provided.name, provided.root) == ("pyrepo_a", "shapes", FIXTURES / "pyrepo_a" / "src")
    assert "shapes/circle.py" in provided.files and "shapes/__init__.py" in provided.files
    assert cross_runs["unregistered"].provided == []


def test_calls_into_another_registered_repository_are_exact_edges_to_its_declarations(
    cross_runs: dict[str, CrossRun],
) -> None:
    run = cross_runs["registered"]
    at = run.edges_from_b()
    failures = []
    for site, (kind, qn) in B_INTO_A.items():
        rows = [r for r in at.get(site, []) if r[0] == kind]
        if rows != [(kind, "pyrepo_a", qn, Confidence.EXACT_TYPECHECKED, Provenance.PYTHON_INDEXER_USE)]:
            failures.append(f"{site}: want exact {kind.name} -> pyrepo_a:{qn}, got {at.get(site)}")
    assert not failures, "\n".join(failures)
    # provider identity: the targets are the keys pyrepo_a publishes for itself
    circle = run.built.key("shapes.circle.Circle", "pyrepo_a")
    assert any(e.target == circle and e.confidence == Confidence.EXACT_TYPECHECKED for e in run.outcome.edges)
    assert run.outcome.cross_repository >= len(B_INTO_A)
    assert not [
        u
        for u in run.resolution.unresolved
        if u.repository == "pyrepo_b" and u.path == "drawing/canvas.py" and (u.path, u.line, u.col) in B_INTO_A
    ]


def test_without_the_provider_registered_the_same_uses_are_no_edges(cross_runs: dict[str, CrossRun]) -> None:
    at = cross_runs["unregistered"].edges_from_b()
    for site in B_INTO_A:
        assert not at.get(site), f"{site}: {at.get(site)}"
    assert cross_runs["unregistered"].outcome.cross_repository == 0
    # B's own calls are exact regardless
    assert (
        EdgeKind.CALLS_DIRECT,
        "pyrepo_b",
        "drawing.canvas.Canvas.add",
        Confidence.EXACT_TYPECHECKED,
        Provenance.PYTHON_INDEXER_USE,
    ) in at[("drawing/canvas.py", 20, 8)]


def test_two_registered_providers_of_a_package_leave_unresolved_rows_not_edges(cross_runs: dict[str, CrossRun]) -> None:
    run = cross_runs["ambiguous"]
    at = run.edges_from_b()
    for site in B_INTO_A:
        assert not [r for r in at.get(site, []) if r[1] != "pyrepo_b"], f"{site}: {at.get(site)}"
    rows = {(u.path, u.line, u.col): u for u in run.resolution.unresolved if u.repository == "pyrepo_b"}
    for site in (("drawing/canvas.py", 19, 17), ("drawing/canvas.py", 31, 15), ("drawing/canvas.py", 25, 16)):
        assert site in rows, f"{site}: no unresolved row; rows: {sorted(rows)}"
        assert rows[site].reason == "AMBIGUOUS_PACKAGE_PROVIDER"
        assert rows[site].detail == "provided by pyrepo_a, pyrepo_a_fork"


def test_an_edit_reruns_the_analyzer_of_its_repository_and_of_the_consumers_whose_view_of_it_changed(
    tmp_path: Path,
) -> None:
    _require_analyzer()
    home = tmp_path / "home"
    lib = write_repo(tmp_path / "lib", {"src/libpkg/__init__.py": "def helper() -> int:\n    return 1\n"})
    app = write_repo(
        tmp_path / "app", {"app/__init__.py": "from libpkg import helper\n\n\ndef run() -> int:\n    return helper()\n"}
    )
    other = write_repo(tmp_path / "other", {"other.py": "def alone() -> int:\n    return 2\n"})
    for repo in (lib, app, other):
        assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0

    def index() -> dict:
        return json.loads(run_kivgraph(home, "index", "--json").stdout.splitlines()[-1])["result"]

    assert index()["index"]["python"]["analyzer_runs"] == 3
    (other / "other.py").write_text("def alone() -> int:\n    return 3\n")
    assert index()["index"]["python"]["analyzer_runs"] == 1  # only `other`: nobody imports it
    (lib / "src/libpkg/__init__.py").write_text("def helper() -> int:\n    return 4\n")
    second = index()["index"]["python"]
    # a body-only edit: lib alone runs; app sees the same interface of lib (helper's signature as the checker
    # states it), so its layer and edges are carried, and other is carried as its layer (issue 24)
    assert (second["analyzer_runs"], second["analyzer_cache_hits"]) == (1, 0)
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    app_analysis = next(r for r in status["repositories"] if r["name"] == "app")["analyses"][0]
    assert "3 exact edges, 3 to other repositories" in app_analysis["reason"]  # module, import, call
    (lib / "src/libpkg/__init__.py").write_text("def helper() -> str:\n    return '4'\n")
    third = run_kivgraph(home, "index", "--json").stdout.splitlines()
    events = [json.loads(line) for line in third if line.startswith("{")]
    ran = [e["progress"]["detail"] for e in events if e.get("progress", {}).get("phase") == "analyzers"]
    # the signature changed: app's analyzer runs again, in the stage after lib's (the progress events say so)
    assert ran == [
        "ran scip-python on lib (whole); next: scip-python on app (the interface of lib changed)",
        "ran scip-python on app (whole)",
    ], ran
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    app_analysis = next(r for r in status["repositories"] if r["name"] == "app")["analyses"][0]
    assert app_analysis["mode"] == "exact" and "3 to other repositories" in app_analysis["reason"]
