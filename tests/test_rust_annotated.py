"""Annotated Rust resolution cases on the CANDIDATE resolver (tests/annotated/rust, format in its README.md)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.corpus import Resolution
from indexer.languages import rust
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.python_corpus import BuiltCorpus
from tests.rust_corpus import build_rust_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "rust"
CASES = sorted(CASES_DIR.glob("*.rs.txt"))
DEFAULT_REPO = "main"

_MARKER = re.compile(r"^// --- path: (?:(?P<repo>[\w.-]+):)?(?P<path>\S+) ---\s*$")
_ANNOTATION = re.compile(r"^\s*//\s*\^\s*(?P<body>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\s*//\s*!(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
# A target is ``repo:qualified::name``; the repository prefix ends at a single colon.
_TARGET = re.compile(r"^(?:(?P<repo>[\w.-]+):(?!:))?(?P<qn>.+)$")
_EDGE_WORDS = {
    "calls": EdgeKind.CALLS_DIRECT,
    "refs": EdgeKind.REFERENCES,
    "type": EdgeKind.TYPE_USES,
    "callback": EdgeKind.PASSES_AS_CALLBACK,
    "imports": EdgeKind.IMPORTS_SYMBOL,
    "reexports": EdgeKind.REEXPORTS,
    "implements": EdgeKind.IMPLEMENTS,
    "extends": EdgeKind.EXTENDS,
    "method_of": EdgeKind.METHOD_OF,
}


@dataclass(frozen=True)
class Expectation:
    repo: str
    path: str
    line: int
    col: int
    word: str  # a key of _EDGE_WORDS, "unresolved" or "none"
    value: str  # target (maybe "repo:"-prefixed) or reason
    source: str  # expected source qualified name, or ""
    where: str


@dataclass
class Case:
    files: dict[tuple[str, str], str]
    expectations: list[Expectation]
    directives: list[tuple[str, str]]


def parse_case(path: Path) -> Case:
    """Split a case file into repository files, expectations and directives."""
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
            assert current not in files, f"{where}: {current} appears twice"
            files[current] = []
            code_line = 0
            continue
        directive = _DIRECTIVE.match(text)
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
            assert col < len(code_text) and not code_text[col].isspace(), f"{where}: the caret points at nothing"
            body = annotation["body"]
            if body == "none":
                expectations.append(Expectation(*current, code_line, col, "none", "", "", where))
                continue
            word, _, rest = body.partition(":")
            word = word.strip()
            assert word in _EDGE_WORDS or word == "unresolved", f"{where}: unknown annotation {body!r}"
            value, _, source = rest.strip().partition(" from ")
            expectations.append(Expectation(*current, code_line, col, word, value.strip(), source.strip(), where))
        elif not directive:
            code_line, code_text = len(lines), text
    return Case({k: "\n".join(v) + "\n" for k, v in files.items()}, expectations, directives)


def write_case(case: Case, root: Path) -> list[str]:
    """Write a case's repositories under ``root``, each with a Cargo.toml; their names in order."""
    repos: list[str] = []
    for repo, rel in case.files:
        if repo not in repos:
            repos.append(repo)
        target = root / repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case.files[(repo, rel)])
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


def _matches(expected: str, repo: str, qn: str) -> bool:
    found = _TARGET.match(expected)
    assert found is not None
    return qn == found["qn"] and (found["repo"] is None or found["repo"] == repo)


@dataclass
class Ran:
    case: Case
    built: BuiltCorpus
    resolution: Resolution


def run_case(case_path: Path, root: Path) -> Ran:
    case = parse_case(case_path)
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

    edges_at: dict[tuple[str, str, int, int], list[tuple[EdgeKind, str, str, str]]] = defaultdict(list)
    for edge in resolution.edges:
        src = built.declarations[edge.source]
        dst = built.declarations[edge.target]
        edges_at[(src.repository, src.path, edge.line, edge.col)].append(
            (EdgeKind(edge.kind), dst.repository, dst.qualified_name, src.qualified_name))
    unresolved_at: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    for row in resolution.unresolved:
        unresolved_at[(row.repository, row.path, row.line, row.col)].append(row.reason)
    by_position: dict[tuple[str, str, int, int], list[Expectation]] = defaultdict(list)
    for exp in case.expectations:
        by_position[(exp.repo, exp.path, exp.line, exp.col)].append(exp)

    failures: list[str] = []
    for pos, exps in by_position.items():
        edges = edges_at.get(pos, [])
        reasons = sorted(unresolved_at.get(pos, []))
        where = exps[0].where
        if any(e.word == "none" for e in exps):
            if edges or reasons:
                failures.append(f"{where}: expected nothing, got edges {edges} unresolved {reasons}")
            continue
        for word, kind in _EDGE_WORDS.items():
            wanted = [e for e in exps if e.word == word]
            if not wanted:
                continue
            actual = [(r, q, s) for k, r, q, s in edges if k == kind]
            missing = [e.value for e in wanted if not any(_matches(e.value, r, q) for r, q, _ in actual)]
            extra = [f"{r}:{q}" for r, q, _ in actual if not any(_matches(e.value, r, q) for e in wanted)]
            if missing or extra:
                failures.append(f"{where}: {word} missing {missing} unexpected {extra} (all edges here: {edges})")
            for e in wanted:
                if e.source and any(s != e.source for r, q, s in actual if _matches(e.value, r, q)):
                    failures.append(f"{where}: {word} {e.value} expected from {e.source}, got {actual}")
        wanted_reasons = sorted(e.value for e in exps if e.word == "unresolved")
        if wanted_reasons != reasons:
            failures.append(f"{where}: unresolved expected {wanted_reasons}, got {reasons}")

    for name, value in case.directives:
        if name == "uncalled":
            found = _TARGET.match(value)
            assert found is not None
            key = built.key(found["qn"], found["repo"])
            incoming = [built.edge_row(e) for e in resolution.edges
                        if e.target == key and e.kind != EdgeKind.METHOD_OF]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name == "declares":
            repo_qn, _, kind = value.rpartition(" ")
            found = _TARGET.match(repo_qn)
            assert found is not None
            hits = [d for d in built.declarations.values() if d.qualified_name == found["qn"] and d.kind == kind
                    and (found["repo"] is None or d.repository == found["repo"])]
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
    case = parse_case(case_file)
    assert list(case.files) == [("main", "src/lib.rs"), ("other", "src/lib.rs")]
    assert [(e.repo, e.path, e.line, e.col, e.word, e.value, e.source) for e in case.expectations] == [
        ("main", "src/lib.rs", 2, 13, "calls", "main::g", "main::f"),
        ("other", "src/lib.rs", 1, 7, "unresolved", "NAME_NOT_RESOLVED", ""),
    ]
    assert case.directives == [("uncalled", "main::g")]
    assert _matches("other:lib::X", "other", "lib::X") and not _matches("other:lib::X", "main", "lib::X")
    assert _matches("lib::X", "main", "lib::X") and not _matches("lib::Y", "main", "lib::X")


def test_a_caret_pointing_at_blank_space_is_a_broken_case(tmp_path: Path) -> None:
    case_file = tmp_path / "bad.rs.txt"
    case_file.write_text("// --- path: src/lib.rs ---\nfn f() {}\n//        ^ none\n")
    with pytest.raises(AssertionError, match="points at nothing"):
        parse_case(case_file)
