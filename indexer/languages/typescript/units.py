"""A TypeScript/JavaScript file as units of change: each top-level statement, the module-level names it binds,
the digest of its text and the words it names. The incremental exact pass (``incremental``) uses them to tell
which files an edit can reach.

Why top-level statements: a file sees another module only through the module-level names it imports (by
name, or as members of a namespace it imports), so the checker's answers in a file can change only when
the declaration behind one of the names it writes changes. A statement whose text is unchanged binds the
same names to the same declarations, unless it names (by a word anywhere in its text) a name that changed.

``ANY`` stands for "cannot say which names": a script (a file with no import or export, whose declarations
are global), ``declare global``, an ambient ``declare module``, ``export *`` (it binds whatever the other
module exports), a file tree-sitter cannot parse, a top-level ``var`` inside a block, CommonJS assignments.
A default import names ``default`` (the name it binds is the importer's own). A statement without ``export``
binds names of the file's own: they reach other files only through an exported statement that names them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec
from tree_sitter import Node, Parser

from indexer.languages.change_units import digest as _digest
from indexer.languages.change_units import node_text as _text
from indexer.languages.typescript.extract import grammar_for
from indexer.languages.typescript.variance import prepare

ANY = "*"
DEFAULT = "default"
_WORD = re.compile(r"[\w$]+")
_DECLARATIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
    }
)
_VARIABLES = frozenset({"lexical_declaration", "variable_declaration"})
_NOTHING = frozenset({"comment", "empty_statement", "hash_bang_line"})


class Unit(msgspec.Struct, array_like=True, frozen=True):
    """One top-level statement: the module-level names it binds (``ANY``: unknown), its text's digest, and
    whether those names are the file's own (not exported: other modules cannot name them)."""

    names: tuple[str, ...]
    digest: str
    local: bool = False


class FileUnits(msgspec.Struct, array_like=True, frozen=True):
    path: str
    units: tuple[Unit, ...]


def words(text: str) -> frozenset[str]:
    """Every identifier-like word of ``text`` (comments and strings included: a superset of what it names)."""
    return frozenset(_WORD.findall(text))


def _pattern_names(node: Node) -> Iterator[str]:
    """Every identifier of a binding pattern (defaults and keys too: more names is only more cautious)."""
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        yield _text(node)
    for child in node.named_children:
        yield from _pattern_names(child)


def _declared(node: Node) -> tuple[str, ...]:
    """Names a declaration binds at module level."""
    if node.type in _DECLARATIONS:
        return (_text(node.child_by_field_name("name")),)
    if node.type in _VARIABLES:
        out: list[str] = []
        for d in node.named_children:
            if d.type == "variable_declarator" and (name := d.child_by_field_name("name")) is not None:
                out.extend(_pattern_names(name))
        return tuple(out)
    if node.type in ("internal_module", "module"):
        name = node.child_by_field_name("name")
        if name is None or name.type == "string":
            return (ANY,)  # an ambient module: it declares another module's names
        return (_text(name).split(".")[0],)
    if node.type == "ambient_declaration":
        if any(c.type == "global" for c in node.children):
            return (ANY,)
        inner = [c for c in node.named_children if c.type != "comment"]
        return _declared(inner[0]) if inner else (ANY,)
    if node.type == "import_alias":  # export import A = N.B
        return tuple(_text(c) for c in node.named_children[:1])
    return (ANY,)


def _imported(node: Node) -> tuple[tuple[str, ...], bool]:
    """(names an import binds, whether it binds a module's default export)."""
    names: list[str] = []
    default = False
    for child in node.named_children:
        if child.type == "import_require_clause":
            names += [_text(c) for c in child.named_children if c.type == "identifier"][:1]
            default = True
        elif child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    names.append(_text(part))
                    default = True
                elif part.type == "namespace_import":
                    names += [_text(c) for c in part.named_children if c.type == "identifier"]
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type == "import_specifier":
                            bound = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                            names.append(_text(bound))
    return tuple(names), default


def _exported(node: Node) -> tuple[str, ...]:
    declaration = node.child_by_field_name("declaration")
    kinds = {c.type for c in node.children}
    if "default" in kinds:
        named = _declared(declaration) if declaration is not None and declaration.type in _DECLARATIONS else ()
        return (DEFAULT, *named)
    if declaration is not None:
        return _declared(declaration)
    if "=" in kinds:  # export = x
        return (DEFAULT,)
    for child in node.named_children:
        if child.type == "export_clause":
            out = []
            for spec in child.named_children:
                if spec.type == "export_specifier":
                    bound = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                    out.append(_text(bound).strip("'\""))
            return tuple(out)
        if child.type == "namespace_export":
            return tuple(_text(c) for c in child.named_children if c.type == "identifier")
    return (ANY,)  # export * from, export as namespace


def _assigned(node: Node) -> tuple[str, ...]:
    """Names a top-level expression statement can change: the object an assignment writes to."""
    expr = node.named_children[0] if node.named_children else None
    if expr is not None and expr.type in ("internal_module", "module"):
        return _declared(expr)
    if expr is None or expr.type not in ("assignment_expression", "augmented_assignment_expression"):
        return ()  # a call: the checker gives it no declaration
    left = expr.child_by_field_name("left")
    while left is not None and left.type in ("member_expression", "subscript_expression", "parenthesized_expression"):
        left = left.child_by_field_name("object") or (left.named_children[0] if left.named_children else None)
    if left is None or left.type != "identifier" or _text(left) in ("module", "exports"):
        return (ANY,)  # CommonJS exports, or a pattern
    return (_text(left),)


def _statement(node: Node) -> tuple[tuple[str, ...], bool]:
    """(names the statement binds, whether it names a default export)."""
    if node.type == "import_statement":
        return _imported(node)
    if node.type == "export_statement":
        return _exported(node), False
    if node.type in _DECLARATIONS or node.type in _VARIABLES or node.type in ("ambient_declaration", "module"):
        return _declared(node), False
    if node.type == "expression_statement":
        return _assigned(node), False
    if node.type in _NOTHING:
        return (), False
    return ((ANY,) if _has_var(node) else ()), False


def _has_var(node: Node) -> bool:
    return node.type == "variable_declaration" or any(_has_var(c) for c in node.named_children)


class Statement(msgspec.Struct, frozen=True):
    unit: Unit
    words: frozenset[str]  # what it names (a default import names ``default``)
    text: str


def statements(path: str, source: bytes) -> list[Statement]:
    """Each top-level statement as a unit, with the words it names; one ``ANY`` unit for the whole file when
    it is a script or does not parse."""
    grammar = grammar_for(path)
    jsx = not path.endswith((".ts", ".mts", ".cts"))
    root = Parser(grammar).parse(prepare(grammar, source, jsx=jsx)[0]).root_node
    text = source.decode("utf-8", "replace")
    whole = [Statement(Unit((ANY,), _digest(source)), words(text), text)]
    if root.has_error or not any(c.type in ("import_statement", "export_statement") for c in root.children):
        return whole
    out: list[Statement] = []
    for node in root.children:
        data = source[node.start_byte : node.end_byte]
        names, default = _statement(node)
        text = data.decode("utf-8", "replace")
        named = words(text)
        unit = Unit(
            tuple(sorted(set(names))), _digest(data), local=node.type != "export_statement" and ANY not in names
        )
        out.append(Statement(unit, named | {DEFAULT} if default else named, text))
    return out


def units_of(path: str, source: bytes) -> tuple[Unit, ...]:
    return tuple(s.unit for s in statements(path, source))


def is_script(units: tuple[Unit, ...]) -> bool:
    """Whether a file is one unknown unit: a script (its declarations are global) or a file that does not parse."""
    return len(units) == 1 and units[0].names == (ANY,)
