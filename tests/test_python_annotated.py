"""Annotated Python resolution cases (tests/annotated/python, format in its README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.facts import EdgeFact
from snapshot_format.vocab import EdgeKind
from tests.annotated_cases import Case, Observed, Syntax, mismatches, parse_case
from tests.python_corpus import BuiltCorpus, build_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "python"
CASES = sorted(CASES_DIR.glob("*.py"))
SYNTAX = Syntax(
    "#",
    {
        "calls": EdgeKind.CALLS_DIRECT,
        "refs": EdgeKind.REFERENCES,
        "imports": EdgeKind.IMPORTS_SYMBOL,
        "extends": EdgeKind.EXTENDS,
        "type": EdgeKind.TYPE_USES,
        "callback": EdgeKind.PASSES_AS_CALLBACK,
    },
)


def directive_failures(case: Case, built: BuiltCorpus, resolution: Resolution) -> list[str]:
    """``!uncalled: QN`` (no incoming edge) and ``!depends: repo/pkg -> repo/pkg`` (a package dependency)."""
    failures: list[str] = []
    for name, value in case.directives:
        if name == "uncalled":
            key = built.key(value)
            incoming = [built.edge_row(e) for e in resolution.edges if e.target == key]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name == "depends":
            consumer, _, provider = (part.strip() for part in value.partition("->"))
            deps = {
                (d.consumer_repository + "/" + d.consumer_package, d.provider_repository + "/" + d.provider_package)
                for d in resolution.package_dependencies
            }
            if (consumer, provider) not in deps:
                failures.append(f"!depends {value}: dependencies are {sorted(deps)}")
        elif name in ("stands", "stands-alone"):
            failures += stands_failures(name, value, built, resolution.edges)
        else:
            failures.append(f"unknown directive !{name}")
    return failures


def stands_failures(name: str, value: str, built: BuiltCorpus, edges: list[EdgeFact]) -> list[str]:
    """``!stands: A -> B`` (a STANDS_FOR edge from A to B) and ``!stands-alone: A`` (none touches A)."""
    pairs = {(e.source, e.target) for e in edges if e.kind == EdgeKind.STANDS_FOR}
    shown = sorted(
        f"{built.declarations[a].qualified_name} -> {built.declarations[b].qualified_name}" for a, b in pairs
    )
    if name == "stands":
        stub, _, impl = (part.strip() for part in value.partition("->"))
        if (built.key(stub), built.key(impl)) not in pairs:
            return [f"!stands {value}: STANDS_FOR edges are {shown}"]
        return []
    key = built.key(value)
    if any(key in pair for pair in pairs):
        return [f"!stands-alone {value}: STANDS_FOR edges are {shown}"]
    return []


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_annotated_case(case_path: Path, tmp_path: Path) -> None:
    case = parse_case(case_path, SYNTAX)
    assert case.expectations, "a case without expectations tests nothing"
    repos = case.write(tmp_path)
    built = build_corpus([(repo, tmp_path / repo) for repo in repos])
    resolution = built.resolve()
    for (repo, rel), facts in built.files().items():
        assert facts.status == "indexed", f"{repo}:{rel} {facts.reason}"
    observed = Observed().add(resolution.edges, resolution.unresolved, built.declarations)
    failures = mismatches(case, observed, SYNTAX.words) + directive_failures(case, built, resolution)
    assert not failures, "\n".join(failures)


def test_the_case_parser_reads_markers_carets_and_directives(tmp_path: Path) -> None:
    case_file = tmp_path / "sample.py"
    case_file.write_text(
        "# --- path: a/b.py ---\n"
        "# !uncalled: a.b.f\n"
        "def f():\n"
        "    return g()\n"
        "#          ^ calls: a.b.g from a.b.f\n"
        "#          ^ none\n"
        "# --- path: other:c.py ---\n"
        "value = 1\n"
        "#^ unresolved: NAME_NOT_RESOLVED\n"
    )
    case = parse_case(case_file, SYNTAX)
    assert list(case.files) == [("main", "a/b.py"), ("other", "c.py")]
    assert [(e.repo, e.path, e.line, e.col, e.word, e.value, e.source) for e in case.expectations] == [
        ("main", "a/b.py", 3, 11, "calls", "a.b.g", "a.b.f"),
        ("main", "a/b.py", 3, 11, "none", "", ""),
        ("other", "c.py", 1, 1, "unresolved", "NAME_NOT_RESOLVED", ""),
    ]
    assert case.directives == [("uncalled", "a.b.f")]


def test_a_caret_pointing_at_blank_space_is_a_broken_case(tmp_path: Path) -> None:
    case_file = tmp_path / "bad.py"
    case_file.write_text("# --- path: m.py ---\nx = 1\n#    ^ none\n")
    with pytest.raises(AssertionError, match="points at nothing"):
        parse_case(case_file, SYNTAX)


def test_the_harness_reports_a_wrong_target_a_missing_row_and_an_edge_where_none_is_expected(tmp_path: Path) -> None:
    case_file = tmp_path / "wrong.py"
    case_file.write_text(
        "# --- path: m.py ---\n"
        "def f():\n"
        "    return g()\n"
        "#          ^ calls: m.h\n"
        "def g():\n"
        "    return f()\n"
        "#          ^ none\n"
        "def h():\n"
        "    return nothing()\n"
        "#          ^ unresolved: SOME_OTHER_REASON\n"
    )
    case = parse_case(case_file, SYNTAX)
    repos = case.write(tmp_path / "repos")
    built = build_corpus([(repo, tmp_path / "repos" / repo) for repo in repos])
    resolution = built.resolve()
    observed = Observed().add(resolution.edges, resolution.unresolved, built.declarations)
    failures = mismatches(case, observed, SYNTAX.words)
    assert len(failures) == 3, failures
    assert "missing ['m.h'] unexpected ['main:m.g']" in failures[0]
    assert "expected nothing" in failures[1]
    assert "unresolved expected ['SOME_OTHER_REASON']" in failures[2]
