"""Annotated Python resolution cases (tests/annotated/python, format in its README.md)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from snapshot_format.vocab import EdgeKind
from tests.python_corpus import BuiltCorpus, build_corpus

CASES_DIR = Path(__file__).parent / "annotated" / "python"
CASES = sorted(CASES_DIR.glob("*.py"))

_MARKER = re.compile(r"^# --- path: (?:(?P<repo>[\w.-]+):)?(?P<path>\S+) ---\s*$")
_ANNOTATION = re.compile(r"^\s*#\s*\^\s*(?P<body>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\s*#\s*!(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
_EDGE_WORDS = {
    "calls": EdgeKind.CALLS_DIRECT,
    "refs": EdgeKind.REFERENCES,
    "imports": EdgeKind.IMPORTS_SYMBOL,
    "extends": EdgeKind.EXTENDS,
    "type": EdgeKind.TYPE_USES,
    "callback": EdgeKind.PASSES_AS_CALLBACK,
}
DEFAULT_REPO = "main"


@dataclass(frozen=True)
class Expectation:
    repo: str
    path: str
    line: int
    col: int
    word: str  # a key of _EDGE_WORDS, "unresolved" or "none"
    value: str  # target QN (maybe "repo:"-prefixed) or reason
    source: str  # expected source QN, or ""
    where: str  # case file line, for messages


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
    code_line = 0  # line number (in the written file) of the last non-annotation line
    code_text = ""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        marker = _MARKER.match(text)
        if marker:
            current = (marker["repo"] or DEFAULT_REPO, marker["path"])
            assert current not in files, f"{path.name}:{number}: {current} appears twice"
            files[current] = []
            code_line = 0
            continue
        if current is None:  # the case's description: comments only
            assert not text.strip() or text.lstrip().startswith("#"), f"{path.name}:{number}: code before a marker"
            continue
        lines = files[current]
        lines.append(text)
        where = f"{path.name}:{number}"
        annotation = _ANNOTATION.match(text)
        directive = _DIRECTIVE.match(text)
        if annotation:
            assert code_line, f"{where}: annotation with no code line above"
            col = text.index("^")
            assert col < len(code_text) and not code_text[col].isspace(), \
                f"{where}: the caret points at nothing in {code_text!r}"
            expectations.append(_expectation(current, code_line, col, annotation["body"], where))
        elif directive:
            directives.append((directive["name"], directive["value"]))
        else:
            code_line, code_text = len(lines), text
    return Case({k: "\n".join(v) + "\n" for k, v in files.items()}, expectations, directives)


def _expectation(file: tuple[str, str], line: int, col: int, body: str, where: str) -> Expectation:
    if body == "none":
        return Expectation(*file, line, col, "none", "", "", where)
    word, _, rest = body.partition(":")
    word, rest = word.strip(), rest.strip()
    assert word in _EDGE_WORDS or word == "unresolved", f"{where}: unknown annotation {body!r}"
    value, _, source = rest.partition(" from ")
    return Expectation(*file, line, col, word, value.strip(), source.strip(), where)


def _run(case: Case, root: Path) -> tuple[BuiltCorpus, object]:
    repos: list[str] = []
    for repo, rel in case.files:
        if repo not in repos:
            repos.append(repo)
        target = root / repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case.files[(repo, rel)])
    built = build_corpus([(repo, root / repo) for repo in repos])
    return built, built.resolve()


def _matches(expected: str, repo: str, qn: str) -> bool:
    exp_repo, sep, exp_qn = expected.rpartition(":")
    return qn == exp_qn and (not sep or exp_repo == repo)


@pytest.mark.parametrize("case_path", CASES, ids=[p.stem for p in CASES])
def test_annotated_case(case_path: Path, tmp_path: Path) -> None:
    case = parse_case(case_path)
    assert case.expectations, "a case without expectations tests nothing"
    built, resolution = _run(case, tmp_path)
    for (repo, rel), facts in built.files().items():
        assert facts.status == "indexed", f"{repo}:{rel} {facts.reason}"

    edges_at: dict[tuple[str, str, int, int], list[tuple[EdgeKind, str, str, str]]] = defaultdict(list)
    for edge in resolution.edges:  # type: ignore[attr-defined]
        src = built.declarations[edge.source]
        dst = built.declarations[edge.target]
        edges_at[(src.repository, src.path, edge.line, edge.col)].append(
            (EdgeKind(edge.kind), dst.repository, dst.qualified_name, src.qualified_name))
    unresolved_at: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    for row in resolution.unresolved:  # type: ignore[attr-defined]
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
            actual = [(repo, qn, src) for k, repo, qn, src in edges if k == kind]
            missing = [e.value for e in wanted if not any(_matches(e.value, r, q) for r, q, _ in actual)]
            extra = [f"{r}:{q}" for r, q, _ in actual if not any(_matches(e.value, r, q) for e in wanted)]
            if missing or extra:
                failures.append(f"{where}: {word} missing {missing} unexpected {extra} (all edges here: {edges})")
            for e in wanted:
                if e.source and any(src != e.source for r, q, src in actual if _matches(e.value, r, q)):
                    failures.append(f"{where}: {word} {e.value} expected from {e.source}, got {actual}")
        wanted_reasons = sorted(e.value for e in exps if e.word == "unresolved")
        if wanted_reasons != reasons:
            failures.append(f"{where}: unresolved expected {wanted_reasons}, got {reasons}")
        if wanted_reasons and not any(e.word in _EDGE_WORDS for e in exps):
            calls = [e for e in edges if e[0] == EdgeKind.CALLS_DIRECT]
            if calls:
                failures.append(f"{where}: unresolved reference also has call edges {calls}")

    for name, value in case.directives:
        if name == "uncalled":
            key = built.key(value)
            incoming = [built.edge_row(e) for e in resolution.edges if e.target == key]  # type: ignore[attr-defined]
            if incoming:
                failures.append(f"!uncalled {value}: has incoming edges {incoming}")
        elif name == "depends":
            consumer, _, provider = (part.strip() for part in value.partition("->"))
            deps = {(d.consumer_repository + "/" + d.consumer_package, d.provider_repository + "/" + d.provider_package)
                    for d in resolution.package_dependencies}  # type: ignore[attr-defined]
            if (consumer, provider) not in deps:
                failures.append(f"!depends {value}: dependencies are {sorted(deps)}")
        else:
            failures.append(f"unknown directive !{name}")
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
    case = parse_case(case_file)
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
        parse_case(case_file)
