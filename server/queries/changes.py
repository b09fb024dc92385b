"""The roots of a change: which declarations of the generation a unified diff touches (docs/surface.md §11.9.1).

A diff has two sides, and the generation holds at most one of them for each file. Which one is decided per
file by content hash, never assumed:

- ``new``: the file the generation indexed has the bytes of the diff's new side (the generation was built
  after the change, as ``kivgraph index --watch`` does). Its declarations are the new side's: a changed line
  is a ``+`` line, or the place where ``-`` lines were cut out; a declaration all of whose lines are ``+`` lines
  is ``added``. A declaration the change removed is not in the generation any more: it is found by its
  declaring line among the ``-`` lines, and its former users are the uses of its name that no longer bind
  (unresolved references the analyzer recorded), so such a root is never COMPLETE.
- ``old``: the generation indexed the old side (it was built before the edit, as after ``kivgraph index`` at
  the base). A changed line is a ``-`` line, or the place where ``+`` lines were put in; a declaration all of
  whose lines are ``-`` lines is ``removed``, and its walk is exactly what the removal breaks. A declaration
  the change adds is not in the generation yet: it is named from its declaring ``+`` line, and nothing in the
  generation can use it.
- ``pending``: the indexed bytes are neither side (the file was edited again since indexing, or, for a diff
  given as text, its hunks do not match the file on disk): its lines are named, never guessed at.

The new side's bytes are the working tree's (``changes.base``; for ``changes.diff``, when the file on disk
has the hunks' ``+`` and context lines where the diff puts them); the old side's are git's blob at the base
(``changes.base``), or the file on disk when it has the ``-`` and context lines instead (a diff not applied),
or, for a whole file added or deleted, the hunk itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from server.selector import DECLARATION_KINDS
from snapshot_format import languages
from snapshot_format.languages import language_of_path as language_of
from snapshot_format.reader import Generation
from snapshot_format.records import File, Symbol

MAX_FILES = 1000  # changed files looked at in one question
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MODULE_KINDS = frozenset({"module", "namespace", "package", "file"})
_CALLABLE_KINDS = frozenset({"function", "func", "method", "constructor", "getter", "setter", "static_method"})
# A variable or field declared inside a callable is part of its body, not a root of its own.
_LOCAL_KINDS = frozenset({"variable", "var", "const", "constant", "field", "attribute", "property", "static"})

_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "constructor", "super", "new"})


class DiffError(Exception):
    """The diff text cannot be read; the message names where."""


@dataclass
class FileDiff:
    """One file of a unified diff: its two paths (None for a side that does not exist) and its changed lines."""

    old_path: str | None
    new_path: str | None
    removed: dict[int, str] = field(default_factory=dict)  # old line -> text of a "-" line
    added: dict[int, str] = field(default_factory=dict)  # new line -> text of a "+" line
    context: list[tuple[int, int, str]] = field(default_factory=list)  # (old line, new line, text)
    # Where lines were cut out of one side: (line before the cut on the other side, the lines cut)
    new_cuts: list[tuple[int, list[str]]] = field(default_factory=list)  # "-" runs, on the new side
    old_cuts: list[tuple[int, list[str]]] = field(default_factory=list)  # "+" runs, on the old side
    binary: bool = False
    old_no_newline: bool = False
    new_no_newline: bool = False
    whole_old: bool = False  # one hunk covers the whole old side (the file was deleted, or rewritten)
    whole_new: bool = False

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        body = text[1:-1]
        return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n"}.get(m.group(1), m.group(1)), body)
    return text


def _side_path(raw: str, prefix: str) -> str | None:
    text = raw.split("\t", 1)[0].rstrip()
    text = _unquote(text)
    if text == "/dev/null":
        return None
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    return text


def parse_unified_diff(text: str) -> list[FileDiff]:
    """Every file of a unified diff (git's, or ``diff -u``'s), with line numbers on each side."""
    files: list[FileDiff] = []
    lines = text.split("\n")
    i = 0
    current: FileDiff | None = None
    git_prefixes = ("a/", "b/")
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            current = FileDiff(old_path=None, new_path=None)
            files.append(current)
            rest = line[len("diff --git ") :]
            halves = rest.split(" b/", 1) if rest.startswith("a/") else []
            if len(halves) == 2:
                current.old_path = current.new_path = halves[1]
                git_prefixes = ("a/", "b/")
            else:
                git_prefixes = ("", "")
            i += 1
            continue
        if line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            if current is not None:
                current.binary = True
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old_raw, new_raw = line[4:], lines[i + 1][4:]
            if current is None or current.removed or current.added or current.context:
                current = FileDiff(old_path=None, new_path=None)
                files.append(current)
                both = old_raw.startswith("a/") and new_raw.startswith("b/")
                git_prefixes = ("a/", "b/") if both else ("", "")
            current.old_path = _side_path(old_raw, git_prefixes[0])
            current.new_path = _side_path(new_raw, git_prefixes[1])
            i += 2
            continue
        if line.startswith("deleted file mode") and current is not None:
            current.new_path = None
        elif line.startswith("new file mode") and current is not None:
            current.old_path = None
        match = _HUNK.match(line)
        if match is None:
            i += 1
            continue
        if current is None:
            raise DiffError(f"line {i + 1}: a hunk before any file header (--- and +++ lines)")
        i = _read_hunk(current, lines, i, match)
    for f in files:
        for path in (f.old_path, f.new_path):
            if path is not None and (path.startswith("/") or ".." in path.split("/") or "\\" in path or not path):
                raise DiffError(f"{path!r} is not a repository-relative path")
    return [f for f in files if f.old_path is not None or f.new_path is not None]


def _read_hunk(current: FileDiff, lines: list[str], i: int, match: re.Match[str]) -> int:
    a, b = int(match.group(1)), (int(match.group(2)) if match.group(2) is not None else 1)
    c, d = int(match.group(3)), (int(match.group(4)) if match.group(4) is not None else 1)
    if a == 1 and b > 0 and d == 0:
        current.whole_old = True
    if c == 1 and d > 0 and b == 0:
        current.whole_new = True
    old_no = a if b > 0 else a + 1
    new_no = c if d > 0 else c + 1
    old_left, new_left = b, d
    cut: list[str] = []  # a run of "-" lines: where they were is a change on the new side
    put: list[str] = []  # a run of "+" lines: where they go is a change on the old side
    replacing = False  # "-" lines followed by "+" lines: the lines themselves locate the change on each side
    last = ""
    i += 1

    def close_runs() -> None:
        nonlocal cut, put, replacing
        if cut and not replacing:
            current.new_cuts.append((cut_at, cut))
        if put and not replacing:
            current.old_cuts.append((put_at, put))
        cut, put, replacing = [], [], False

    cut_at = put_at = 0
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
        body = lines[i]
        tag, text = (body[:1], body[1:]) if body else (" ", "")
        if tag == "\\":
            if last == "-":
                current.old_no_newline = True
            elif last == "+":
                current.new_no_newline = True
            else:
                current.old_no_newline = current.new_no_newline = True
        elif tag == "-" and old_left > 0:
            if put:
                close_runs()
            if not cut:
                cut_at = new_no - 1
            current.removed[old_no] = text
            cut.append(text)
            old_no += 1
            old_left -= 1
        elif tag == "+" and new_left > 0:
            if cut:
                replacing = True
            if not put:
                put_at = old_no - 1
            current.added[new_no] = text
            put.append(text)
            new_no += 1
            new_left -= 1
        elif tag == " " and old_left > 0 and new_left > 0:
            close_runs()
            current.context.append((old_no, new_no, text))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
        else:
            raise DiffError(f"line {i + 1}: the hunk ends before the line counts of its @@ header say")
        last = tag if tag in "+- " else last
        i += 1
    if old_left > 0 or new_left > 0:
        raise DiffError(f"line {i}: the hunk ends before the line counts of its @@ header say")
    close_runs()
    return i


# --- which side of the diff the generation holds -----------------------------------------------------------------


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def consistent(data: bytes, diff: FileDiff, *, new: bool) -> bool:
    """Whether ``data`` has the diff's lines of one side where the hunks put them (``+`` and context for the new
    side, ``-`` and context for the old); a side with no such line to check is not shown consistent."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    wanted = dict(diff.added if new else diff.removed)
    for old_no, new_no, text in diff.context:
        wanted[new_no if new else old_no] = text
    if not wanted:
        return False
    return all(
        0 < number <= len(lines) and lines[number - 1] == text.removesuffix("\r") for number, text in wanted.items()
    )


def whole_side(diff: FileDiff, *, new: bool) -> bytes | None:
    """The bytes of a side a single hunk spells whole (a file added or deleted), else None."""
    if new and diff.whole_new and diff.old_path is None:
        lines, no_newline = [diff.added[n] for n in sorted(diff.added)], diff.new_no_newline
    elif not new and diff.whole_old and diff.new_path is None:
        lines, no_newline = [diff.removed[n] for n in sorted(diff.removed)], diff.old_no_newline
    else:
        return None
    text = "\n".join(lines) + ("" if no_newline else "\n")
    return text.encode("utf-8")


def other_side(data: bytes, diff: FileDiff, *, to_new: bool) -> bytes:
    """The bytes of the diff's other side, from ``data``, one side's bytes (checked ``consistent`` first): the
    unchanged lines keep their order, the changed ones are the hunks' (a diff applied, or reversed)."""
    text = data.decode("utf-8", "replace")
    ends_with_newline = text.endswith("\n")
    lines = text.split("\n")
    if ends_with_newline or not text:
        lines.pop()
    drop, put = (diff.removed, diff.added) if to_new else (diff.added, diff.removed)
    kept = iter(line for number, line in enumerate(lines, start=1) if number not in drop)
    out = [
        put[number] if number in put else next(kept, "") for number in range(1, len(lines) - len(drop) + len(put) + 1)
    ]
    if to_new:
        newline = not diff.new_no_newline if (diff.new_no_newline or diff.old_no_newline) else ends_with_newline
    else:
        newline = not diff.old_no_newline if (diff.new_no_newline or diff.old_no_newline) else ends_with_newline
    return ("\n".join(out) + ("\n" if newline and out else "")).encode("utf-8")


@dataclass
class SideHashes:
    """What is known of each side's bytes: their SHA-256, or None (unknown, or the side does not exist)."""

    new: str | None = None
    old: str | None = None


@dataclass
class Decided:
    """A changed file of one repository, and which side of its diff the generation holds."""

    repository: str
    diff: FileDiff
    side: str  # "new" | "old" | "pending" | "not_indexed"
    indexed: File | None = None
    reason: str = ""


def decide_side(gen: Generation, repository: str, diff: FileDiff, hashes: SideHashes) -> Decided:
    """Which side of ``diff`` the generation indexed, by content hash (module docstring)."""
    languages = _languages_of(gen, repository)
    indexed_new = gen.file(repository, diff.new_path) if diff.new_path else None
    indexed_old = gen.file(repository, diff.old_path) if diff.old_path else None
    if indexed_new is not None and hashes.new is not None and indexed_new.content_hash == hashes.new:
        return Decided(repository, diff, "new", indexed_new)
    if indexed_old is not None and hashes.old is not None and indexed_old.content_hash == hashes.old:
        return Decided(repository, diff, "old", indexed_old)
    indexed = indexed_new or indexed_old
    language = language_of(diff.path)
    if indexed is None and (diff.binary or language not in languages):
        return Decided(repository, diff, "not_indexed", reason="not a file of the languages indexed here")
    if indexed is not None and indexed.status not in ("indexed", "partial"):
        return Decided(repository, diff, "not_indexed", indexed, f"the indexer {indexed.status} it: {indexed.reason}")
    if indexed is None and diff.old_path is None and diff.new_path is not None:
        # A file the change adds, unknown to the generation: it was indexed before the change.
        return Decided(repository, diff, "old")
    if indexed is None and diff.new_path is None:
        # A file the change deletes, unknown to the generation: it was indexed after the change.
        return Decided(repository, diff, "new")
    if indexed is None:
        return Decided(repository, diff, "pending", reason="the generation holds no file at this path")
    return Decided(
        repository,
        diff,
        "pending",
        indexed,
        "the file was edited since indexing: the indexed bytes are neither side of the diff",
    )


def _languages_of(gen: Generation, repository: str) -> set[str]:
    repo = gen.repository(repository)
    return set(repo.languages) if repo is not None else set()


# --- from changed lines to declarations -----------------------------------------------------------------------


@dataclass
class Root:
    """A declaration the change touches: in the generation (``symbol``), or named from its declaring line."""

    change: str  # "edited" | "added" | "removed"
    repository: str
    path: str
    lines: list[int]  # the changed lines, numbered as the generation's side of the file
    symbol: Symbol | None = None
    name: str = ""  # a declaration the generation does not hold: its name and line on the other side
    line: int = 0
    side: str = ""  # the side the generation holds


def _innermost(decls: list[Symbol], first: int, last: int) -> Symbol | None:
    """The innermost declaration spanning lines ``first``..``last`` (a callable's locals lead to the callable)."""
    best: Symbol | None = None
    for sym in decls:
        if sym.start_line <= first and last <= max(sym.end_line, sym.start_line):
            span = sym.end_line - sym.start_line
            if (
                best is None
                or span < best.end_line - best.start_line
                or (span == best.end_line - best.start_line and sym.start_line >= best.start_line)
            ):
                best = sym
    return best


def _declarations(gen: Generation, repository: str, path: str) -> tuple[list[Symbol], Symbol | None]:
    """(the declarations roots can be, the file's module symbol)."""
    decls: list[Symbol] = []
    module: Symbol | None = None
    everything = list(gen.declarations(repository, path))
    by_key = {s.key: s for s in everything}
    for sym in everything:
        if sym.kind in _MODULE_KINDS:
            if module is None or sym.start_line <= 1:
                module = sym
            continue
        if sym.kind not in DECLARATION_KINDS:
            continue
        container = by_key.get(sym.container)
        if sym.kind in _LOCAL_KINDS and container is not None and container.kind in _CALLABLE_KINDS:
            continue
        decls.append(sym)
    return decls, module


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _meaningful(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith(("#", "//", "/*", "*", "*/"))


def declared_names(language: str, lines: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """(line, name) of the lines that declare a name, by the language's declaring keywords."""
    row = languages.language(language)
    patterns = row.declaring_patterns if row is not None else ()
    out = []
    for number, text in lines:
        for pattern in patterns:
            match = pattern.match(text)
            if match and match.group(1) not in _NOT_NAMES:
                out.append((number, match.group(1)))
                break
    return out


def roots_of(gen: Generation, decided: Decided) -> list[Root]:
    """The declarations of one changed file the change touches, on the side the generation holds."""
    if decided.side not in ("new", "old"):
        return []
    diff, repository = decided.diff, decided.repository
    new = decided.side == "new"
    path = diff.new_path if new else diff.old_path
    language = language_of(diff.path)
    row = languages.language(language)
    indented = row is not None and row.body.blocks == "indent"
    mine = diff.added if new else diff.removed  # changed lines on the generation's side
    theirs = diff.removed if new else diff.added  # changed lines on the other side
    cuts = diff.new_cuts if new else diff.old_cuts  # where the other side's lines were
    decls, module = _declarations(gen, repository, path) if path else ([], None)
    touched: dict[str, tuple[Symbol, set[int]]] = {}

    def touch(sym: Symbol, line: int) -> None:
        touched.setdefault(sym.key, (sym, set()))[1].add(line)

    for number, text in sorted(mine.items()):
        sym = _innermost(decls, number, number)
        if sym is not None:
            touch(sym, number)
        elif module is not None and _meaningful(text):
            touch(module, number)
    for before, texts in cuts:
        sym = _innermost(decls, before, before + 1) if before >= 1 else None
        if sym is None and indented and texts:
            # A body delimited by indentation cut at its end: the lines belonged to the declaration ending
            # just before the cut if they were indented deeper than it.
            enders = [s for s in decls if s.end_line == before and _indent(texts[0]) > s.start_col]
            sym = max(enders, key=lambda s: s.start_col, default=None)
        meaningful = [t for t in texts if _meaningful(t)]
        if sym is not None:
            touch(sym, max(before, 1))
        elif module is not None and meaningful and not declared_names(language, enumerate(meaningful)):
            touch(module, max(before, 1))
    roots: list[Root] = []
    # the module of a file the change adds (new side) or deletes (old side) comes and goes with the file
    whole_file = (diff.old_path is None) if new else (diff.new_path is None)
    if whole_file and not new and module is not None:
        touch(module, 1)  # whoever imports the deleted module breaks, not only the users of its declarations
    for sym, lines in _collapsed(touched, mine):
        whole = _whole(sym, mine) or (whole_file and sym.kind in _MODULE_KINDS)
        change = ("added" if new else "removed") if whole else "edited"
        roots.append(Root(change, repository, path or "", sorted(lines), symbol=sym, side=decided.side))
    # Declarations only the other side holds: named from their declaring lines.
    mine_names = {name for _n, name in declared_names(language, mine.items())}
    for number, name in declared_names(language, theirs.items()):
        if name in mine_names:
            continue  # declared on both sides (a changed signature, a move): the generation's root stands for it
        roots.append(
            Root(
                "removed" if new else "added",
                repository,
                (diff.old_path if new else diff.new_path) or "",
                [number],
                name=name,
                line=number,
                side=decided.side,
            )
        )
    roots.sort(key=lambda r: (r.path, r.symbol.start_line if r.symbol else r.line, r.name))
    return roots


def _whole(sym: Symbol, mine: dict[int, str]) -> bool:
    return sym.kind not in _MODULE_KINDS and all(
        n in mine for n in range(sym.start_line, max(sym.end_line, sym.start_line) + 1)
    )


def _collapsed(touched: dict[str, tuple[Symbol, set[int]]], mine: dict[int, str]) -> list[tuple[Symbol, set[int]]]:
    """The touched declarations, those inside a declaration added or removed whole folded into it."""
    whole = sorted(
        (key for key, (sym, _lines) in touched.items() if _whole(sym, mine)),
        key=lambda k: (touched[k][0].start_line, -touched[k][0].end_line),
    )
    kept: dict[str, tuple[Symbol, set[int]]] = {}
    for key, (sym, lines) in touched.items():
        outer = next((w for w in whole if w != key and _inside(sym, touched[w][0])), None)
        if outer is not None:
            kept.setdefault(outer, (touched[outer][0], set()))[1].update(lines)
        else:
            kept.setdefault(key, (sym, set()))[1].update(lines)
    return list(kept.values())


def _inside(inner: Symbol, outer: Symbol) -> bool:
    return (inner.start_line, -inner.end_line) > (
        outer.start_line,
        -outer.end_line,
    ) and inner.end_line <= outer.end_line


def compress_lines(lines: Iterable[int]) -> str:
    """``3-5,9``: sorted line numbers as ranges."""
    numbers = sorted(set(lines))
    parts: list[str] = []
    start = prev = None
    for n in numbers:
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else f"{start}")
    return ",".join(parts)


def all_lines_added(path: str, data: bytes) -> FileDiff:
    """An untracked file as a diff that adds it whole."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    no_newline = not text.endswith("\n")
    if not no_newline:
        lines.pop()
    diff = FileDiff(old_path=None, new_path=path, whole_new=True, new_no_newline=no_newline and bool(text))
    diff.added = {n: line for n, line in enumerate(lines, start=1)}
    return diff
