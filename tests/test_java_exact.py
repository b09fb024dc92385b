"""Exact Java resolution with the real scip-java (javac + the SemanticDB plugin): the annotated cases, untouched
repositories, the analyzer's facts.

The cases are tests/annotated/java/ (format in its README.md), run once per repository in a module-scoped
fixture and merged with the CANDIDATE resolver the way the pipeline merges them. Never mocked: without
scip-java or a JDK (``make setup`` installs them) the module skips and says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.exact_pass import ExactPass, merge
from indexer.languages import java
from indexer.languages.java import analyzer
from indexer.languages.spec import AnalyzerFailed
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import Case, Observed, mismatches, parse_case, split_target
from tests.java_corpus import build_java_corpus
from tests.python_corpus import BuiltCorpus
from tests.test_java_annotated import CASES, SYNTAX, write_case

pytestmark = pytest.mark.analyzers


def _missing() -> str:
    try:
        analyzer.identity()
    except AnalyzerFailed as exc:
        return f"SCIP-JAVA UNAVAILABLE, the exact Java pass is not tested: {exc}"
    return ""


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution
    untouched: bool
    facts: dict[str, analyzer.RepositoryJavaFacts]


@pytest.fixture(scope="module")
def ran_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    out: dict[str, Ran] = {}
    for case_path in CASES:
        case = parse_case(case_path, SYNTAX)
        root = tmp_path_factory.mktemp(case_path.name.split(".")[0])
        repos = write_case(case, root)
        before = {repo: _tree(root / repo) for repo in repos}
        built = build_java_corpus([(repo, root / repo) for repo in repos])
        exact = ExactPass("java")
        facts = {}
        for repo in built.corpus.repositories:
            facts[repo.name] = analyzer.analyze_repository(repo, built.corpus, timeout=300)
            exact.outcomes.append(analyzer.bind(facts[repo.name], repo.name, built.corpus))
        untouched = all(_tree(root / repo) == before[repo] for repo in repos)
        out[case_path.name] = Ran(case, built, merge(java.resolve(built.corpus), exact), untouched, facts)
    return out


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_exact_annotated_case(case_path: Path, ran_cases: dict[str, Ran]) -> None:
    ran = ran_cases[case_path.name]
    case, built = ran.case, ran.built
    assert ran.untouched, "javac or scip-java wrote into a repository"
    assert all(not f.failure for f in ran.facts.values()), {r: f.failure for r, f in ran.facts.items()}
    observed = Observed().add(ran.resolution.edges, ran.resolution.unresolved, built.declarations)
    observed.add(ran.resolution.edges, ran.resolution.unresolved, built.declarations, mode="exact")
    wanted = Case(case.files, [e for e in case.expectations if e.mode in ("", "exact")], case.directives)
    failures = mismatches(wanted, observed, SYNTAX.words, exact=lambda _e: True)
    for name, value in case.directives:
        if name == "uncalled":
            repo, qn = split_target(value)
            key = built.key(qn, repo)
            incoming = [built.edge_row(e) for e in ran.resolution.edges if e.target == key]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
    assert not failures, "\n".join(failures)


def test_exact_edges_carry_a_java_provenance_and_cross_repository_edges_exist(ran_cases: dict[str, Ran]) -> None:
    exact = [e for ran in ran_cases.values() for e in ran.resolution.edges if e.confidence != Confidence.CANDIDATE]
    assert exact
    java = {Provenance.JAVA_INDEXER_USE, Provenance.JAVA_INDEXER_DEF, Provenance.JAVA_IMPLICIT_CALL}
    assert {Provenance(e.provenance) for e in exact} <= java
    cross = ran_cases["cross_repository.java.txt"]
    lib = {k for k, d in cross.built.declarations.items() if d.repository == "lib"}
    into_lib = [e for e in cross.resolution.edges if e.target in lib and e.confidence == Confidence.EXACT_TYPECHECKED]
    assert {EdgeKind(e.kind) for e in into_lib} >= {EdgeKind.CALLS_DIRECT, EdgeKind.IMPLEMENTS, EdgeKind.IMPORTS_SYMBOL}


def test_the_calls_javac_makes_unwritten_are_javac_implicit_edges(ran_cases: dict[str, Ran]) -> None:
    """An implicit super(), a default constructor's and an enum constant's body are edges of their own provenance at
    the calling declaration; a constant without a body is javac's own occurrence at its name."""
    ran = ran_cases["implicit_calls.java.txt"]
    d = ran.built.declarations
    rows = sorted(
        (d[e.source].qualified_name, d[e.target].qualified_name, Provenance(e.provenance).name)
        for e in ran.resolution.edges
        if e.confidence == Confidence.EXACT_TYPECHECKED
        and d[e.target].kind in ("constructor", "class")
        and EdgeKind(e.kind) == EdgeKind.CALLS_DIRECT
    )
    assert rows == [
        ("org.i.Bag.iterator", "org.i.Bag.Cursor", "JAVA_INDEXER_USE"),
        ("org.i.Bag.total", "org.i.Bag", "JAVA_INDEXER_USE"),
        ("org.i.Color", "org.i.Color.Color()", "JAVA_INDEXER_USE"),
        ("org.i.Color", "org.i.Color.Color(int)", "JAVA_IMPLICIT_CALL"),
        ("org.i.Color", "org.i.Color.Color(int)", "JAVA_INDEXER_USE"),
        ("org.i.Grandkid.Grandkid", "org.i.Kid.Kid()", "JAVA_IMPLICIT_CALL"),
        ("org.i.Kid.Kid()", "org.i.Base.Base(int)", "JAVA_INDEXER_USE"),
        ("org.i.Kid.Kid(String)", "org.i.Base.Base()", "JAVA_IMPLICIT_CALL"),
        ("org.i.Kid.Kid(int,int)", "org.i.Kid.Kid()", "JAVA_INDEXER_USE"),
        ("org.i.Local.make", "org.i.Base.Base()", "JAVA_IMPLICIT_CALL"),
        ("org.i.Plain", "org.i.Base.Base()", "JAVA_IMPLICIT_CALL"),
        ("org.i.Plain.make", "org.i.Plain", "JAVA_INDEXER_USE"),
    ]
    assert not [
        e for e in ran.resolution.edges if e.confidence == Confidence.CANDIDATE and d[e.target].kind == "constructor"
    ]


def test_a_repository_that_does_not_depend_on_the_provider_gets_no_edge_into_it(tmp_path: Path) -> None:
    if _missing():
        pytest.skip(_missing())
    for repo, text in (
        ("lib", "package org.l;\npublic class L { public static int f() { return 1; } }\n"),
        ("app", "package org.a;\nclass A { int g() { return org.l.L.f(); } }\n"),
    ):
        path = tmp_path / repo / "src" / "main" / "java" / ("org/l/L.java" if repo == "lib" else "org/a/A.java")
        path.parent.mkdir(parents=True)
        path.write_text(text)
    built = build_java_corpus([("lib", tmp_path / "lib"), ("app", tmp_path / "app")])
    app = built.corpus.repositories[1]
    facts = analyzer.analyze_repository(app, built.corpus, timeout=300)
    assert not facts.failure
    assert any("javac reported" in why for _where, why in facts.not_loaded)
    outcome = analyzer.bind(facts, "app", built.corpus)
    assert outcome.cross_repository == 0 and not [
        e for e in outcome.edges if built.declarations[e.target].repository == "lib"
    ]


def test_a_gradle_consumer_reaches_a_maven_provider_through_its_coordinates(tmp_path: Path) -> None:
    if _missing():
        pytest.skip(_missing())
    lib = tmp_path / "lib"
    app = tmp_path / "app"
    (lib / "src/main/java/org/l").mkdir(parents=True)
    (lib / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>org.l</groupId><artifactId>l-core</artifactId><version>2.0</version></project>\n"
    )
    (lib / "src/main/java/org/l/Greeter.java").write_text(
        "package org.l;\n\npublic interface Greeter {\n    String greet(String name);\n}\n"
    )
    (app / "src/main/java/org/a").mkdir(parents=True)
    (app / "settings.gradle").write_text("rootProject.name = 'app'\n")
    (app / "build.gradle").write_text(
        "plugins { id 'java' }\ngroup = 'org.a'\ndependencies {\n    implementation 'org.l:l-core:2.0'\n}\n"
    )
    (app / "src/main/java/org/a/Hello.java").write_text(
        "package org.a;\n\nimport org.l.Greeter;\n\npublic class Hello implements Greeter {\n"
        '    public String greet(String name) { return "hi " + name; }\n'
        '    static String twice(Greeter g) { return g.greet("a") + g.greet("b"); }\n}\n'
    )
    built = build_java_corpus([("lib", lib), ("app", app)])
    facts = analyzer.analyze_repository(built.corpus.repositories[1], built.corpus, timeout=300)
    assert not facts.failure and not facts.not_loaded, facts.not_loaded
    outcome = analyzer.bind(facts, "app", built.corpus)
    rows = sorted(
        {
            (
                EdgeKind(e.kind).name,
                built.declarations[e.source].qualified_name,
                built.declarations[e.target].qualified_name,
            )
            for e in outcome.edges
            if built.declarations[e.target].repository == "lib"
        }
    )
    assert rows == [
        ("CALLS_DIRECT", "org.a.Hello.twice", "org.l.Greeter.greet"),
        ("IMPLEMENTS", "org.a.Hello", "org.l.Greeter"),
        ("IMPLEMENTS", "org.a.Hello.greet", "org.l.Greeter.greet"),
        ("IMPORTS_SYMBOL", "src/main/java/org/a/Hello.java", "org.l.Greeter"),
        ("TYPE_USES", "org.a.Hello.twice", "org.l.Greeter"),
    ]
    assert outcome.cross_repository == len(
        [e for e in outcome.edges if built.declarations[e.target].repository == "lib"]
    )


def test_an_override_of_a_jar_method_is_an_external_override_row(tmp_path: Path) -> None:
    """scip-java names a jar's symbols as it names the repository's own (package "."): a method overriding one
    of a jar on the classpath is an EXTERNAL_OVERRIDE row (the jar's code calls it), a call into the jar is none."""
    if _missing():
        pytest.skip(_missing())
    jar = Path.home() / ".m2/repository/commons-lang/commons-lang/2.6/commons-lang-2.6.jar"
    if not jar.is_file():
        pytest.skip(f"{jar} is not in the local Maven repository (no network is asked here)")
    root = tmp_path / "z"
    (root / "src/main/java/org/z").mkdir(parents=True)
    (root / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>z</groupId>'
        "<artifactId>z</artifactId><version>1</version><dependencies><dependency><groupId>commons-lang</groupId>"
        "<artifactId>commons-lang</artifactId><version>2.6</version></dependency></dependencies></project>\n"
    )
    (root / "src/main/java/org/z/Z.java").write_text(
        "package org.z;\n\npublic class Z extends org.apache.commons.lang.text.StrMatcher {\n"
        "    public int isMatch(char[] buffer, int pos, int bufferStart, int bufferEnd) { return 0; }\n\n"
        '    static String f() { return org.apache.commons.lang.StringUtils.trim(" x "); }\n}\n'
    )
    built = build_java_corpus([("z", root)])
    facts = analyzer.analyze_repository(built.corpus.repositories[0], built.corpus, timeout=300)
    assert not facts.failure and not facts.not_loaded, facts.not_loaded
    rows = [(u.reason, u.name, u.line) for u in analyzer.bind(facts, "z", built.corpus).unresolved]
    assert rows == [("EXTERNAL_OVERRIDE", "isMatch", 4)], rows
