"""Annotated Java resolution cases on the CANDIDATE resolver (tests/annotated/java, format in its README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.languages import java
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import Case, Observed, Syntax, mismatches, parse_case, split_target
from tests.java_corpus import build_java_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "java"
CASES = sorted(CASES_DIR.glob("*.java.txt"))
SYNTAX = Syntax(
    "//",
    {
        "calls": EdgeKind.CALLS_DIRECT,
        "refs": EdgeKind.REFERENCES,
        "type": EdgeKind.TYPE_USES,
        "callback": EdgeKind.PASSES_AS_CALLBACK,
        "imports": EdgeKind.IMPORTS_SYMBOL,
        "implements": EdgeKind.IMPLEMENTS,
        "extends": EdgeKind.EXTENDS,
        "overrides": EdgeKind.OVERRIDES,
    },
    modes=("exact", "candidate"),
)


def maven_coordinates(case: Case) -> dict[str, tuple[str, str]]:
    """Each repository's (groupId, artifactId): ``!maven: repo g:a`` or ``kivgraph.test:<repo>``."""
    out = {repo: ("kivgraph.test", repo) for repo in case.repositories()}
    for name, value in case.directives:
        if name == "maven":
            repo, coordinates = value.split()
            group, _, artifact = coordinates.partition(":")
            out[repo] = (group, artifact)
    return out


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories, each with a pom.xml (``!depends`` adds the provider's artifact)."""
    repos = case.write(root)
    coords = maven_coordinates(case)
    deps: dict[str, list[str]] = {repo: [] for repo in repos}
    for name, value in case.directives:
        if name == "depends":
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            deps[consumer].append(provider)
    for repo in repos:
        group, artifact = coords[repo]
        dependencies = "".join(
            f"<dependency><groupId>{coords[p][0]}</groupId><artifactId>{coords[p][1]}</artifactId>"
            "<version>1.0</version></dependency>"
            for p in deps[repo]
        )
        (root / repo / "pom.xml").write_text(
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>1.0</version>"
            f"<dependencies>{dependencies}</dependencies></project>\n"
        )
    return repos


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_annotated_case(case_path: Path, tmp_path: Path) -> None:
    case = parse_case(case_path, SYNTAX)
    assert case.expectations, "a case without expectations tests nothing"
    repos = write_case(case, tmp_path)
    built = build_java_corpus([(repo, tmp_path / repo) for repo in repos])
    for (repo, rel), facts in built.files().items():
        assert facts.status == "indexed", f"{repo}:{rel} is {facts.status} ({facts.reason})"
    resolution = java.resolve(built.corpus)
    for edge in resolution.edges:
        assert edge.confidence == Confidence.CANDIDATE and edge.provenance == Provenance.TREE_SITTER_SYNTAX
    observed = Observed().add(resolution.edges, resolution.unresolved, built.declarations, mode="candidate")
    observed = observed.add(resolution.edges, resolution.unresolved, built.declarations)
    candidate = Case(case.files, [e for e in case.expectations if e.mode in ("", "candidate")], case.directives)
    failures = mismatches(candidate, observed, SYNTAX.words)
    for name, value in case.directives:
        if name == "uncalled":
            repo, qn = split_target(value)
            key = built.key(qn, repo)
            incoming = [built.edge_row(e) for e in resolution.edges if e.target == key]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name not in ("maven", "depends"):
            failures.append(f"unknown directive !{name}")
    assert not failures, "\n".join(failures)


def test_overloads_are_one_symbol_each_and_a_lone_method_keeps_its_bare_name(tmp_path: Path) -> None:
    source = (
        b"package p;\nclass A {\n  int f(int a) { return a; }\n  int f(java.util.List<String> xs, int... n)"
        b" { return 0; }\n  void g() {}\n  A() {}\n  A(int x) {}\n}\n"
    )
    facts = java.extract("src/main/java/p/A.java", source, "p")
    assert [(s.kind, s.qualified_name) for s in facts.symbols[1:]] == [
        ("class", "p.A"),
        ("method", "p.A.f(int)"),
        ("method", "p.A.f(List,int...)"),
        ("method", "p.A.g"),
        ("constructor", "p.A.A()"),
        ("constructor", "p.A.A(int)"),
    ]


def test_overloads_that_differ_by_a_type_parameter_bound_erase_as_javac_erases(tmp_path: Path) -> None:
    source = (
        b"package p;\nclass V {\n  static <T extends java.util.Collection<?>> T notEmpty(T c) { return c; }\n"
        b"  static <T extends java.util.Map<?, ?>> T notEmpty(T m) { return m; }\n"
        b"  static <T> T notEmpty(T[] a) { return a[0]; }\n}\n"
    )
    facts = java.extract("p/V.java", source, "p")
    assert [s.qualified_name for s in facts.symbols[2:]] == [
        "p.V.notEmpty(Collection)",
        "p.V.notEmpty(Map)",
        "p.V.notEmpty(Object[])",
    ]


def test_the_package_is_the_declaration_not_the_directory(tmp_path: Path) -> None:
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "X.java").write_text("/* header */\npackage com.real ;\nclass X {}\n")
    (tmp_path / "Y.java").write_text("class Y {}\n")
    assert java.package_for_root(tmp_path, "odd/X.java", frozenset()) == "com.real"
    assert java.package_for_root(tmp_path, "Y.java", frozenset()) == ""
    assert java.package_for("src/main/java/com/ex/A.java", frozenset()) == "com.ex"
