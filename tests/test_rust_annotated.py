"""Annotated Rust resolution cases on the CANDIDATE resolver (tests/annotated/rust, format in its README.md)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.languages import rust
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.annotated_cases import DEFAULT_REPO, Case, Observed, Syntax, matches, mismatches, parse_case, split_target
from tests.python_corpus import BuiltCorpus
from tests.rust_corpus import build_rust_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "rust"
CASES = sorted(CASES_DIR.glob("*.rs.txt"))
SYNTAX = Syntax(
    "//",
    {
        "calls": EdgeKind.CALLS_DIRECT,
        "refs": EdgeKind.REFERENCES,
        "type": EdgeKind.TYPE_USES,
        "callback": EdgeKind.PASSES_AS_CALLBACK,
        "imports": EdgeKind.IMPORTS_SYMBOL,
        "reexports": EdgeKind.REEXPORTS,
        "implements": EdgeKind.IMPLEMENTS,
        "extends": EdgeKind.EXTENDS,
        "method_of": EdgeKind.METHOD_OF,
    },
)


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories under ``root``, each with a Cargo.toml; their names in order."""
    repos = case.write(root)
    crates = {repo: repo.replace("-", "_") for repo in repos}
    deps: dict[str, list[str]] = defaultdict(list)
    external: dict[str, list[str]] = defaultdict(list)
    for name, value in case.directives:
        if name == "crate":
            repo, crate = value.split()
            crates[repo] = crate
        elif name == "depends":
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            deps[consumer].append(provider)
        elif name == "external":
            consumer, crate = value.split()
            external[consumer].append(crate)
    for repo in repos:
        lines = [f'[package]\nname = "{crates[repo]}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n']
        lines += [f'{crates.get(p, p)} = {{ path = "../{p}" }}\n' for p in deps[repo]]
        lines += [f'{crate} = "1"\n' for crate in external[repo]]
        (root / repo / "Cargo.toml").write_text("".join(lines))
    return repos


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution


def run_case(case_path: Path, root: Path) -> Ran:
    case = parse_case(case_path, SYNTAX)
    repos = write_case(case, root)
    built = build_rust_corpus([(repo, root / repo) for repo in repos])
    return Ran(case, built, rust.resolve(built.corpus))


@pytest.mark.parametrize("case_path", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_annotated_case(case_path: Path, tmp_path: Path) -> None:
    ran = run_case(case_path, tmp_path)
    case, built, resolution = ran.case, ran.built, ran.resolution
    assert case.expectations, "a case without expectations tests nothing"
    partial = {tuple(v.split(":", 1)) if ":" in v else (DEFAULT_REPO, v) for n, v in case.directives if n == "partial"}
    for (repo, rel), facts in built.files().items():
        wanted = "partial" if (repo, rel) in partial else "indexed"
        assert facts.status == wanted, f"{repo}:{rel} is {facts.status} ({facts.reason}), expected {wanted}"
    for edge in resolution.edges:
        assert edge.confidence == Confidence.CANDIDATE and edge.provenance == Provenance.TREE_SITTER_SYNTAX

    observed = Observed().add(resolution.edges, resolution.unresolved, built.declarations)
    failures = mismatches(case, observed, SYNTAX.words)

    for name, value in case.directives:
        if name == "uncalled":
            repo, qn = split_target(value)
            key = built.key(qn, repo)
            incoming = [built.edge_row(e) for e in resolution.edges if e.target == key and e.kind != EdgeKind.METHOD_OF]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name == "declares":
            repo_qn, _, kind = value.rpartition(" ")
            repo, qn = split_target(repo_qn)
            hits = [
                d
                for d in built.declarations.values()
                if d.qualified_name == qn and d.kind == kind and (repo is None or d.repository == repo)
            ]
            if len(hits) != 1:
                failures.append(f"!declares {value}: {len(hits)} declarations")
        elif name == "depends":
            consumer, _, provider = (p.strip() for p in value.partition("->"))
            deps = {(d.consumer_repository, d.provider_repository) for d in resolution.package_dependencies}
            if (consumer, provider) not in deps:
                failures.append(f"!depends {value}: package dependencies are {sorted(deps)}")
        elif name not in ("crate", "partial", "external"):
            failures.append(f"unknown directive !{name}")
    assert not failures, "\n".join(failures)


def test_the_case_parser_reads_markers_carets_directives_and_crate_paths(tmp_path: Path) -> None:
    case_file = tmp_path / "sample.rs.txt"
    case_file.write_text(
        "// --- path: src/lib.rs ---\n"
        "// !uncalled: main::g\n"
        "pub fn f() { g() }\n"
        "//           ^ calls: main::g from main::f\n"
        "// --- path: other:src/lib.rs ---\n"
        "pub fn h() {}\n"
        "//     ^ unresolved: NAME_NOT_RESOLVED\n"
    )
    case = parse_case(case_file, SYNTAX)
    assert list(case.files) == [("main", "src/lib.rs"), ("other", "src/lib.rs")]
    assert [(e.repo, e.path, e.line, e.col, e.word, e.value, e.source) for e in case.expectations] == [
        ("main", "src/lib.rs", 2, 13, "calls", "main::g", "main::f"),
        ("other", "src/lib.rs", 1, 7, "unresolved", "NAME_NOT_RESOLVED", ""),
    ]
    assert case.directives == [("uncalled", "main::g")]
    assert matches("other:lib::X", "other", "lib::X") and not matches("other:lib::X", "main", "lib::X")
    assert matches("lib::X", "main", "lib::X") and not matches("lib::Y", "main", "lib::X")


def test_a_caret_pointing_at_blank_space_is_a_broken_case(tmp_path: Path) -> None:
    case_file = tmp_path / "bad.rs.txt"
    case_file.write_text("// --- path: src/lib.rs ---\nfn f() {}\n//        ^ none\n")
    with pytest.raises(AssertionError, match="points at nothing"):
        parse_case(case_file, SYNTAX)
