"""The one harness for annotated resolution cases of every language (stack-graphs / jedi style).

A case file is split into repository files by marker lines (``# --- path: [repo:]file ---``, with the
language's line-comment prefix); under a code line, a caret annotation names what must be found at the
caret's column::

    return self.area()
    #      ^ calls: geo.Square.area from geo.Square.describe

``WORD: VALUE [from SOURCE]`` expects an edge of the word's kind to VALUE (a qualified name, optionally
``repo:``-prefixed) whose source is SOURCE; ``unresolved: REASON`` an unresolved row; ``none`` nothing at
all. An annotation may start with a mode (``candidate calls: ...``) when a case is run in two modes.
``!name: value`` lines are directives for the language's runner. Each language's README in
tests/annotated/ lists its words and directives.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from snapshot_format.vocab import Confidence, EdgeKind

DEFAULT_REPO = "main"

Position = tuple[str, str, str, int, int]  # (mode, repository, path, line, col)


@dataclass(frozen=True)
class Expectation:
    repo: str
    path: str
    line: int
    col: int
    mode: str  # "" or a mode word the annotation started with ("candidate")
    word: str  # an edge word, "unresolved" or "none"
    value: str  # target QN (maybe "repo:"-prefixed) or reason
    source: str  # expected source QN, or ""
    where: str  # case file and line, for messages

    @property
    def position(self) -> Position:
        return (self.mode, self.repo, self.path, self.line, self.col)


@dataclass
class Case:
    files: dict[tuple[str, str], str]
    expectations: list[Expectation]
    directives: list[tuple[str, str]] = field(default_factory=list)

    def repositories(self) -> list[str]:
        """Repository names in order of first appearance."""
        return list(dict.fromkeys(repo for repo, _ in self.files))

    def write(self, root: Path) -> list[str]:
        """Write every file under ``root/<repository>/``; the repository names in order."""
        for (repo, rel), text in self.files.items():
            target = root / repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return self.repositories()


@dataclass(frozen=True)
class Syntax:
    """How a language writes case files."""

    comment: str  # line-comment prefix: "#" or "//"
    words: Mapping[str, EdgeKind]  # annotation word -> edge kind
    modes: tuple[str, ...] = ()  # optional leading mode words
    keep_annotations: bool = True  # annotation and directive lines stay in the written file, as comments

    def pattern(self, body: str) -> re.Pattern[str]:
        return re.compile(r"^\s*" + re.escape(self.comment) + body)


def parse_case(path: Path, syntax: Syntax) -> Case:
    """Split a case file into repository files, expectations and directives."""
    c = re.escape(syntax.comment)
    marker_re = re.compile(r"^" + c + r" --- path: (?:(?P<repo>[\w.-]+):)?(?P<path>\S+) ---\s*$")
    annotation_re = syntax.pattern(r"\s*\^\s*(?P<body>.*?)\s*$")
    directive_re = syntax.pattern(r"\s*!(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
    files: dict[tuple[str, str], list[str]] = {}
    expectations: list[Expectation] = []
    directives: list[tuple[str, str]] = []
    current: tuple[str, str] | None = None
    code_line, code_text = 0, ""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        where = f"{path.name}:{number}"
        marker = marker_re.match(text)
        if marker:
            current = (marker["repo"] or DEFAULT_REPO, marker["path"])
            assert current not in files, f"{where}: {current} appears twice"
            files[current] = []
            code_line = 0
            continue
        directive = directive_re.match(text)
        if directive:
            directives.append((directive["name"], directive["value"]))
        if current is None:  # the case's description: comments (and directives) only
            assert not text.strip() or text.lstrip().startswith(syntax.comment), f"{where}: code before a marker"
            continue
        annotation = annotation_re.match(text)
        if syntax.keep_annotations or not (annotation or directive):
            files[current].append(text)
        if annotation:
            col = text.index("^")
            assert code_line, f"{where}: annotation with no code line above"
            assert col < len(code_text) and not code_text[col].isspace(), (
                f"{where}: the caret points at nothing in {code_text!r}"
            )
            expectations.append(_expectation(current, code_line, col, annotation["body"], where, syntax))
        elif not directive:
            code_line, code_text = len(files[current]), text
    return Case({k: "\n".join(v) + "\n" for k, v in files.items()}, expectations, directives)


def _expectation(file: tuple[str, str], line: int, col: int, body: str, where: str, syntax: Syntax) -> Expectation:
    mode = ""
    for m in syntax.modes:
        if body.startswith(m + " "):
            mode, body = m, body[len(m) + 1 :]
    if body == "none":
        return Expectation(*file, line, col, mode, "none", "", "", where)
    word, _, rest = body.partition(":")
    word, rest = word.strip(), rest.strip()
    assert word in syntax.words or word == "unresolved", f"{where}: unknown annotation {body!r}"
    value, _, source = rest.partition(" from ")
    return Expectation(*file, line, col, mode, word, value.strip(), source.strip(), where)


# --- what a resolution produced, by position ------------------------------------------------------------


class _Declaration(Protocol):
    @property
    def repository(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def qualified_name(self) -> str: ...


class _Edge(Protocol):
    kind: int
    source: str
    target: str
    confidence: int
    line: int
    col: int


class _Row(Protocol):
    repository: str
    path: str
    line: int
    col: int
    reason: str


@dataclass(frozen=True)
class Found:
    kind: EdgeKind
    repo: str  # the target's repository
    qn: str  # the target's qualified name
    source: str  # the source's qualified name
    confidence: int


@dataclass
class Observed:
    """Edges and unresolved rows of one or more resolutions, keyed by (mode, repository, path, line, col)."""

    edges: dict[Position, list[Found]] = field(default_factory=lambda: defaultdict(list))
    unresolved: dict[Position, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(
        self,
        edges: Iterable[_Edge],
        rows: Iterable[_Row],
        declarations: Mapping[str, _Declaration],
        mode: str = "",
        keep: Callable[[_Edge], bool] = lambda _e: True,
    ) -> Observed:
        for e in edges:
            if not keep(e):
                continue
            s, d = declarations[e.source], declarations[e.target]
            self.edges[(mode, s.repository, s.path, e.line, e.col)].append(
                Found(EdgeKind(e.kind), d.repository, d.qualified_name, s.qualified_name, e.confidence)
            )
        for u in rows:
            self.unresolved[(mode, u.repository, u.path, u.line, u.col)].append(u.reason)
        return self


# ``repo:qualified.name``: the repository prefix ends at a single colon (Rust paths hold ``::``).
_TARGET = re.compile(r"^(?:(?P<repo>[\w.-]+):(?!:))?(?P<qn>.+)$")


def split_target(expected: str) -> tuple[str | None, str]:
    """(repository or None, qualified name) of an expected ``[repo:]qn``."""
    found = _TARGET.match(expected)
    assert found is not None, expected
    return found["repo"], found["qn"]


def matches(expected: str, repo: str, qn: str) -> bool:
    """Whether an expected ``[repo:]qn`` names this target."""
    exp_repo, exp_qn = split_target(expected)
    return qn == exp_qn and (exp_repo is None or exp_repo == repo)


def mismatches(
    case: Case,
    observed: Observed,
    words: Mapping[str, EdgeKind],
    *,
    exact: Callable[[Expectation], bool] = lambda _e: False,
) -> list[str]:
    """Every expectation of the case the observed resolution does not meet, as messages.

    At a position with expectations, the edges of each expected word must be exactly the expected targets
    (and sources, where given), the unresolved reasons exactly the expected ones; ``none`` means no edge and
    no row. ``exact(expectation)`` says where an edge must be EXACT_TYPECHECKED.
    """
    by_position: dict[Position, list[Expectation]] = defaultdict(list)
    for exp in case.expectations:
        by_position[exp.position].append(exp)
    failures: list[str] = []
    for pos, exps in by_position.items():
        edges, reasons, where = (observed.edges.get(pos, []), sorted(observed.unresolved.get(pos, [])), exps[0].where)
        label = f"{pos[0]} " if pos[0] else ""
        if any(e.word == "none" for e in exps):
            if edges or reasons:
                failures.append(f"{where}: {label}expected nothing, got edges {edges} unresolved {reasons}")
            continue
        for word, kind in words.items():
            wanted = [e for e in exps if e.word == word]
            if not wanted:
                continue
            actual = [f for f in edges if f.kind == kind]
            missing = [e.value for e in wanted if not any(matches(e.value, f.repo, f.qn) for f in actual)]
            extra = [f"{f.repo}:{f.qn}" for f in actual if not any(matches(e.value, f.repo, f.qn) for e in wanted)]
            if missing or extra:
                failures.append(
                    f"{where}: {label}{word} missing {missing} unexpected {extra} (all edges here: {edges})"
                )
            for e in wanted:
                hits = [f for f in actual if matches(e.value, f.repo, f.qn)]
                if e.source and any(f.source != e.source for f in hits):
                    failures.append(f"{where}: {word} {e.value} expected from {e.source}, got {hits}")
                if exact(e) and any(f.confidence != Confidence.EXACT_TYPECHECKED for f in hits):
                    failures.append(f"{where}: {word} {e.value} is not EXACT_TYPECHECKED: {hits}")
        wanted_reasons = sorted(e.value for e in exps if e.word == "unresolved")
        if wanted_reasons != reasons:
            failures.append(f"{where}: {label}unresolved expected {wanted_reasons}, got {reasons}")
        if wanted_reasons and not any(e.word in words for e in exps) and edges:
            failures.append(f"{where}: {label}an unresolved reference also has edges {edges}")
    return failures
