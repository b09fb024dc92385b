"""Exact Rust resolution with the real rust-analyzer: annotated cases, untouched repositories, degradation.

rust-analyzer runs once per repository of each case in one module-scoped
fixture (the cases are tests/annotated/rust_exact/, their format in its
README.md), offline, merged with the CANDIDATE resolver the way the pipeline
merges them. Never mocked: without the binary (``make setup`` builds it in
the background) the module skips and says what is missing.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge, run_exact
from indexer.fact_cache import FactCache
from indexer.languages.rust import analyzer, toolchain
from indexer.languages.rust.resolve import resolve as resolve_rust
from server.tools.references import find_references
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import DEFAULT_REPO, Case, Observed, Syntax, mismatches, parse_case, split_target
from tests.helpers import run_kivgraph, write_repo
from tests.python_corpus import BuiltCorpus
from tests.rust_corpus import build_rust_corpus
from tests.test_rust_annotated import SYNTAX as FALLBACK_SYNTAX

pytestmark = pytest.mark.analyzers

CASES_DIR = Path(__file__).parent / "annotated" / "rust_exact"
CASES = sorted(CASES_DIR.glob("*.rs.txt"))
SYNTAX = Syntax("//", FALLBACK_SYNTAX.words, modes=("candidate",))  # the fallback cases' words


def _built() -> str:
    """ "" when rust-analyzer can run, else what is missing (said loudly by the skip)."""
    try:
        toolchain.identity()
    except analyzer.AnalyzerFailed as exc:
        return f"RUST-ANALYZER UNAVAILABLE, the exact Rust pass is not tested: {exc}"
    return ""


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories, each with a Cargo.toml; their names in order.

    ``!crate: repo package-name`` names a package; ``!depends: app -> lib`` is a path dependency;
    ``!registry: app -> lib`` a registry dependency (``lib = "0.1"``) that the run patches to the registered
    checkout; ``!external: app crate`` a registry dependency that is in no local cargo cache.
    """
    repos = case.write(root)
    packages = {repo: repo for repo in repos}
    lines: dict[str, list[str]] = defaultdict(list)
    for name, value in case.directives:
        if name == "crate":
            repo, package = value.split()
            packages[repo] = package
    for name, value in case.directives:
        if name in ("depends", "registry"):
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            spec = f'{{ path = "../{provider}" }}' if name == "depends" else '"0.1"'
            lines[consumer].append(f"{packages[provider]} = {spec}\n")
        elif name == "external":
            consumer, crate = value.split()
            lines[consumer].append(f'{crate} = "1"\n')
    for repo in repos:
        (root / repo / "Cargo.toml").write_text(
            f'[package]\nname = "{packages[repo]}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
            + "".join(lines[repo])
        )
    return repos


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution
    untouched: bool
    facts: dict[str, analyzer.RepositoryRustFacts]


@pytest.fixture(scope="module")
def state_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kivgraph-home")


@pytest.fixture(scope="module")
def ran_cases(tmp_path_factory: pytest.TempPathFactory, state_home: Path) -> dict[str, Ran]:
    missing = _built()
    if missing:
        pytest.skip(missing)
    mp = pytest.MonkeyPatch()
    mp.setenv("KIVGRAPH_HOME", str(state_home))
    out: dict[str, Ran] = {}
    try:
        for case_path in CASES:
            case = parse_case(case_path, SYNTAX)
            root = tmp_path_factory.mktemp(case_path.name.split(".")[0])
            repos = write_case(case, root)
            before = {repo: _tree(root / repo) for repo in repos}
            built = build_rust_corpus([(repo, root / repo) for repo in repos])
            exact = ExactPass("rust")
            modules = analyzer.ModuleTable(built.corpus)
            facts = {}
            for repo in built.corpus.repositories:
                facts[repo.name] = analyzer.analyze_repository(repo, built.corpus, timeout=300)
                for path, decl in facts[repo.name].declarations:  # as the exact pass does, before bind
                    built.corpus.declare(repo.name, path, decl)
                exact.outcomes.append(analyzer.bind(facts[repo.name], repo.name, built.corpus, modules))
            untouched = all(_tree(root / repo) == before[repo] for repo in repos)
            out[case_path.name] = Ran(case, built, merge(resolve_rust(built.corpus), exact), untouched, facts)
    finally:
        mp.undo()
    return out


def _observed(ran: Ran) -> Observed:
    obs = Observed().add(ran.resolution.edges, ran.resolution.unresolved, ran.built.declarations)
    return obs.add(
        [e for e in ran.resolution.edges if e.confidence == Confidence.CANDIDATE],
        [],
        ran.built.declarations,
        mode="candidate",
    )


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_exact_annotated_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.name]
    case, built = ran.case, ran.built
    assert case.expectations, "a case without expectations tests nothing"
    assert ran.untouched, "rust-analyzer or cargo wrote into a repository"
    assert all(not f.problems for f in ran.facts.values()), {r: f.problems for r, f in ran.facts.items()}
    failures = mismatches(case, _observed(ran), SYNTAX.words, exact=lambda e: e.mode != "candidate")
    partial = {tuple(v.split(":", 1)) if ":" in v else (DEFAULT_REPO, v) for n, v in case.directives if n == "partial"}
    for (repo, rel), facts in built.files().items():
        wanted = "partial" if (repo, rel) in partial else "indexed"
        if facts.status != wanted:
            failures.append(f"{repo}:{rel} is {facts.status} ({facts.reason}), expected {wanted}")
    for name, value in case.directives:
        if name == "uncalled":
            repo, qn = split_target(value)
            key = built.key(qn, repo)
            incoming = [
                built.edge_row(e) for e in ran.resolution.edges if e.target == key and e.kind != EdgeKind.METHOD_OF
            ]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name not in ("crate", "partial", "depends", "registry", "external"):
            failures.append(f"unknown directive !{name}")
    assert not failures, "\n".join(failures)


def test_exact_edges_carry_a_rust_provenance(ran_cases: dict[str, Ran]) -> None:
    rust = {
        Provenance.RUST_ANALYZER_USE,
        Provenance.RUST_ANALYZER_MONIKER,
        Provenance.RUST_SYNTAX_CALL,
        Provenance.RUST_SYNTAX_TYPE,
        Provenance.RUST_SYNTAX_IMPL,
        Provenance.RUST_SYNTAX_CALLBACK,
    }
    exact = [e for ran in ran_cases.values() for e in ran.resolution.edges if e.confidence != Confidence.CANDIDATE]
    assert exact
    assert {Provenance(e.provenance) for e in exact} <= rust
    assert all(e.confidence == Confidence.EXACT_TYPECHECKED for e in exact)
    cross = [
        e
        for e in ran_cases["cross_repository.rs.txt"].resolution.edges
        if e.provenance == Provenance.RUST_ANALYZER_MONIKER
    ]
    assert cross, "no edge into the provider went through its moniker"


def test_the_state_directory_holds_the_cargo_home_and_target_directories(
    ran_cases: dict[str, Ran], state_home: Path
) -> None:
    rust = state_home / "state" / "rust"
    shim = (rust / "cargo-home" / "bin" / "cargo").read_text()
    assert "cargo_shim" in shim and os.access(rust / "cargo-home" / "bin" / "cargo", os.X_OK)
    assert sorted(p.name.rsplit("-", 1)[0] for p in (rust / "target").iterdir()) == sorted(
        r.name for ran in ran_cases.values() for r in ran.built.corpus.repositories
    )


# -- degradation -------------------------------------------------------------------------------------------


def _crate(root: Path, deps: str = "", lib: str = "pub fn f() -> u32 { g() }\n\npub fn g() -> u32 { 1 }\n") -> Path:
    return write_repo(
        root,
        {
            "Cargo.toml": f'[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{deps}',
            "src/lib.rs": lib,
        },
    )


def test_a_missing_binary_falls_back_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _crate(tmp_path / "x")
    monkeypatch.setenv(toolchain.EXECUTABLE_ENV, str(tmp_path / "no-such-rust-analyzer"))
    built = build_rust_corpus([("x", root)])
    with FactCache(tmp_path / "cache", "on") as cache:
        result = run_exact("rust", built.corpus, {"x": {"src/lib.rs": "h"}}, cache, timeout=60)
    assert result is not None and not result.outcomes
    analysis = result.analyses["x"]
    assert analysis.mode == "fallback"
    assert "no-such-rust-analyzer" in analysis.reason and toolchain.CANDIDATE_UNTIL_BUILT in analysis.reason
    merged = merge(resolve_rust(built.corpus), result)
    assert [built.edge_row(e) for e in merged.edges] == [("CALLS_DIRECT", "x::f", "x::g")]
    assert all(e.confidence == Confidence.CANDIDATE for e in merged.edges)


def test_while_it_builds_answers_say_they_are_candidate_until_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIVGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(toolchain.EXECUTABLE_ENV, raising=False)
    lay = toolchain.layout()
    lay.root.mkdir(parents=True)
    import fcntl

    with open(lay.lock, "wb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        lay.building.write_text(json.dumps({"pid": 4242, "since": "2026-12-01T20:00:00+00:00"}))
        with pytest.raises(analyzer.AnalyzerFailed) as exc:
            toolchain.identity()
        assert str(exc.value) == (
            f"Rust answers are CANDIDATE until rust-analyzer is built "
            f"(building since 2026-12-01T20:00:00+00:00, log {lay.log})"
        )
        line = toolchain.install()
        assert "still building (pid 4242" in line and "FAILED" not in line


@pytest.fixture(scope="module")
def missing_dependency(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltCorpus, Resolution, ExactPass, bool]:
    missing = _built()
    if missing:
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("missing-dep")
    home = tmp / "home"
    lib = (
        "use kivgraph_no_such_crate::Thing;\n\n"
        "pub fn f() -> u32 {\n    g() + Thing::new().size()\n}\n\n"
        "pub fn g() -> u32 {\n    1\n}\n"
    )
    root = _crate(tmp / "x", 'kivgraph-no-such-crate = "1"\n', lib)
    before = _tree(root)
    built = build_rust_corpus([("x", root)])
    mp = pytest.MonkeyPatch()
    mp.setenv("KIVGRAPH_HOME", str(home))
    try:
        with FactCache(tmp / "cache", "on") as cache:
            result = run_exact("rust", built.corpus, {"x": {"src/lib.rs": "h"}}, cache, timeout=300)
    finally:
        mp.undo()
    assert result is not None
    return built, merge(resolve_rust(built.corpus), result), result, _tree(root) == before


def test_a_dependency_missing_offline_is_a_blind_spot_at_every_use(
    missing_dependency: tuple[BuiltCorpus, Resolution, ExactPass, bool],
) -> None:
    built, merged, result, untouched = missing_dependency
    assert untouched
    analysis = result.analyses["x"]
    assert analysis.mode == "exact"
    assert "dependencies of . not loaded offline" in analysis.reason
    assert "kivgraph-no-such-crate" in analysis.reason
    rows = {(u.line, u.col, u.name): u.reason for u in merged.unresolved if u.reason == "DEPENDENCIES_NOT_LOADED"}
    assert (1, 28, "Thing") in rows  # the import
    assert (4, 17, "new") in rows and (4, 23, "size") in rows  # its uses: nothing answers for them
    scope = [u for u in merged.unresolved if u.reason == "DEPENDENCIES_NOT_LOADED" and not u.path]
    assert len(scope) == 1 and "kivgraph-no-such-crate" in scope[0].detail
    # what rust-analyzer could still resolve stays exact
    assert [
        (built.edge_row(e), Confidence(e.confidence).name) for e in merged.edges if e.kind == EdgeKind.CALLS_DIRECT
    ] == [(("CALLS_DIRECT", "x::f", "x::g"), "EXACT_TYPECHECKED")]


# -- through the real CLI: dispatch and completeness --------------------------------------------------------

RUST_DISPATCH = {
    "Cargo.toml": '[package]\nname = "shapes"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": (
        "pub trait Shape {\n"
        "    fn area(&self) -> f64;\n"
        "}\n"
        "\n"
        "pub struct Square(pub f64);\n"
        "\n"
        "impl Shape for Square {\n"
        "    fn area(&self) -> f64 {\n"
        "        self.0 * self.0\n"
        "    }\n"
        "}\n"
        "\n"
        "pub struct Circle(pub f64);\n"
        "\n"
        "impl Shape for Circle {\n"
        "    fn area(&self) -> f64 {\n"
        "        3.0 * self.0 * self.0\n"
        "    }\n"
        "}\n"
        "\n"
        "pub fn total(xs: &[Box<dyn Shape>]) -> f64 {\n"
        "    xs.iter().map(|x| x.area()).sum()\n"
        "}\n"
        "\n"
        "pub fn largest<S: Shape>(a: &S, b: &S) -> f64 {\n"
        "    a.area().max(b.area())\n"
        "}\n"
        "\n"
        "pub fn report(xs: &[Box<dyn Shape>]) -> f64 {\n"
        "    total(xs)\n"
        "}\n"
    ),
}


@pytest.fixture(scope="module")
def dispatch_generation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    missing = _built()
    if missing:
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("rust-dispatch")
    home = tmp / "home"
    repo = write_repo(tmp / "shapes", RUST_DISPATCH)
    assert run_kivgraph(home, "init", str(repo), "--languages", "rust").returncode == 0
    result = run_kivgraph(home, "index", "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["result"]["passed"]
    gen = open_current(StateLayout(home / "kivgraph.toml", home / "state"))
    yield gen
    gen.close()


def _rows(answer: dict[str, Any]) -> set[tuple[str, int, str]]:
    return {(s["qualified_name"], s["depth"], s.get("dispatch_via", "")) for s in answer["results"]["symbols"]}


def test_an_impl_method_reaches_the_callers_through_dyn_and_bounds(dispatch_generation: Generation) -> None:
    answer = get_blast_radius(dispatch_generation, {"qualified_name": "shapes::Circle::<Shape>::area", "view": "full"})
    assert _rows(answer) == {
        ("shapes::total", 1, "shapes::Shape::area"),
        ("shapes::largest", 1, "shapes::Shape::area"),
        ("shapes::report", 2, ""),
    }
    assert answer["completeness"]["verdict"] == "COMPLETE"
    refs = find_references(dispatch_generation, {"qualified_name": "shapes::Square::<Shape>::area", "view": "full"})
    assert {(r["qualified_name"], r["via"]) for r in refs["results"]["references"]} == {
        ("shapes::total", "shapes::Shape::area"),
        ("shapes::largest", "shapes::Shape::area"),
    }


def test_the_repository_analysis_is_exact_in_status(dispatch_generation: Generation) -> None:
    (repo,) = dispatch_generation.repositories()
    (analysis,) = [a for a in repo.analyses if a.language == "rust"]
    assert analysis.mode == "exact" and analysis.analyzer == "rust-analyzer"
    assert analysis.analyzer_version == toolchain.PINNED_VERSION


def test_a_declaration_tree_sitter_loses_mid_edit_is_taken_from_rust_analyzer(tmp_path: Path) -> None:
    missing = _built()
    if missing:
        pytest.skip(missing)
    home = tmp_path / "home"
    repo = write_repo(
        tmp_path / "x",
        {
            "Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": "pub mod edit;\n\npub fn user() -> u32 {\n    edit::lost(1) + edit::fine()\n}\n",
            "src/edit.rs": "pub fn lost(a: u32 -> u32 {\n    a\n}\n\npub fn fine() -> u32 {\n    2\n}\n",
        },
    )
    assert run_kivgraph(home, "init", str(repo), "--languages", "rust").returncode == 0
    assert run_kivgraph(home, "index", "--json", timeout=600).returncode == 0
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        f = gen.file("x", "src/edit.rs")
        assert f is not None and f.status == "partial"
        (lost,) = gen.symbols_by_qualified_name("x::edit::lost")
        (user,) = gen.symbols_by_qualified_name("x::user")
        assert lost.kind == "function" and lost.exported
        calls = {(e.target, Confidence(e.confidence).name) for e in gen.edges_out(user.key)}
        assert (lost.key, "EXACT_TYPECHECKED") in calls
