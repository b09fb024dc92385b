"""A Python file as units of change: each top-level statement, the module-level names it binds, the digest of
what other modules can see of it and the words that names. The incremental exact pass (``incremental``) uses
them to tell which files an edit can reach.

Why top-level statements: another module sees a file only through its module-level names (imported by name,
read as attributes of the module, or reached through the types those names give), so the checker's answers
in a file can change only when the statement behind one of the names it writes changes. A statement whose
text is unchanged binds the same names to the same declarations, unless it names (by a word anywhere in
that text) a name that changed.

What other modules see of a statement (its *interface*) is its text without comments and without the body
of a function that declares its return type: the checker reads a declared return type, never the body
behind it, when another file calls the function. A body stays part of the interface when it writes an
attribute (``self.x = ...`` declares an attribute of the class) or declares ``global``/``nonlocal`` names.
So an edit inside such a body reaches no other file.

``ANY`` stands for "cannot say which names": a file tree-sitter cannot parse, ``from m import *`` (it binds
whatever ``m`` exports).
"""

from __future__ import annotations

import bisect
import re

import msgspec
import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from indexer.languages.change_units import digest as _digest
from indexer.languages.change_units import node_text as _text

ANY = "*"
_WORD = re.compile(r"\w+")
_LANGUAGE = Language(tree_sitter_python.language())
# Writes that make a function body part of its class's (or module's) interface.
_WRITES = Query(
    _LANGUAGE,
    """
    (assignment left: (_) @target)
    (augmented_assignment left: (_) @target)
    (for_statement left: (_) @target)
    (for_in_clause left: (_) @target)
    (as_pattern_target) @target
    (delete_statement) @target
    (global_statement) @scope
    (nonlocal_statement) @scope
    """,
)
_DECLARED = Query(_LANGUAGE, "(function_definition return_type: (_) body: (block) @body)\n(comment) @comment")
_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression"})
_TARGETS_SPLAT = frozenset({"list_splat_pattern", "list_splat", "as_pattern_target"})


class Unit(msgspec.Struct, array_like=True, frozen=True):
    """One top-level statement: the module-level names it binds (``ANY``: unknown) and its interface's digest."""

    names: tuple[str, ...]
    digest: str


class FileUnits(msgspec.Struct, array_like=True, frozen=True):
    path: str
    units: tuple[Unit, ...]


class Statement(msgspec.Struct, frozen=True):
    unit: Unit
    words: frozenset[str]  # the words of its interface: what the names it binds can depend on
    wildcard: str = ""  # the module a ``from m import *`` names (with its leading dots)


def words(text: str) -> frozenset[str]:
    """Every identifier-like word of ``text`` (comments and strings included: a superset of what it names)."""
    return frozenset(_WORD.findall(text))


def _targets(node: Node, out: set[str]) -> None:
    """Names an assignment target binds; an attribute or item binds the name it is read from."""
    if node.type == "identifier":
        out.add(_text(node))
    elif node.type in ("attribute", "subscript"):
        read = node.child_by_field_name("object" if node.type == "attribute" else "value")
        if read is not None:
            _targets(read, out)
    elif node.type in _TARGETS or node.type in _TARGETS_SPLAT:
        for child in node.named_children:
            _targets(child, out)


def _imported_name(node: Node, child: Node, out: set[str]) -> None:
    """The name one part of an import binds: its alias, else the first name of ``import a.b``, the name of
    ``from m import a``."""
    if child.type == "aliased_import":
        out.add(_text(child.child_by_field_name("alias")))
    elif not child.named_children:
        out.add(_text(child))
    else:
        out.add(_text(child.named_children[0 if node.type == "import_statement" else -1]))


def _imported(node: Node, out: set[str]) -> None:
    """Names an import binds (none for ``from m import *``: ``statements`` says ``ANY``)."""
    for child in node.children_by_field_name("name"):
        _imported_name(node, child, out)


def _bound(node: Node, out: set[str]) -> None:
    """Every module-level name ``node`` can bind (a superset: comprehension variables count too)."""
    kind = node.type
    if kind in ("function_definition", "class_definition"):
        out.add(_text(node.child_by_field_name("name")))
        return
    if kind == "lambda":
        return
    if kind in ("import_statement", "import_from_statement"):
        _imported(node, out)
        return
    if kind in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        left = node.child_by_field_name("left")
        if left is not None:
            _targets(left, out)
    elif kind == "named_expression":
        out.add(_text(node.child_by_field_name("name")))
    elif kind in ("as_pattern_target", "delete_statement"):
        _targets(node, out)
        for child in node.named_children:
            _targets(child, out)
    elif kind == "type_alias_statement":
        left = node.child_by_field_name("left")
        out.update(_text(c) for c in (left.named_children if left is not None else ()) if c.type == "identifier")
    elif kind == "case_pattern":
        out.update(w for w in words(_text(node)))  # captures (and the names matched against: more is cautious)
    for child in node.named_children:
        _bound(child, out)


def _interface_cuts(root: Node) -> list[tuple[int, int]]:
    """Byte ranges other modules cannot see: comments, and bodies of functions that declare their return
    type and write no attribute and no global name (outermost ranges, in order)."""
    writes: list[int] = []
    for name, nodes in QueryCursor(_WRITES).captures(root).items():
        for node in nodes:
            if name == "scope" or "." in _text(node):
                writes.append(node.start_byte)
    writes.sort()
    cuts: list[tuple[int, int]] = []
    for name, nodes in QueryCursor(_DECLARED).captures(root).items():
        for node in nodes:
            start, end = node.start_byte, node.end_byte
            if name == "body":
                i = bisect.bisect_left(writes, start)
                if i < len(writes) and writes[i] < end:
                    continue  # it writes an attribute or a global: part of the interface
            cuts.append((start, end))
    cuts.sort()
    out: list[tuple[int, int]] = []
    for start, end in cuts:
        if out and start < out[-1][1]:
            continue  # inside a range already cut
        out.append((start, end))
    return out


def _interface(source: bytes, node: Node, cuts: list[tuple[int, int]], starts: list[int]) -> bytes:
    """What other modules see of one top-level statement: its text with ``cuts`` left out (a cut body leaves
    ``...``), blank lines and trailing spaces dropped (a comment's line is gone with it)."""
    kept: list[bytes] = []
    at = node.start_byte
    i = bisect.bisect_left(starts, node.start_byte)
    while i < len(cuts) and cuts[i][0] < node.end_byte:
        kept.append(source[at : cuts[i][0]])
        if source[cuts[i][0] : cuts[i][0] + 1] != b"#":
            kept.append(b"...")
        at = max(at, cuts[i][1])
        i += 1
    kept.append(source[at : node.end_byte])
    return b"\n".join(line.rstrip() for line in b"".join(kept).splitlines() if line.strip())


def _import_statements(node: Node, interface: bytes) -> list[Statement]:
    """An import as one statement per name it binds: each depends only on its own name (and module)."""
    module = words(_text(node.child_by_field_name("module_name")))
    out: list[Statement] = []
    for child in node.children_by_field_name("name"):
        names: set[str] = set()
        _imported_name(node, child, names)
        for name in sorted(names - {""}):
            unit = Unit((name,), _digest(interface + b"\0" + name.encode()))
            out.append(Statement(unit, module | words(_text(child))))
    return out


def statements(source: bytes) -> list[Statement]:
    """Each top-level statement as a unit (an import, one per name), with the words of its interface; one
    ``ANY`` unit for the whole file when it does not parse."""
    root = Parser(_LANGUAGE).parse(source).root_node
    if root.has_error:
        return [Statement(Unit((ANY,), _digest(source)), words(source.decode("utf-8", "replace")))]
    cuts = _interface_cuts(root)
    starts = [c[0] for c in cuts]
    out: list[Statement] = []
    for node in root.children:
        if node.type == "comment":
            continue
        interface = _interface(source, node, cuts, starts)
        named = words(interface.decode("utf-8", "replace"))
        if node.type in ("import_statement", "import_from_statement"):
            if any(c.type == "wildcard_import" for c in node.named_children):
                module = _text(node.child_by_field_name("module_name"))
                out.append(Statement(Unit((ANY,), _digest(interface)), named, module))
            else:
                out.extend(_import_statements(node, interface))
            continue
        names: set[str] = set()
        _bound(node, names)
        names.discard("")
        out.append(Statement(Unit(tuple(sorted(names)), _digest(interface)), named))
    return out


def units_of(source: bytes) -> tuple[Unit, ...]:
    return tuple(s.unit for s in statements(source))
