"""Joining SCIP occurrences with tree-sitter declarations: language-neutral helpers.

SCIP says *what* an occurrence refers to; tree-sitter says *where* declarations
begin and end. Together they give each use its edge source (the innermost
enclosing declaration, or the module when at top level) and map SCIP
definition symbols to our own declarations: a definition occurrence binds to
the innermost declaration whose span contains it and whose name is the
occurrence's name, never to a declaration found by name alone.

Positions here are kivgraph's: lines 1-based, columns 0-based in UTF-8 bytes.
SCIP ranges are 0-based lines in the index's column unit (``ColumnMap``
converts UTF-16 or UTF-32 columns on the lines that need it).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgspec

from indexer.facts import SymbolFact
from indexer.scip.decode import Occurrence

# Descriptor suffixes, as written in a symbol string.
NAMESPACE, TYPE, TERM, METHOD, TYPE_PARAMETER, PARAMETER, META, MACRO = ("/", "#", ".", "()", "[]", "(param)", ":", "!")

_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-$")


@dataclass(frozen=True, slots=True)
class Descriptor:
    name: str
    suffix: str
    disambiguator: str = ""


@dataclass(frozen=True, slots=True)
class ScipSymbol:
    """A parsed global SCIP symbol: ``<scheme> <manager> <package> <version> <descriptors>``."""

    scheme: str
    manager: str
    package: str
    version: str
    descriptors: tuple[Descriptor, ...]


def _space_field(text: str, pos: int) -> tuple[str, int]:
    """One space-terminated header field ('  ' is an escaped space); returns (value, next position)."""
    out: list[str] = []
    while pos < len(text):
        ch = text[pos]
        if ch == " ":
            if pos + 1 < len(text) and text[pos + 1] == " ":
                out.append(" ")
                pos += 2
                continue
            return "".join(out), pos + 1
        out.append(ch)
        pos += 1
    raise ValueError("symbol header ended early")


def _name(text: str, pos: int) -> tuple[str, int]:
    if pos < len(text) and text[pos] == "`":
        out: list[str] = []
        pos += 1
        while pos < len(text):
            if text[pos] == "`":
                if pos + 1 < len(text) and text[pos + 1] == "`":
                    out.append("`")
                    pos += 2
                    continue
                return "".join(out), pos + 1
            out.append(text[pos])
            pos += 1
        raise ValueError("unterminated escaped name")
    start = pos
    while pos < len(text) and text[pos] in _IDENT_CHARS:
        pos += 1
    return text[start:pos], pos


def parse_symbol(symbol: str) -> ScipSymbol | None:
    """Parse a global symbol; None for ``local N`` symbols and for strings that are not symbols."""
    if not symbol or symbol.startswith("local "):
        return None
    try:
        pos = 0
        scheme, pos = _space_field(symbol, pos)
        manager, pos = _space_field(symbol, pos)
        package, pos = _space_field(symbol, pos)
        version, pos = _space_field(symbol, pos)
        descriptors: list[Descriptor] = []
        while pos < len(symbol):
            ch = symbol[pos]
            if ch == "(":
                name, pos = _name(symbol, pos + 1)
                if symbol[pos : pos + 1] != ")":
                    return None
                descriptors.append(Descriptor(name, PARAMETER))
                pos += 1
                continue
            if ch == "[":
                name, pos = _name(symbol, pos + 1)
                if symbol[pos : pos + 1] != "]":
                    return None
                descriptors.append(Descriptor(name, TYPE_PARAMETER))
                pos += 1
                continue
            name, pos = _name(symbol, pos)
            suffix = symbol[pos : pos + 1]
            if suffix == "(":
                end = symbol.find(").", pos)
                if end < 0:
                    return None
                descriptors.append(Descriptor(name, METHOD, symbol[pos + 1 : end]))
                pos = end + 2
            elif suffix in ("/", "#", ".", ":", "!"):
                descriptors.append(Descriptor(name, suffix))
                pos += 1
            else:
                return None
        return ScipSymbol(scheme, manager, package, version, tuple(descriptors))
    except (ValueError, IndexError):
        return None


def descriptor_path(sym: ScipSymbol) -> tuple[str, str] | None:
    """(namespace, dotted member path) of a symbol that can be a declaration; None for parameters etc.

    ``pkg.mod/Class#method().`` gives ("pkg.mod", "Class.method"); the module
    marker ``pkg.mod/__init__:`` gives ("pkg.mod", "").
    """
    namespace: list[str] = []
    members: list[str] = []
    for d in sym.descriptors:
        if d.suffix == NAMESPACE and not members:
            namespace.append(d.name)
        elif d.suffix in (TYPE, TERM, METHOD, MACRO):
            members.append(d.name)
        elif d.suffix == META and d.name == "__init__" and not members:
            continue
        else:
            return None  # parameters, type parameters, other meta: never a declaration of ours
    if not namespace:
        return None
    return ".".join(namespace), ".".join(members)


class ColumnMap:
    """Converts a SCIP column (UTF-16 or UTF-32 code units) to a UTF-8 byte column, line by line."""

    def __init__(self, source: bytes, unit: str) -> None:
        self._lines = source.split(b"\n")
        self._unit = unit  # "utf-8" | "utf-16" | "utf-32"

    def byte_col(self, line0: int, col: int) -> int:
        if self._unit == "utf-8" or line0 >= len(self._lines):
            return col
        raw = self._lines[line0]
        if raw.isascii():
            return col
        text = raw.decode("utf-8", errors="replace")
        if self._unit == "utf-16":
            units = 0
            for i, ch in enumerate(text):
                if units >= col:
                    return len(text[:i].encode("utf-8"))
                units += 2 if ord(ch) > 0xFFFF else 1
            return len(raw)
        return len(text[:col].encode("utf-8"))


class FileDeclarations:
    """The declarations of one file, nested by span, for enclosing and definition lookups."""

    def __init__(self, symbols: Sequence[SymbolFact], source_kinds: Iterable[str]) -> None:
        kinds = frozenset(source_kinds)
        order = sorted(
            range(len(symbols)),
            key=lambda i: (
                symbols[i].start_line,
                symbols[i].start_col,
                -symbols[i].end_line,
                -symbols[i].end_col,
                symbols[i].kind != "module",
            ),
        )
        self._symbols = [symbols[i] for i in order]
        self._starts = [(s.start_line, s.start_col) for s in self._symbols]
        self._parent: list[int] = []
        # A callable variable (a lambda, a partial, a factory's product) holds code: the uses in it are its own.
        self._is_source = [s.kind in kinds or s.callable for s in self._symbols]
        self.module = next((s for s in self._symbols if s.kind == "module"), None)
        stack: list[int] = []
        for i, s in enumerate(self._symbols):
            while stack and not self._contains(stack[-1], (s.start_line, s.start_col)):
                stack.pop()
            self._parent.append(stack[-1] if stack else -1)
            stack.append(i)

    def _contains(self, i: int, pos: tuple[int, int]) -> bool:
        s = self._symbols[i]
        return (s.start_line, s.start_col) <= pos < (s.end_line, s.end_col) or (
            s.kind == "module" and (s.start_line, s.start_col) <= pos
        )

    def _innermost(self, pos: tuple[int, int]) -> int:
        i = bisect.bisect_right(self._starts, pos) - 1
        while i >= 0 and not self._contains(i, pos):
            i = self._parent[i]
        return i

    def enclosing(self, line: int, col: int) -> SymbolFact | None:
        """The innermost enclosing declaration of a source kind; the module symbol at top level."""
        i = self._innermost((line, col))
        while i >= 0 and not self._is_source[i]:
            i = self._parent[i]
        return self._symbols[i] if i >= 0 else self.module

    def declared_at(self, line: int, col: int, name: str) -> SymbolFact | None:
        """The innermost declaration named ``name`` whose span contains the position, if any."""
        i = self._innermost((line, col))
        while i >= 0:
            s = self._symbols[i]
            if s.name == name and s.kind != "module":
                return s
            i = self._parent[i]
        return None


_KIND_WORDS = {
    "class": "class",
    "interface": "interface",
    "type": "type_alias",
    "enum": "enum",
    "namespace": "namespace",
    "module": "namespace",
    "function": "function",
    "def": "function",
    "async": "function",
}


def analyzer_declaration(
    module_qn: str,
    member: str,
    suffix: str,
    line_text: str,
    start: tuple[int, int],
    end: tuple[int, int],
    *,
    python: bool = False,
) -> SymbolFact:
    """A declaration only the analyzer saw, on a line tree-sitter could not parse.

    ``member`` is its dotted path inside the module, ``suffix`` the SCIP descriptor suffix of its last
    part; the kind comes from the first keyword on its line (``interface``, ``class``, ``def``…) or else the
    suffix. A top-level one is exported when its line starts with ``export`` (Python: unless it is private).
    """
    top = "." not in member
    words = line_text.replace("(", " ").split()
    keyword = next((_KIND_WORDS[w] for w in words[:4] if w in _KIND_WORDS), "")
    if keyword:
        kind = "method" if keyword == "function" and not top else keyword
    elif suffix == METHOD:
        kind = "function" if top else "method"
    elif suffix == TYPE:
        kind = "type"
    elif suffix == NAMESPACE:
        kind = "namespace"
    else:
        kind = "variable" if top else "property"
    name = member.rsplit(".", 1)[-1]
    exported = top and (not name.startswith("_") if python else words[:1] == ["export"])
    return SymbolFact(
        name=name,
        qualified_name=f"{module_qn}.{member}",
        kind=kind,
        start_line=start[0],
        start_col=start[1],
        end_line=end[0],
        end_col=end[1],
        signature=" ".join(line_text.split())[:200],
        exported=exported,
        # Python extraction nests top-level declarations in the module symbol; TypeScript leaves them at "".
        container=(module_qn if python else "") if top else f"{module_qn}.{member.rsplit('.', 1)[0]}",
    )


def names_at(line_text: str, occ: Occurrence, cmap: ColumnMap, name: str) -> bool:
    """Whether the occurrence's range on ``line_text`` spells ``name`` (single-line ranges only)."""
    if occ.range[0] != occ.range[2]:
        return False
    raw = line_text.encode("utf-8")
    start, end = cmap.byte_col(occ.range[0], occ.range[1]), cmap.byte_col(occ.range[2], occ.range[3])
    return raw[start:end].decode("utf-8", "replace") == name


def line_of(source: bytes, line0: int) -> str:
    """Line ``line0`` (0-based) of ``source`` as text."""
    lines = source.split(b"\n", line0 + 1)
    return lines[line0].decode("utf-8", "replace") if line0 < len(lines) else ""


class CoveredSite(msgspec.Struct, array_like=True, frozen=True):
    """A site whose target the analyzer resolved outside every corpus we index (stdlib, lib.d.ts, node_modules).

    It settles the site: no edge, and no candidate edge or unresolved row survives there.
    """

    path: str
    line: int
    col: int
    source_qn: str
    source_kind: str
