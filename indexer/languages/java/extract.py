"""Java extraction: the declarations and reference sites of one file, from its tree-sitter tree.

Qualified names are Java's own: ``com.ex.Circle`` for a top-level type of package ``com.ex``,
``com.ex.Circle.Inner`` for a member type, ``com.ex.Circle.area`` for a method, ``com.ex.Circle.r`` for a
field, ``com.ex.Circle.Circle`` for a constructor (named after its class, as it is written). One symbol per
overload: when a type declares several methods (or constructors) of one name, each carries its parameter
types, erased and unqualified, as written: ``com.ex.Circle.add(int,int)`` and ``com.ex.Circle.add(double,double)``
(a method without overloads keeps the bare name, so ``Circle.area`` is what a developer types).

Declared: classes, interfaces, enums, records (kind ``class``), annotation types (``interface``), their
methods, constructors, fields (``constant`` when ``static final`` or in an interface), enum constants
(``enum_member``) and member types at any depth. Not declared: anonymous classes, local classes and
lambdas. Their code is part of the method around them, so a call inside an anonymous ``Runnable.run`` is a
call from that method (scip-java gives their members local symbols too).

Each file has a module symbol, named by its path, for what no type encloses (imports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_java
from tree_sitter import Language, Node

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.java import sites as S
from indexer.languages.java.modules import LANGUAGE, module_qualified_name
from indexer.languages.syntax import collapse, extract_tree
from indexer.languages.syntax import node_text as _text

EXTRACTOR_VERSION = "java-ts-5"

TS_LANGUAGE = Language(tree_sitter_java.language())

TYPE_DECLARATIONS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "annotation_type_declaration": "interface",
}
_METHODS = frozenset({"method_declaration", "annotation_type_element_declaration"})
_CONSTRUCTORS = frozenset({"constructor_declaration", "compact_constructor_declaration"})
_TYPE_NODES = frozenset({"type_identifier", "scoped_type_identifier"})
# Nodes under which a bare identifier names a value (a field or a local), not a declaration or a label.
_VALUE_PARENTS = frozenset(
    {
        "assignment_expression",
        "binary_expression",
        "unary_expression",
        "update_expression",
        "argument_list",
        "return_statement",
        "parenthesized_expression",
        "array_access",
        "ternary_expression",
        "expression_statement",
        "cast_expression",
        "instanceof_expression",
        "element_value_pair",
        "element_value_array_initializer",
        "array_initializer",
        "lambda_expression",
        "switch_label",
        "yield_statement",
        "throw_statement",
        "synchronized_statement",
        "array_creation_expression",
        "dimensions_expr",
        "assert_statement",
        "enhanced_for_statement",
        "guard",
        "annotation_argument_list",
    }
)
_GENERIC_ARGS = re.compile(r"<[^<>]*>")


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one Java file; a syntax error makes it partial (see extract_tree)."""
    return extract_tree(
        TS_LANGUAGE, LANGUAGE, path, source, package, lambda root, _text_: _Extractor(path, package).run(root)
    )


def erased(type_text: str) -> str:
    """A parameter type as an overload's name shows it: generics, annotations and qualification dropped."""
    text = re.sub(r"@[\w.]+(\([^)]*\))?\s*", "", type_text)
    previous = None
    while previous != text:
        previous, text = text, _GENERIC_ARGS.sub("", text)
    text = "".join(text.split())
    dims = ""
    while text.endswith("[]"):
        dims, text = dims + "[]", text[:-2]
    return text.rsplit(".", 1)[-1] + dims


def parameter_types(params: Node | None, bounds: dict[str, str] | None = None) -> list[str]:
    """The erased types of a method's formal parameters (a varargs parameter as ``T...``); a type parameter
    erases to its first bound (``bounds``: name -> erased bound, ``Object`` when unbounded), as javac's does."""
    out: list[str] = []
    bounds = bounds or {}

    def erase(text: str) -> str:
        name = erased(text)
        base = name.rstrip("[]")
        return bounds.get(base, base) + name[len(base) :]

    for p in params.named_children if params is not None else ():
        if p.type == "formal_parameter":
            out.append(erase(_text(p.child_by_field_name("type"))))
        elif p.type == "spread_parameter":
            kind = next((c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None)
            out.append(erase(_text(kind)) + "...")
    return out


def type_parameter_bounds(params: Node | None) -> dict[str, str]:
    """Each type parameter's erasure: its first bound, erased (``Object`` without one)."""
    out: dict[str, str] = {}
    for p in params.named_children if params is not None else ():
        ident = next((c for c in p.named_children if c.type in ("type_identifier", "identifier")), None)
        bound = next((c for c in p.named_children if c.type == "type_bound"), None)
        if ident is None:
            continue
        first = bound.named_children[0] if bound is not None and bound.named_children else None
        out[_text(ident)] = erased(_text(first)) if first is not None else "Object"
    return out


def _modifiers(node: Node) -> set[str]:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return set(_text(mods).split()) if mods is not None else set()


def last_identifier(node: Node) -> Node:
    """The identifier a (scoped, generic) type or name ends with: where the analyzer reports the use."""
    while True:
        if node.type == "generic_type":
            node = node.named_children[0]
        elif node.type in ("scoped_type_identifier", "scoped_identifier") and node.named_children:
            node = node.named_children[-1]
        else:
            return node


def _dotted(node: Node) -> str:
    """A (scoped, generic) type's name as written, without type arguments."""
    if node.type == "generic_type":
        return _dotted(node.named_children[0])
    return "".join(_text(node).split())


@dataclass
class _Scope:
    """Names a method binds (coarse: for its whole body) with their declared types when written."""

    locals: dict[str, str] = field(default_factory=dict)
    type_parameters: set[str] = field(default_factory=set)
    bounds: dict[str, str] = field(default_factory=dict)  # type parameter -> its erasure


class _Extractor:
    def __init__(self, path: str, package: str) -> None:
        self.path = path
        self.package = package
        self.symbols: list[SymbolFact] = []
        self.sites: list[Site] = []
        self.module = module_qualified_name(path)
        self.seen: dict[tuple[str, str], int] = {}

    def run(self, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
        self.symbols.append(
            SymbolFact(
                name=self.module.rsplit("/", 1)[-1],
                qualified_name=self.module,
                kind="module",
                start_line=1,
                start_col=0,
                end_line=root.end_point[0] + 1,
                end_col=root.end_point[1],
            )
        )
        for child in root.named_children:
            if child.type == "import_declaration":
                self._import(child)
            elif child.type in TYPE_DECLARATIONS:
                self._type(child, "", _Scope(), in_interface=False)
        self.sites.sort(key=lambda s: (s.line, s.col))
        return tuple(self.symbols), tuple(self.sites)

    # -- sites --------------------------------------------------------------------------------------------

    def _site(self, kind: str, name: str, at: Node, enclosing: str, extra: tuple[str, ...] = ()) -> None:
        self.sites.append(Site(kind, name, at.start_point[0] + 1, at.start_point[1], enclosing, extra))

    def _import(self, node: Node) -> None:
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if name is None:
            return
        static = "static" if any(c.type == "static" for c in node.children) else ""
        star = "*" if any(c.type == "asterisk" for c in node.named_children) else ""
        self._site(S.IMPORT, _dotted(name), last_identifier(name), "", (static, star))

    # -- declarations -------------------------------------------------------------------------------------

    def _doc(self, decl: Node) -> str:
        prev = decl.prev_named_sibling
        if prev is None or prev.type != "block_comment" or not _text(prev).startswith("/**"):
            return ""
        body = _text(prev)[3:-2]
        lines = [line.strip().lstrip("*").strip() for line in body.splitlines()]
        paragraph: list[str] = []
        for line in lines:
            if line.startswith("@"):
                break
            if not line and paragraph:
                break
            if line:
                paragraph.append(line)
        return collapse(" ".join(paragraph), 200)

    def _symbol(
        self, name: str, qn: str, kind: str, node: Node, signature: str, exported: bool, container: str
    ) -> None:
        seen = self.seen.get((qn, kind), 0) + 1
        self.seen[(qn, kind)] = seen
        if seen > 1:  # the same name twice (a file javac rejects): the later one is ``#2``, ``#3``
            qn = f"{qn}#{seen}"
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=node.start_point[0] + 1,
                start_col=node.start_point[1],
                end_line=node.end_point[0] + 1,
                end_col=node.end_point[1],
                signature=collapse(signature),
                doc=self._doc(node),
                exported=exported,
                container=container,
            )
        )

    def _head(self, node: Node, body: Node | None) -> str:
        """A declaration's text up to its body (annotations left out)."""
        raw = node.text or b""
        end = (body.start_byte if body is not None else node.end_byte) - node.start_byte
        text = raw[:end].decode("utf-8", "replace")
        return re.sub(r"@\w+(\([^)]*\))?\s*", "", text).strip().rstrip("{;").strip()

    def _type(self, node: Node, container: str, outer: _Scope, *, in_interface: bool) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = _text(name_node)
        if container:
            qn = f"{container}.{name}"
        else:
            qn = f"{self.package}.{name}" if self.package else name
        kind = TYPE_DECLARATIONS[node.type]
        body = node.child_by_field_name("body")
        exported = "public" in _modifiers(node) or in_interface
        self._symbol(name, qn, kind, node, self._head(node, body), exported, container)
        scope = _Scope(type_parameters=set(outer.type_parameters), bounds=dict(outer.bounds))
        scope.bounds.update(type_parameter_bounds(node.child_by_field_name("type_parameters")))
        self._type_parameters(node.child_by_field_name("type_parameters"), scope, qn)
        self._annotations(node, qn, scope)
        superclass = node.child_by_field_name("superclass")
        for base_list, word in (
            (superclass, S.EXTENDS),
            (node.child_by_field_name("interfaces"), S.EXTENDS if kind == "interface" else S.IMPLEMENTS),
            (next((c for c in node.named_children if c.type == "extends_interfaces"), None), S.EXTENDS),
        ):
            if base_list is None:
                continue
            for t in self._types_in(base_list):
                self._site(word, _dotted(t), last_identifier(t), qn)
                self._type_arguments(t, qn, scope)
        if node.type == "record_declaration":
            params = node.child_by_field_name("parameters")
            for p in params.named_children if params is not None else ():
                pname = p.child_by_field_name("name")
                if p.type == "formal_parameter" and pname is not None:
                    self._symbol(_text(pname), f"{qn}.{_text(pname)}", "field", p, _text(p), False, qn)
                    self._types(p.child_by_field_name("type"), qn, scope)
        if body is None:
            return
        members = list(body.named_children)
        for m in list(members):
            if m.type == "enum_body_declarations":
                members.extend(m.named_children)
        interface = kind == "interface"
        counts: dict[str, int] = {}
        for m in members:
            if m.type in _METHODS or m.type in _CONSTRUCTORS:
                key = name if m.type in _CONSTRUCTORS else _text(m.child_by_field_name("name"))
                counts[key] = counts.get(key, 0) + 1
        # the superclass a constructor without this(...)/super(...) calls (its no-argument constructor), as written
        implicit = (
            _dotted(self._types_in(superclass)[0]) if superclass is not None and self._types_in(superclass) else ""
        )
        constructors = 0
        for m in members:
            if m.type in TYPE_DECLARATIONS:
                self._type(m, qn, scope, in_interface=interface)
            elif m.type in _METHODS or m.type in _CONSTRUCTORS:
                first = len(self.symbols)
                self._method(m, qn, name, scope, counts, interface)
                if m.type in _CONSTRUCTORS:
                    constructors += 1
                    if implicit and not explicit_constructor_call(m):
                        self._site(S.NEW, implicit, m, self.symbols[first].qualified_name, _IMPLICIT_SUPER)
            elif m.type in ("field_declaration", "constant_declaration"):
                self._field(m, qn, scope, interface)
            elif m.type == "enum_constant":
                cname = m.child_by_field_name("name")
                if cname is not None:
                    self._symbol(_text(cname), f"{qn}.{_text(cname)}", "enum_member", m, _text(cname), True, qn)
                    # the constant runs the enum's constructor of its arguments (through its body's, if any)
                    local = self._locals_of(m, scope)
                    call = ("", "", "", str(_argument_count(m)), _argument_types(m, local), "implicit")
                    self._site(S.NEW, name, cname, qn, call)  # from the enum, as the constant's other uses
                for part in m.named_children:
                    if not _same(part, cname):
                        self._body(part, qn, _Scope(type_parameters=set(scope.type_parameters)))
            elif m.type in ("static_initializer", "block"):
                self._body(m, qn, self._locals_of(m, scope))
        if implicit and not constructors:
            self._site(S.NEW, implicit, node, qn, _IMPLICIT_SUPER)  # the default constructor: the class's own

    def _types_in(self, node: Node) -> list[Node]:
        """The types a superclass or interface list names."""
        if node.type in _TYPE_NODES or node.type == "generic_type":
            return [node]
        out: list[Node] = []
        for c in node.named_children:
            out.extend(self._types_in(c))
        return out

    def _type_parameters(self, params: Node | None, scope: _Scope, enclosing: str) -> None:
        for p in params.named_children if params is not None else ():
            ident = next((c for c in p.named_children if c.type in ("type_identifier", "identifier")), None)
            if ident is not None:
                scope.type_parameters.add(_text(ident))
        for p in params.named_children if params is not None else ():
            for c in p.named_children:
                if c.type == "type_bound":
                    self._types(c, enclosing, scope)

    def _annotations(self, node: Node, enclosing: str, scope: _Scope) -> None:
        mods = next((c for c in node.named_children if c.type == "modifiers"), None)
        if mods is not None:
            self._body(mods, enclosing, scope)

    def _method(
        self, node: Node, owner: str, owner_name: str, outer: _Scope, counts: dict[str, int], interface: bool
    ) -> None:
        constructor = node.type in _CONSTRUCTORS
        name = owner_name if constructor else _text(node.child_by_field_name("name"))
        params = node.child_by_field_name("parameters")
        qn = f"{owner}.{name}"
        if counts.get(name, 0) > 1:
            bounds = {**outer.bounds, **type_parameter_bounds(node.child_by_field_name("type_parameters"))}
            qn += "(" + ",".join(parameter_types(params, bounds)) + ")"
        body = node.child_by_field_name("body")
        mods = _modifiers(node)
        exported = "public" in mods or (interface and "private" not in mods)
        kind = "constructor" if constructor else "method"
        self._symbol(name, qn, kind, node, self._head(node, body), exported, owner)
        scope = self._locals_of(node, outer)
        self._type_parameters(node.child_by_field_name("type_parameters"), scope, qn)
        self._annotations(node, qn, scope)
        self._types(node.child_by_field_name("type"), qn, scope)
        for p in params.named_children if params is not None else ():
            self._body(p, qn, scope)
        for c in node.named_children:
            if c.type == "throws":
                self._types(c, qn, scope)
        if body is not None:
            self._body(body, qn, scope)
        default = node.child_by_field_name("value")
        if default is not None:
            self._body(default, qn, scope)

    def _field(self, node: Node, owner: str, scope: _Scope, interface: bool) -> None:
        mods = _modifiers(node)
        constant = interface or {"static", "final"} <= mods
        exported = "public" in mods or interface
        self._annotations(node, owner, scope)
        self._types(node.child_by_field_name("type"), owner, scope)
        for d in node.named_children:
            if d.type != "variable_declarator":
                continue
            dname = d.child_by_field_name("name")
            if dname is None:
                continue
            fname = _text(dname)
            head = self._head(node, None)
            self._symbol(fname, f"{owner}.{fname}", "constant" if constant else "field", d, head, exported, owner)
            value = d.child_by_field_name("value")
            if value is not None:
                self._body(value, owner, self._locals_of(value, scope))

    # -- bodies ---------------------------------------------------------------------------------------------

    def _locals_of(self, node: Node, outer: _Scope) -> _Scope:
        """Every name a method (with its lambdas and anonymous classes) binds, with its declared type."""
        scope = _Scope(dict(outer.locals), set(outer.type_parameters), dict(outer.bounds))
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in ("formal_parameter", "catch_formal_parameter", "resource", "enhanced_for_statement"):
                name = n.child_by_field_name("name")
                if name is not None:
                    scope.locals[_text(name)] = _declared(n.child_by_field_name("type"))
            elif t == "spread_parameter":
                decl = next((c for c in n.named_children if c.type == "variable_declarator"), None)
                name = decl.child_by_field_name("name") if decl is not None else None
                if name is not None:
                    scope.locals[_text(name)] = ""
            elif t == "local_variable_declaration":
                declared = _declared(n.child_by_field_name("type"))
                for d in n.named_children:
                    name = d.child_by_field_name("name") if d.type == "variable_declarator" else None
                    if name is not None:
                        scope.locals[_text(name)] = declared
            elif t == "lambda_expression":
                params = n.child_by_field_name("parameters")
                if params is not None and params.type == "identifier":
                    scope.locals[_text(params)] = ""
                elif params is not None:
                    for p in params.named_children:
                        if p.type == "identifier":
                            scope.locals[_text(p)] = ""
            elif t in ("type_pattern", "record_pattern_component"):
                name = next((c for c in reversed(n.named_children) if c.type == "identifier"), None)
                kind = next((c for c in n.named_children if c.type != "identifier"), None)
                if name is not None:
                    scope.locals[_text(name)] = _declared(kind)
            elif t == "instanceof_expression":
                name = n.child_by_field_name("name")
                if name is not None:
                    scope.locals[_text(name)] = _declared(n.child_by_field_name("right"))
            stack.extend(n.named_children)
        return scope

    def _types(self, node: Node | None, enclosing: str, scope: _Scope) -> None:
        """Type sites in a type expression."""
        if node is not None:
            self._body(node, enclosing, scope)

    def _type_arguments(self, node: Node, enclosing: str, scope: _Scope) -> None:
        if node.type == "generic_type":
            for c in node.named_children[1:]:
                self._body(c, enclosing, scope)

    def _qualifier(self, obj: Node | None, scope: _Scope) -> tuple[str, str, str]:
        if obj is None:
            return ("", "", "")
        if obj.type in ("this", "super"):
            return (obj.type, obj.type, "")
        if obj.type == "identifier":
            name = _text(obj)
            if name in scope.locals:
                return (name, "local", scope.locals[name])
            return (name, "name", "")
        if obj.type in ("field_access", "scoped_identifier") and all(
            c.type == "identifier" or c.type == "field_access" for c in obj.named_children
        ):
            text = "".join(_text(obj).split())
            if re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+", text):
                return (text, "name", "")
        return ("", "expr", "")

    def _body(self, node: Node, enclosing: str, scope: _Scope) -> None:
        """Every reference site below ``node``; uses in anonymous classes and lambdas are the method's."""
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "method_invocation":
                name = n.child_by_field_name("name")
                obj = n.child_by_field_name("object")
                if name is not None:
                    args = (str(_argument_count(n)), _argument_types(n, scope))
                    self._site(S.CALL, _text(name), name, enclosing, (*self._qualifier(obj, scope), *args))
                self._qualifier_site(obj, enclosing, scope)
                stack.extend(c for c in n.named_children if not _same(c, name) and not _same(c, obj))
                continue
            if t == "object_creation_expression":
                kind = n.child_by_field_name("type")
                if kind is not None:
                    args = ("", "", "", str(_argument_count(n)), _argument_types(n, scope))
                    self._site(S.NEW, _dotted(kind), last_identifier(kind), enclosing, args)
                    self._type_arguments(kind, enclosing, scope)
                stack.extend(c for c in n.named_children if not _same(c, kind))
                continue
            if t == "method_reference":
                parts = n.named_children
                target = parts[-1] if parts and parts[-1].type == "identifier" and len(parts) > 1 else None
                head = parts[0] if parts else None
                if target is not None and head is not None:
                    if head.type in _TYPE_NODES or head.type == "generic_type":
                        qualifier = (_dotted(head), "name", "")
                    else:
                        qualifier = self._qualifier(head, scope)
                    self._site(S.CALLBACK, _text(target), target, enclosing, qualifier)
                    self._qualifier_site(head, enclosing, scope)
                    stack.extend(c for c in parts[1:-1])
                else:
                    stack.extend(parts)
                continue
            if t == "field_access":
                fname = n.child_by_field_name("field")
                obj = n.child_by_field_name("object")
                if fname is not None and fname.type == "identifier":
                    self._site(S.REF, _text(fname), fname, enclosing, self._qualifier(obj, scope))
                self._qualifier_site(obj, enclosing, scope)
                continue
            if t in ("marker_annotation", "annotation"):
                name = n.child_by_field_name("name")
                if name is not None:
                    self._site(S.ANNOTATION, _dotted(name), last_identifier(name), enclosing)
                args = n.child_by_field_name("arguments")
                if args is not None:
                    stack.append(args)
                continue
            if t in _TYPE_NODES:
                text = _dotted(n)
                if text.split(".")[0] not in scope.type_parameters:
                    self._site(S.TYPE, text, last_identifier(n), enclosing)
                continue
            if t == "identifier":
                parent = n.parent
                if (
                    parent is not None
                    and parent.type in _VALUE_PARENTS
                    and _text(n) not in scope.locals
                    and not (parent.type == "element_value_pair" and _same(parent.child_by_field_name("key"), n))
                    and not (parent.type == "enhanced_for_statement" and _same(parent.child_by_field_name("name"), n))
                    and not (parent.type == "lambda_expression" and _same(parent.child_by_field_name("parameters"), n))
                    and not (parent.type == "instanceof_expression" and _same(parent.child_by_field_name("name"), n))
                ):
                    self._site(S.REF, _text(n), n, enclosing, ("", "", ""))
                continue
            if t == "variable_declarator":
                value = n.child_by_field_name("value")
                if value is not None:
                    if value.type == "identifier" and _text(value) not in scope.locals:
                        self._site(S.REF, _text(value), value, enclosing, ("", "", ""))
                    else:
                        stack.append(value)
                dims = n.child_by_field_name("dimensions")
                if dims is not None:
                    stack.append(dims)
                continue
            if t in ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
                # a local type: not declared; its bases and members are the method's code, and so is the implicit
                # super() of its constructors (one site, at the class)
                stack.extend(c for c in n.named_children if c.type != "identifier")
                superclass = n.child_by_field_name("superclass") if t == "class_declaration" else None
                named = self._types_in(superclass) if superclass is not None else []
                body = n.child_by_field_name("body")
                ctors = [c for c in (body.named_children if body else []) if c.type == "constructor_declaration"]
                if named and not (ctors and all(explicit_constructor_call(c) for c in ctors)):
                    self._site(S.NEW, _dotted(named[0]), n, enclosing, _IMPLICIT_SUPER)
                continue
            if t in ("method_declaration", "constructor_declaration"):
                # a member of an anonymous or local class: its uses are the enclosing method's
                stack.extend(c for c in n.named_children if not _same(c, n.child_by_field_name("name")))
                continue
            stack.extend(n.named_children)

    def _qualifier_site(self, obj: Node | None, enclosing: str, scope: _Scope) -> None:
        """The qualifier of a call or field access: a bare name not bound locally is a use of its own."""
        if obj is None:
            return
        if obj.type == "identifier":
            if _text(obj) not in scope.locals:
                self._site(S.REF, _text(obj), obj, enclosing, ("", "", ""))
            return
        self._body(obj, enclosing, scope)


_LITERAL_TYPES = {
    "string_literal": "String",
    "character_literal": "char",
    "true": "boolean",
    "false": "boolean",
    "null_literal": "null",
    "class_literal": "Class",
}


_IMPLICIT_SUPER = ("", "", "", "0", "", "implicit")


def explicit_constructor_call(ctor: Node) -> bool:
    """Whether a constructor's body starts with this(...) or super(...) (else javac calls super())."""
    body = ctor.child_by_field_name("body")
    first = (
        next((c for c in body.named_children if c.type not in ("line_comment", "block_comment")), None)
        if body
        else None
    )
    return first is not None and first.type == "explicit_constructor_invocation"


def _argument_type(arg: Node, scope: _Scope) -> str:
    """An argument's type when its syntax alone says it (a literal, a local of a written type, ``new T``)."""
    t = arg.type
    if t in _LITERAL_TYPES:
        return _LITERAL_TYPES[t]
    if t in ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal"):
        return "long" if _text(arg)[-1:] in ("l", "L") else "int"
    if t in ("decimal_floating_point_literal", "hex_floating_point_literal"):
        return "float" if _text(arg)[-1:] in ("f", "F") else "double"
    if t == "identifier" and scope.locals.get(_text(arg)):
        return erased(scope.locals[_text(arg)])
    if t == "object_creation_expression":
        kind = arg.child_by_field_name("type")
        return erased(_dotted(kind)) if kind is not None else ""
    return ""


def _argument_types(call: Node, scope: _Scope) -> str:
    """The arguments' types as syntax gives them, comma-separated ("" for one it does not)."""
    args = call.child_by_field_name("arguments")
    nodes = [c for c in args.named_children if c.type not in ("line_comment", "block_comment")] if args else []
    return ",".join(_argument_type(c, scope) for c in nodes)


def _argument_count(call: Node) -> int:
    args = call.child_by_field_name("arguments")
    return len([c for c in args.named_children if c.type not in ("line_comment", "block_comment")]) if args else 0


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _declared(node: Node | None) -> str:
    """A declared type as the qualifier type of its variable: ``var`` and primitives say nothing."""
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier", "generic_type"):
        return ""
    text = _dotted(node)
    return "" if text == "var" else text
