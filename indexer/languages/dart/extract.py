"""Dart extraction: the declarations and reference sites of one file, from its tree-sitter tree.

Qualified names are the nested outline names of the facts model (surface
reference §4.6, binding where the product contract is silent): top-level
declarations are bare (``Shape``, ``topLevel``), members are
``Owner.member`` (``Shape.area``, ``Color.red``, ``StringX.shout``). The
package (the pub ``name:``) and the file path are the other parts of a
declaration's identity, so two libraries may both declare ``Shape``.
Constructors are named as Dart spells their tear-offs: ``Shape.new`` for the
unnamed one, ``Shape.named`` for a named or factory one. An operator is
``Vector.+``. An unnamed extension is ``<extension on T>`` (T's last name),
never exported: no other library can name it. A getter and a setter of one
name share the qualified name and differ in kind.

Every file gets a ``module`` symbol (qualified name = the path with ``/`` turned
into ``.`` and ``.dart`` dropped), the source of directive sites and of uses
outside any declaration. Duplicate (qualified name, kind) pairs in one file
keep the first and name the later ones ``name#2``, ``name#3``.

The grammar is flat in places: a method's ``function_body`` is the sibling of
its ``method_signature``, a top-level variable is a run of siblings ending at
``;``, ``p.T`` is two ``type_identifier`` siblings around ``.``, and a member
chain ``a.b(c).d`` is a primary followed by ``selector`` siblings. The walk
reads sibling runs for all of these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec
from tree_sitter import Node

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.dart import grammar
from indexer.languages.dart import sites as S
from indexer.languages.dart.modules import LANGUAGE, module_qualified_name
from indexer.languages.syntax import collapse, extract_tree, node_text

EXTRACTOR_VERSION = "dart-ts-2"

GRAMMAR = grammar.load()

_TYPE_DECLS = {
    "class_definition": "class",
    "mixin_declaration": "mixin",
    "extension_declaration": "extension",
    "extension_type_declaration": "extension_type",
    "enum_declaration": "enum",
}
_CTOR_SIGNATURES = frozenset(
    {
        "constructor_signature",
        "constant_constructor_signature",
        "factory_constructor_signature",
        "redirecting_factory_constructor_signature",
    }
)
_CALLABLE_SIGNATURES = frozenset(
    {"function_signature", "getter_signature", "setter_signature", "operator_signature", *_CTOR_SIGNATURES}
)
_VARIABLE_LISTS = frozenset({"initialized_identifier_list", "static_final_declaration_list"})
# Siblings that belong to the declaration that follows them (modifiers, annotations, a declared type).
_LEADING = frozenset(
    {
        "annotation",
        "final_builtin",
        "const_builtin",
        "inferred_type",
        "type_identifier",
        "type_arguments",
        "nullable_type",
        "void_type",
        "function_type",
        "record_type",
        ".",
        "late",
        "static",
        "external",
        "covariant",
        "abstract",
        "var",
    }
)
_TYPE_NODES = frozenset(
    {
        "type_identifier",
        "void_type",
        "function_type",
        "record_type",
        "type_arguments",
        "nullable_type",
        "type_parameters",
        "type_bound",
        "parameter_type_list",
        "normal_parameter_type",
        "optional_parameter_types",
        "named_parameter_types",
        "optional_positional_parameter_types",
        "record_type_field",
        "record_type_named_field",
        "type_test",
        "type_cast",
    }
)
_SELECTOR_MEMBER = frozenset({"unconditional_assignable_selector", "conditional_assignable_selector"})
_SCOPES = frozenset({"function_expression", "lambda_expression"})


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one Dart file; a syntax error makes it partial (see extract_tree)."""
    return extract_tree(GRAMMAR, LANGUAGE, path, source, package, lambda root, text: _Extractor(text, path).run(root))


def exported_name(name: str) -> bool:
    """Library-public: the name does not start with ``_`` (and is a name at all)."""
    return bool(name) and not name.startswith(("_", "<"))


@dataclass
class _Scope:
    """Names bound inside one function or initializer (coarse: for the whole body) and their syntactic types."""

    names: set[str] = field(default_factory=set)
    types: dict[str, str] = field(default_factory=dict)


def _named(nodes: Sequence[Node]) -> list[Node]:
    return [n for n in nodes if n.is_named]


def _type_text(nodes: Sequence[Node]) -> str:
    """``p.T`` or ``T`` from the first named type of a sibling run ("" when it is not a named type)."""
    for i, n in enumerate(nodes):
        if n.type == "type_identifier":
            if i + 2 < len(nodes) and nodes[i + 1].type == "." and nodes[i + 2].type == "type_identifier":
                return f"{node_text(n)}.{node_text(nodes[i + 2])}"
            return node_text(n)
        if n.type in ("void_type", "function_type", "record_type", "inferred_type"):
            return ""
    return ""


class _Extractor:
    def __init__(self, source: bytes, path: str) -> None:
        self.source = source
        self.path = path
        self.symbols: list[SymbolFact] = []
        self.sites: list[Site] = []
        self.seen: dict[tuple[str, str], int] = {}
        self.enclosing = ""
        self.scope: _Scope | None = None
        self.type_params: set[str] = set()

    def run(self, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
        qn = module_qualified_name(self.path)
        self.symbols.append(
            SymbolFact(
                name=qn.rsplit(".", 1)[-1],
                qualified_name=qn,
                kind="module",
                start_line=1,
                start_col=0,
                end_line=root.end_point[0] + 1,
                end_col=root.end_point[1],
            )
        )
        self._members(root.children, "")
        self.sites.sort(key=lambda s: (s.line, s.col))
        return tuple(self.symbols), tuple(self.sites)

    # -- declarations -------------------------------------------------------------------------------

    def _declare(
        self,
        name: str,
        qn: str,
        kind: str,
        start: Node,
        end: Node,
        signature: str,
        doc: str,
        container: str,
        exported: bool | None = None,
    ) -> str:
        n = self.seen.get((qn, kind), 0) + 1
        self.seen[(qn, kind)] = n
        if n > 1:
            qn = f"{qn}#{n}"
        if exported is None:
            exported = exported_name(name) and (not container or self._exported(container))
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=start.start_point[0] + 1,
                start_col=start.start_point[1],
                end_line=end.end_point[0] + 1,
                end_col=end.end_point[1],
                signature=collapse(signature),
                doc=doc,
                exported=exported,
                container=container,
            )
        )
        return qn

    def _exported(self, qn: str) -> bool:
        return next((s.exported for s in reversed(self.symbols) if s.qualified_name == qn), False)

    def _text(self, start: Node, end_byte: int) -> str:
        return self.source[start.start_byte : end_byte].decode("utf-8", "replace")

    def _doc(self, siblings: Sequence[Node], first: int) -> str:
        """The ``///`` or ``/** */`` comment right above sibling ``first`` (annotations skipped), first paragraph."""
        lines: list[str] = []
        i = first - 1
        while i >= 0 and siblings[i].type == "annotation":
            i -= 1
        while i >= 0 and siblings[i].type in ("documentation_comment", "comment"):
            text = node_text(siblings[i])
            if text.startswith("///"):
                lines[:0] = [ln.strip().removeprefix("///").strip() for ln in text.splitlines()]
            elif text.startswith("/**"):
                body = text[3:-2] if text.endswith("*/") else text[3:]
                lines[:0] = [ln.strip().lstrip("*").strip() for ln in body.splitlines()]
            else:
                break
            i -= 1
        para: list[str] = []
        for line in lines:
            if not line:
                if para:
                    break
                continue
            para.append(line)
        return collapse(" ".join(para))

    def _members(self, children: Sequence[Node], owner: str) -> None:
        """Declarations among a body's children (the program's or a class body's), reading sibling runs."""
        start: int | None = None  # first sibling of the declaration being read (modifiers, annotations, type)
        i = 0
        while i < len(children):
            node = children[i]
            t = node.type
            if t in _LEADING and not (t == "." and start is None):
                if start is None:
                    start = i
                i += 1
                continue
            first = i if start is None else start
            lead = list(children[first:i])
            if t in _TYPE_DECLS or t == "type_alias":
                self._annotations(lead, owner)
                self._type_declaration(node, children, first, owner)
            elif t in ("method_signature", "declaration") or t in _CALLABLE_SIGNATURES:
                body = children[i + 1] if i + 1 < len(children) and children[i + 1].type == "function_body" else None
                self._member(node, lead, body, children, first, owner)
                if body is not None:
                    i += 1
            elif t in _VARIABLE_LISTS:
                self._variables(node, lead, children, first, owner, "variable" if not owner else "field")
            elif t == "enum_constant":
                self._enum_constant(node, children, i, owner)
            elif t == "import_or_export":
                self._directive(node)
            elif t == "part_directive":
                self._uri_site(S.PART, node, ())
            elif t == "part_of_directive":
                names = node.named_children
                uri = next((c for c in names if c.type == "uri"), None)
                if uri is not None:
                    self._uri_site(S.PART_OF, node, ("uri",))
                else:
                    dotted = next((c for c in names if c.type == "dotted_identifier_list"), None)
                    if dotted is not None:
                        self._site(S.PART_OF, dotted, (), name=node_text(dotted))
            elif t == "library_name":
                dotted = next((c for c in node.named_children if c.type == "dotted_identifier_list"), None)
                if dotted is not None:
                    self._site(S.LIBRARY, dotted, (), name=node_text(dotted))
            elif t == "function_body":
                self._in(owner, _Scope(), lambda n=node: self._expr(n))  # a body whose signature did not parse
            start = None
            i += 1

    def _annotations(self, lead: Sequence[Node], enclosing: str) -> None:
        for n in lead:
            if n.type == "annotation":
                self._in(enclosing, None, lambda n=n: self._seq(n.children))

    def _header_types(self, lead: Sequence[Node], qn: str) -> None:
        """The declared type among a declaration's leading siblings: TYPE sites owned by ``qn``."""
        self._in(qn, self.scope, lambda: self._types(lead))

    def _type_declaration(self, node: Node, siblings: Sequence[Node], first: int, owner: str) -> None:
        t = node.type
        if t == "type_alias":
            self._type_alias(node, siblings, first, owner)
            return
        kind = _TYPE_DECLS[t]
        named = node.named_children
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body") or next(
            (c for c in named if c.type in ("class_body", "extension_body", "enum_body")), None
        )
        mixin_app = next((c for c in named if c.type == "mixin_application_class"), None)
        if name_node is None and t == "mixin_declaration":
            name_node = next((c for c in named if c.type == "identifier"), None)
        if name_node is None and mixin_app is not None:
            name_node = next((c for c in mixin_app.named_children if c.type == "identifier"), None)
        exported: bool | None = None
        if name_node is not None:
            name = node_text(name_node)
        elif t == "extension_declaration":
            on = node.child_by_field_name("class")
            name = f"<extension on {node_text(on).rsplit('.', 1)[-1] if on is not None else '?'}>"
            exported = False
        else:
            return
        end_byte = body.start_byte if body is not None else node.end_byte
        qn = self._declare(
            name,
            name,
            kind,
            node,
            node,
            self._text(node, end_byte).strip(),
            self._doc(siblings, first),
            owner,
            exported,
        )
        saved_params = set(self.type_params)
        tparams = node.child_by_field_name("type_parameters") or next(
            (c for c in named if c.type == "type_parameters"), None
        )
        if tparams is not None:
            self.type_params |= self._type_parameter_names(tparams)
            self._in(qn, None, lambda: self._types(tparams.children))
        self._heritage(node, qn, t)
        if mixin_app is not None:
            self._heritage(mixin_app, qn, t)
        if t == "extension_type_declaration":
            self._representation(node, qn)
        if body is not None:
            self._members(body.children, qn)
        self.type_params = saved_params

    def _type_parameter_names(self, tparams: Node) -> set[str]:
        out: set[str] = set()
        for p in tparams.named_children:
            if p.type == "type_parameter":
                first = next((c for c in p.named_children if c.type == "type_identifier"), None)
                if first is not None:
                    out.add(node_text(first))
        return out

    def _heritage(self, node: Node, qn: str, decl: str) -> None:
        """extends / with / implements / on: one site per named type, type arguments as TYPE sites."""
        for part in node.named_children:
            if part.type == "superclass" or part.type == "mixin_application":
                parts = list(part.children)
                mixins = next((c for c in parts if c.type == "mixins"), None)
                self._in(qn, None, lambda ps=[c for c in parts if c.type != "mixins"]: self._types(ps, S.EXTENDS))
                if mixins is not None:
                    self._in(qn, None, lambda m=mixins: self._types(m.children, S.WITH))
            elif part.type == "mixins":
                self._in(qn, None, lambda m=part: self._types(m.children, S.WITH))
            elif part.type == "interfaces":
                self._in(qn, None, lambda m=part: self._types(m.children, S.IMPLEMENTS))
        if decl == "mixin_declaration":
            children = list(node.children)
            on_at = next((i for i, c in enumerate(children) if c.type == "on"), None)
            if on_at is not None:
                run: list[Node] = []
                for c in children[on_at + 1 :]:
                    if c.type in ("interfaces", "class_body"):
                        break
                    run.append(c)
                self._in(qn, None, lambda: self._types(run, S.ON))
        elif decl == "extension_declaration":
            on = node.child_by_field_name("class")
            if on is not None:
                children = list(node.children)
                at = next(i for i, c in enumerate(children) if c.start_byte == on.start_byte)
                run = []
                for c in children[at:]:
                    if c.type in ("extension_body",):
                        break
                    run.append(c)
                self._in(qn, None, lambda: self._types(run, S.ON))

    def _representation(self, node: Node, qn: str) -> None:
        rep = node.child_by_field_name("representation")
        if rep is None:
            return
        ctor = next(
            (c for c in rep.named_children if c.type == "identifier" and c != rep.child_by_field_name("name")), None
        )
        ctor_name = node_text(ctor) if ctor is not None else "new"
        self._declare(ctor_name, f"{qn}.{ctor_name}", "constructor", rep, rep, f"{qn}{node_text(rep)}", "", qn)
        fname = rep.child_by_field_name("name")
        if fname is not None:
            fqn = self._declare(
                node_text(fname), f"{qn}.{node_text(fname)}", "field", rep, rep, node_text(rep).strip("()"), "", qn
            )
            typ = rep.child_by_field_name("type")
            if typ is not None:
                self._in(fqn, None, lambda: self._types([typ]))
                self._typed(fqn, [typ])

    def _type_alias(self, node: Node, siblings: Sequence[Node], first: int, owner: str) -> None:
        children = list(node.children)
        named = _named(children)
        eq = next((i for i, c in enumerate(children) if c.type == "="), None)
        if eq is not None:  # typedef Name<T> = Type;
            name_node = next((c for c in children[:eq] if c.type == "type_identifier"), None)
            rest = children[eq + 1 :]
        else:  # typedef Ret Name(params);
            before = [c for c in named if c.type != "formal_parameter_list"]
            idents = [c for c in before if c.type == "type_identifier"]
            name_node = idents[-1] if idents else None
            rest = [c for c in children if c is not name_node]
        if name_node is None:
            return
        name = node_text(name_node)
        qn = self._declare(
            name, name, "type_alias", node, node, node_text(node).rstrip(";"), self._doc(siblings, first), owner
        )
        tparams = next((c for c in named if c.type == "type_parameters"), None)
        saved = set(self.type_params)
        if tparams is not None:
            self.type_params |= self._type_parameter_names(tparams)
        self._in(qn, _Scope(), lambda: self._types([c for c in rest if c.type != "type_parameters"]))
        self.type_params = saved

    def _member(
        self, node: Node, lead: Sequence[Node], body: Node | None, siblings: Sequence[Node], first: int, owner: str
    ) -> None:
        """A method, getter, setter, operator, constructor or field list (inside ``declaration`` too)."""
        inner = list(node.children) if node.type in ("method_signature", "declaration") else [node]
        sig = next((c for c in inner if c.type in _CALLABLE_SIGNATURES), None)
        start = siblings[first] if first < len(siblings) else node
        start = next((c for c in siblings[first:] if c.type != "annotation"), start)
        if sig is None:
            lists = [c for c in inner if c.type in _VARIABLE_LISTS]
            if lists:
                at = inner.index(lists[0])
                self._variables(
                    lists[0],
                    [*lead, *inner[:at]],
                    siblings,
                    first,
                    owner,
                    "variable" if not owner else "field",
                    start=start,
                )
            return
        end = body if body is not None else node
        saved = set(self.type_params)
        tparams = next((c for c in sig.named_children if c.type == "type_parameters"), None)
        if tparams is not None:
            self.type_params |= self._type_parameter_names(tparams)
        try:
            self._callable_member(sig, inner, lead, body, start, end, siblings, first, owner)
        finally:
            self.type_params = saved

    def _callable_member(
        self,
        sig: Node,
        inner: Sequence[Node],
        lead: Sequence[Node],
        body: Node | None,
        start: Node,
        end: Node,
        siblings: Sequence[Node],
        first: int,
        owner: str,
    ) -> None:
        qn = self._callable(sig, start, end, siblings, first, owner, lead)
        if qn is None:
            return
        self._annotations(lead, qn)
        rest = [c for c in inner if c.type in ("initializers", "redirection")]
        scope = self._signature_scope(sig)
        for part in rest:
            self._in(qn, scope, lambda p=part: self._initializers(p))
        if body is not None:
            self._collect_locals(body, scope)
            self._in(qn, scope, lambda: self._expr(body))

    def _callable(
        self, sig: Node, start: Node, end: Node, siblings: Sequence[Node], first: int, owner: str, lead: Sequence[Node]
    ) -> str | None:
        t = sig.type
        doc = self._doc(siblings, first)
        signature = self._text(start, sig.end_byte).strip()
        params = next((c for c in sig.named_children if c.type == "formal_parameter_list"), None)
        if t in _CTOR_SIGNATURES:
            before = sig.children if params is None else [c for c in sig.children if c.end_byte <= params.start_byte]
            idents = [c for c in before if c.type == "identifier"]
            if not idents or not owner:
                return None
            name = node_text(idents[1]) if len(idents) > 1 else "new"
            qn = self._declare(name, f"{owner}.{name}", "constructor", start, end, signature, doc, owner)
            if params is not None:
                self._in(qn, None, lambda: self._types([params]))
            if t == "redirecting_factory_constructor_signature" and params is not None:
                target = [c for c in sig.children if c.start_byte >= params.end_byte]
                self._in(qn, None, lambda: self._redirect(target))
            return qn
        if t == "operator_signature":
            op = next((c for c in sig.named_children if c.type == "binary_operator"), None)
            name = (
                node_text(op)
                if op is not None
                else collapse(self._text(sig, params.start_byte if params else sig.end_byte)).removeprefix("operator ")
            )
            name = name.strip()
            kind = "method"
        else:
            name_node = sig.child_by_field_name("name")
            if name_node is None:
                return None
            name = node_text(name_node)
            kind = {"getter_signature": "getter", "setter_signature": "setter"}.get(
                t, "method" if owner else "function"
            )
        qn = self._declare(name, f"{owner}.{name}" if owner else name, kind, start, end, signature, doc, owner)
        self._signature_types(sig, qn)
        self._header_types([c for c in lead if c.type != "annotation"], qn)
        if kind == "getter":
            self._typed(qn, list(sig.children))
        return qn

    def _signature_types(self, sig: Node, qn: str) -> None:
        """Return type, type parameters and parameter types of a signature (uses owned by ``qn``)."""
        parts = [c for c in sig.children if c.type != "identifier" and c.type != "binary_operator"]
        self._in(qn, None, lambda: self._types(parts))

    def _signature_scope(self, sig: Node) -> _Scope:
        scope = _Scope()
        params = next((c for c in sig.named_children if c.type == "formal_parameter_list"), None)
        if params is not None:
            self._collect_params(params, scope)
        return scope

    def _collect_params(self, params: Node, scope: _Scope) -> None:
        stack = [params]
        while stack:
            cur = stack.pop()
            if cur.type == "formal_parameter":
                name = cur.child_by_field_name("name")
                if name is None:  # an untyped lambda parameter ``(s) => ...``
                    only = [c for c in cur.named_children if c.type == "identifier"]
                    name = only[-1] if len(only) == 1 else None
                if name is not None:
                    scope.names.add(node_text(name))
                    typ = _type_text([c for c in cur.children if c.end_byte <= name.start_byte])
                    if typ:
                        scope.types[node_text(name)] = typ
                continue
            stack.extend(cur.named_children)

    def _variables(
        self,
        lst: Node,
        lead: Sequence[Node],
        siblings: Sequence[Node],
        first: int,
        owner: str,
        kind: str,
        start: Node | None = None,
    ) -> None:
        """Fields or top-level variables: one declaration per name, the declared type owned by the first."""
        if start is None:
            start = next((c for c in siblings[first:] if c.type != "annotation"), lst)
        doc = self._doc(siblings, first)
        decl_type = [c for c in lead if c.type not in ("annotation",)]
        prefix = collapse(self._text(start, lst.start_byte)) if start.start_byte < lst.start_byte else ""
        firsts: list[str] = []
        for item in lst.named_children:
            if item.type not in ("initialized_identifier", "static_final_declaration"):
                continue
            name_node = next((c for c in item.named_children if c.type == "identifier"), None)
            if name_node is None:
                continue
            name = node_text(name_node)
            qn = self._declare(
                name,
                f"{owner}.{name}" if owner else name,
                kind,
                start if not firsts else item,
                item if len(lst.named_children) > 1 else lst,
                f"{prefix} {node_text(name_node)}".strip(),
                doc,
                owner,
            )
            firsts.append(qn)
            value = [c for c in item.children if c.start_byte > name_node.end_byte and c.type != "="]
            if kind == "variable" and any(v.type == "function_expression" for v in value):
                # `final greet = (String n) { … };` holds a function (records.Symbol.callable)
                self.symbols[-1] = msgspec.structs.replace(self.symbols[-1], callable=True)
            scope = _Scope()
            for v in value:
                self._collect_locals(v, scope)
            if value:
                self._in(qn, scope, lambda v=value: self._seq(v))
            typed = _type_text(decl_type) or self._constructed(value)
            if typed:
                self._typed_text(qn, typed, item)
        if firsts:
            self._header_types(decl_type, firsts[0])
            self._annotations(lead, firsts[0])

    def _enum_constant(self, node: Node, siblings: Sequence[Node], i: int, owner: str) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None or not owner:
            return
        name = node_text(name_node)
        qn = self._declare(
            name, f"{owner}.{name}", "enum_member", node, node, node_text(node), self._doc(siblings, i), owner
        )
        args = [c for c in node.children if c.type in ("argument_part", "arguments", "type_arguments")]
        if args:
            self._in(qn, _Scope(), lambda: self._seq(args))

    # -- directives ---------------------------------------------------------------------------------

    def _uri_site(self, kind: str, node: Node, extra: tuple[str, ...]) -> None:
        uri = self._first_uri(node)
        if uri is not None:
            self._site(kind, uri, extra, name=_unquote(node_text(uri)))

    def _first_uri(self, node: Node) -> Node | None:
        stack = [node]
        while stack:
            cur = stack.pop(0)
            if cur.type == "uri":
                return cur
            if cur.type == "configuration_uri":
                continue
            stack[:0] = list(cur.named_children)
        return None

    def _directive(self, node: Node) -> None:
        spec = next((c for c in node.named_children if c.type in ("library_import", "library_export")), None)
        if spec is None:
            return
        is_import = spec.type == "library_import"
        body = next((c for c in spec.named_children if c.type == "import_specification"), spec)
        uri = self._first_uri(body)
        if uri is None:
            return
        alternatives = [
            _unquote(node_text(u))
            for c in _walk(body)
            if c.type == "configuration_uri"
            for u in c.named_children
            if u.type == "uri"
        ]
        prefix = next((node_text(c) for c in body.named_children if c.type == "identifier"), "")
        deferred = any(c.type == "deferred" for c in body.children)
        shows: list[Node] = []
        hides: list[Node] = []
        for comb in (c for c in body.named_children if c.type == "combinator"):
            words = [c for c in comb.children if not c.is_named]
            target = hides if words and words[0].type == "hide" else shows
            target.extend(c for c in comb.named_children if c.type == "identifier")
        name = _unquote(node_text(uri))
        extra = (
            prefix,
            ",".join(node_text(n) for n in shows),
            ",".join(node_text(n) for n in hides),
            "deferred" if deferred else "",
            ",".join(alternatives),
        )
        self._site(S.IMPORT if is_import else S.EXPORT, uri, extra, name=name)
        for n in shows:
            self._site(S.SHOW, n, (name, prefix, "import" if is_import else "export"))

    # -- bodies ------------------------------------------------------------------------------------

    def _in(self, enclosing: str, scope: _Scope | None, work: Callable[[], object]) -> None:
        saved = self.enclosing, self.scope
        self.enclosing, self.scope = enclosing, scope
        try:
            work()
        finally:
            self.enclosing, self.scope = saved

    def _collect_locals(self, node: Node, scope: _Scope | None) -> None:
        """Every name bound anywhere inside a body (coarse, as Dart blocks nest; enough for syntax)."""
        if scope is None:
            return
        stack = [node]
        while stack:
            cur = stack.pop()
            t = cur.type
            if t == "initialized_variable_definition":
                name = cur.child_by_field_name("name")
                if name is not None:
                    scope.names.add(node_text(name))
                    before = [c for c in cur.children if c.end_byte <= name.start_byte]
                    after = [c for c in cur.children if c.start_byte > name.end_byte and c.type != "="]
                    typ = _type_text(before) or self._constructed(after)
                    if typ:
                        scope.types[node_text(name)] = typ
            elif t == "for_loop_parts":
                name = cur.child_by_field_name("name")
                if name is not None:
                    scope.names.add(node_text(name))
                    typ = _type_text([c for c in cur.children if c.end_byte <= name.start_byte])
                    if typ:
                        scope.types[node_text(name)] = typ
            elif t == "formal_parameter_list":
                self._collect_params(cur, scope)
            elif t == "catch_parameters":
                scope.names.update(node_text(c) for c in cur.named_children if c.type == "identifier")
            elif t == "function_signature" and cur.parent is not None and cur.parent.type == "lambda_expression":
                name = cur.child_by_field_name("name")
                if name is not None:
                    scope.names.add(node_text(name))
            elif t in ("variable_pattern", "identifier_list"):
                scope.names.update(node_text(c) for c in cur.named_children if c.type == "identifier")
            elif t == "type_parameters":
                scope.names.update(self._type_parameter_names(cur))
            stack.extend(cur.named_children)

    def _constructed(self, value: Sequence[Node]) -> str:
        """The type a value's syntax names: ``T(...)``, ``T.named(...)``, ``p.T(...)``, ``new T()``, ``const T()``."""
        named = [v for v in value if v.is_named]
        if not named:
            return ""
        head = named[0]
        if head.type in ("new_expression", "const_object_expression", "constructor_invocation"):
            return _type_text(list(head.children))
        if head.type == "postfix_expression" and head.named_children:
            inner = head.named_children[0]
            if inner.type == "constructor_invocation":
                return _type_text(list(inner.children))
        if head.type != "identifier" or len(named) < 2:
            return ""
        words = [node_text(head)]
        for sel in named[1:]:
            member = next((c for c in sel.named_children if c.type in _SELECTOR_MEMBER), None)
            if member is not None:
                words.append(node_text(member).lstrip("?."))
                continue
            if any(c.type == "argument_part" for c in sel.named_children):
                break
            return ""
        else:
            return ""
        # Type(...), Type.named(...), prefix.Type(...), prefix.Type.named(...): the capitalised words name the type
        types = [w for w in words if w[:1].isupper()]
        if not types:
            return ""
        at = words.index(types[0])
        if at > 1 or (at == 1 and words[0][:1].isupper()):
            return ""
        return ".".join(words[: at + 1])

    def _typed(self, qn: str, nodes: Sequence[Node]) -> None:
        typ = _type_text(nodes)
        at = next((n for n in nodes if n.type == "type_identifier"), None)
        if typ and at is not None:
            self._typed_text(qn, typ, at)

    def _typed_text(self, qn: str, typ: str, at: Node) -> None:
        qualifier, _, name = typ.rpartition(".")
        if name in self.type_params:
            return
        row, col = at.start_point
        self.sites.append(Site(S.TYPED, name, row + 1, col, qn, (qualifier, "", "")))

    def _site(self, kind: str, node: Node, extra: tuple[str, ...], name: str | None = None) -> None:
        row, col = node.start_point
        self.sites.append(Site(kind, node_text(node) if name is None else name, row + 1, col, self.enclosing, extra))

    def _is_local(self, name: str) -> bool:
        return (self.scope is not None and name in self.scope.names) or name in self.type_params

    def _types(self, nodes: Sequence[Node], kind: str = S.TYPE) -> None:
        """TYPE (or heritage) sites for the named types in a sibling run; ``p.T`` is one site on ``T``."""
        i = 0
        nodes = list(nodes)
        while i < len(nodes):
            n = nodes[i]
            if n.type == "type_identifier":
                if i + 2 < len(nodes) and nodes[i + 1].type == "." and nodes[i + 2].type == "type_identifier":
                    self._site(kind, nodes[i + 2], (node_text(n), S.OUTER, ""))
                    i += 3
                    continue
                name = node_text(n)
                if not self._is_local(name):
                    self._site(kind, n, ("", "", ""))
            elif n.type in _TYPE_NODES or n.type in (
                "formal_parameter_list",
                "formal_parameter",
                "optional_formal_parameters",
                "type_parameter",
            ):
                self._types(n.children, S.TYPE)
            elif n.type in ("constructor_param", "super_formal_parameter"):
                pass
            elif n.is_named and n.type not in ("identifier", "comment", "documentation_comment"):
                self._expr(n)  # a default value, an annotation
            i += 1

    def _redirect(self, target: Sequence[Node]) -> None:
        """``= B`` / ``= p.C.named`` of a redirecting factory: a call of that constructor."""
        types = [c for c in target if c.type in ("type_identifier", ".", "identifier")]
        words = [node_text(c) for c in types if c.type != "."]
        named = [c for c in types if c.type != "."]
        if not named:
            return
        last = named[-1]
        if len(named) == 1:
            self._site(S.CALL, last, ("", "", ""))
        else:
            self._site(S.CALL, last, (".".join(words[:-1]), S.OUTER, ""))
        for c in target:
            if c.type == "type_arguments":
                self._types(c.children)

    def _initializers(self, node: Node) -> None:
        """A constructor's initializer list or redirection: field initializers, ``super(...)``, ``this.x(...)``."""
        entries = (
            [node]
            if node.type == "redirection"
            else [c for c in node.named_children if c.type == "initializer_list_entry"]
        )
        for entry in entries:
            children = list(entry.children)
            head = next((c for c in children if c.type in ("super", "this")), None)
            if head is not None and any(c.type == "arguments" for c in children):
                ctor = next((c for c in children if c.type == "identifier" and c.start_byte > head.start_byte), None)
                binding = S.SUPER if head.type == "super" else S.THIS
                at = ctor if ctor is not None else head
                self._site(S.CALL, at, (head.type, binding, ""), name=node_text(ctor) if ctor is not None else "new")
                for c in children:
                    if c.type == "arguments":
                        self._args(c)
                continue
            for c in entry.named_children:
                if c.type == "field_initializer":
                    fc = list(c.children)
                    fname = next((x for x in fc if x.type == "identifier"), None)
                    if fname is not None:
                        self._site(S.REF, fname, (S.THIS, S.THIS, ""))
                        self._seq([x for x in fc if x.start_byte > fname.end_byte and x.type != "="])
                else:
                    self._expr(c)

    def _expr(self, node: Node | None) -> None:
        if node is None:
            return
        t = node.type
        if t in _TYPE_NODES:
            self._types([node])
            return
        if t == "identifier":
            self._chain([node], S.REF)
            return
        if t == "identifier_dollar_escaped":
            name = node_text(node)
            if not self._is_local(name) and name not in ("this", "super"):
                self._site(S.REF, node, ("", "", ""))
            return
        if t in ("new_expression", "const_object_expression", "constructor_invocation"):
            self._construct(node)
            return
        if t in _SCOPES:
            scope = _Scope(set(self.scope.names) if self.scope else set(), dict(self.scope.types) if self.scope else {})
            self._collect_locals(node, scope)
            self._in(self.enclosing, scope, lambda: self._seq(node.children))
            return
        if t in ("local_variable_declaration", "initialized_variable_definition"):
            if t == "local_variable_declaration":
                for c in node.named_children:
                    self._expr(c)
                return
            name = node.child_by_field_name("name")
            self._types([c for c in node.children if name is None or c.end_byte <= name.start_byte])
            self._seq([c for c in node.children if name is not None and c.start_byte > name.end_byte])
            return
        if t == "for_loop_parts":
            name = node.child_by_field_name("name")
            if name is not None:
                self._types([c for c in node.children if c.end_byte <= name.start_byte])
                self._seq([c for c in node.children if c.start_byte > name.end_byte])
                return
        if t in ("formal_parameter_list", "formal_parameter", "optional_formal_parameters"):
            self._types([node])
            return
        if t == "named_argument":
            self._seq([c for c in node.children if c.type != "label"])
            return
        if t in ("label", "comment", "documentation_comment", "catch_parameters"):
            return
        self._seq(node.children)

    def _seq(self, nodes: Sequence[Node], kind_if_bare: str = S.REF) -> None:
        """A sibling run: chains (a primary and its selectors) become sites, everything else recurses."""
        nodes = [n for n in nodes if n.type not in ("comment", "documentation_comment")]
        i = 0
        while i < len(nodes):
            n = nodes[i]
            if n.type in ("identifier", "this", "super") or (
                n.type == "type_identifier" and i + 1 < len(nodes) and nodes[i + 1].type == "selector"
            ):
                j = i + 1
                while j < len(nodes) and nodes[j].type in (
                    "selector",
                    "cascade_section",
                    *_SELECTOR_MEMBER,
                    "argument_part",
                    "arguments",
                ):
                    j += 1
                self._chain(nodes[i:j], kind_if_bare)
                i = j
                continue
            if n.type in ("selector", "cascade_section", "argument_part", "arguments", *_SELECTOR_MEMBER):
                # a chain whose primary is an expression: its members have unknown receivers
                j = i
                while j < len(nodes) and nodes[j].type in (
                    "selector",
                    "cascade_section",
                    "argument_part",
                    "arguments",
                    *_SELECTOR_MEMBER,
                ):
                    j += 1
                self._chain(nodes[i:j], kind_if_bare, head_is_expr=True)
                i = j
                continue
            if n.type in _TYPE_NODES:
                j = i
                while j < len(nodes) and (nodes[j].type in _TYPE_NODES or nodes[j].type == "."):
                    j += 1
                self._types(nodes[i:j])
                i = max(j, i + 1)
                continue
            if n.is_named:
                self._expr(n)
            i += 1

    def _args(self, node: Node) -> None:
        """An argument list: a lone name or ``a.b`` chain without a call is a callback (a tear-off)."""
        for arg in node.named_children:
            if arg.type not in ("argument", "named_argument"):
                self._expr(arg)
                continue
            parts = [c for c in arg.children if c.type not in ("label", ",")]
            named = [c for c in parts if c.is_named]
            simple = (
                bool(named)
                and named[0].type in ("identifier", "this", "super")
                and all(
                    c.type == "selector" and any(x.type in _SELECTOR_MEMBER for x in c.named_children)
                    for c in named[1:]
                )
            )
            self._seq(parts, S.CALLBACK if simple else S.REF)

    def _chain(self, nodes: Sequence[Node], kind_if_bare: str, head_is_expr: bool = False) -> None:
        """``a.b(c).d``: a site per name, each qualified by the simple chain before it (``expr`` after a call)."""
        words: list[str] = []
        binding = S.EXPR if head_is_expr else ""
        qtype = ""
        start = 0
        steps: list[tuple[Node, bool]] = []  # (name node, called)
        if not head_is_expr:
            head = nodes[0]
            start = 1
            if head.type in ("this", "super"):
                words.append(head.type)
                binding = S.THIS if head.type == "this" else S.SUPER
            else:
                steps.append((head, False))
        pending_args: list[Node] = []
        cascades: list[Node] = []
        for sel in nodes[start:]:
            if sel.type == "cascade_section":
                cascades.append(sel)
                continue
            member = (
                sel
                if sel.type in _SELECTOR_MEMBER
                else next((c for c in sel.named_children if c.type in _SELECTOR_MEMBER), None)
            )
            if member is not None:
                ident = next((c for c in member.named_children if c.type == "identifier"), None)
                if ident is not None:
                    steps.append((ident, False))
                continue
            argp = (
                sel
                if sel.type in ("argument_part", "arguments")
                else next((c for c in sel.named_children if c.type == "argument_part"), None)
            )
            if argp is not None:
                if steps:
                    steps[-1] = (steps[-1][0], True)
                else:
                    binding = S.EXPR
                pending_args.append(argp)
                steps.append((argp, True))  # a marker: what follows a call has an unknown receiver
                continue
            for c in sel.named_children:  # an index, a null assertion
                self._expr(c)
        # emit sites
        expr_after = binding == S.EXPR
        qualifier_words = list(words)
        last_name = max(
            (k for k, (n, _c) in enumerate(steps) if n.type not in ("argument_part", "arguments")), default=-1
        )
        constructed: tuple[str, str] | None = None  # (call chain, type) of ``T(...)`` / ``p.T.named(...)``
        for k, (n, called) in enumerate(steps):
            if n.type in ("argument_part", "arguments"):
                made = "" if expr_after or binding in (S.LOCAL, S.THIS, S.SUPER) else _ctor_type(qualifier_words)
                constructed = (".".join(qualifier_words), made) if made and constructed is None else None
                expr_after = True
                qualifier_words = []
                continue
            name = node_text(n)
            kind = S.CALL if called else (kind_if_bare if k == last_name else S.REF)
            if constructed is not None:
                self._site(kind, n, (constructed[0], S.NEW, constructed[1]))
                constructed = None
                continue
            if not qualifier_words and not expr_after:
                if self._is_local(name):
                    assert self.scope is not None or name in self.type_params
                    binding = S.LOCAL
                    qtype = self.scope.types.get(name, "") if self.scope is not None else ""
                elif name not in ("this", "super"):
                    self._site(kind, n, ("", "", ""))
                    binding = S.OUTER
                qualifier_words.append(name)
                continue
            if expr_after:
                self._site(kind, n, ("?", S.EXPR, ""))
                continue
            self._site(kind, n, (".".join(qualifier_words), binding, qtype if len(qualifier_words) == 1 else ""))
            qualifier_words.append(name)
        for argp in pending_args:
            for c in argp.named_children:
                if c.type == "arguments":
                    self._args(c)
                elif c.type == "type_arguments":
                    self._types(c.children)
            if argp.type == "arguments":
                self._args(argp)
        for cas in cascades:
            self._cascade(
                cas,
                ".".join(words + [node_text(n) for n, _c in steps if n.type not in ("argument_part", "arguments")])
                if not head_is_expr and all(not c for _n, c in steps)
                else "?",
                binding if steps or words else S.EXPR,
                qtype,
            )

    def _cascade(self, section: Node, receiver: str, binding: str, qtype: str) -> None:
        sel = next((c for c in section.named_children if c.type == "cascade_selector"), None)
        ident = next((c for c in sel.named_children if c.type == "identifier"), None) if sel is not None else None
        called = any(c.type == "argument_part" for c in section.named_children)
        if ident is not None:
            if receiver == "?" or not receiver:
                self._site(S.CALL if called else S.REF, ident, ("?", S.EXPR, ""))
            else:
                self._site(
                    S.CALL if called else S.REF, ident, (receiver, binding, qtype if "." not in receiver else "")
                )
        for c in section.named_children:
            if c.type == "argument_part":
                for a in c.named_children:
                    if a.type == "arguments":
                        self._args(a)
                    elif a.type == "type_arguments":
                        self._types(a.children)
            elif c.type != "cascade_selector":
                self._expr(c)

    def _construct(self, node: Node) -> None:
        """``new T()``, ``const T.named()``, ``T<int>.named()``: a call of the constructor (the type if unnamed)."""
        children = list(node.children)
        types = [c for c in children if c.type == "type_identifier"]
        ctor = next((c for c in children if c.type == "identifier"), None)
        if not types:
            self._seq(children)
            return
        prefix = node_text(types[0]) if len(types) > 1 else ""
        tname = types[-1]
        if ctor is not None:
            self._site(S.CALL, ctor, (f"{prefix}.{node_text(tname)}" if prefix else node_text(tname), S.OUTER, ""))
        elif prefix:
            self._site(S.CALL, tname, (prefix, S.OUTER, ""))
        elif not self._is_local(node_text(tname)):
            self._site(S.CALL, tname, ("", "", ""))
        for c in children:
            if c.type == "type_arguments":
                self._types(c.children)
            elif c.type == "arguments":
                self._args(c)


def _ctor_type(words: Sequence[str]) -> str:
    """The type a call chain constructs: ``T``, ``T.named``, ``p.T``, ``p.T.named`` → ``T`` or ``p.T``; else ""."""
    if not words:
        return ""
    if words[0][:1].isupper() and len(words) <= 2:
        return words[0]
    if len(words) in (2, 3) and words[0][:1].islower() and words[1][:1].isupper():
        return f"{words[0]}.{words[1]}"
    return ""


def _unquote(text: str) -> str:
    text = text.strip()
    for q in ('"""', "'''", '"', "'"):
        if text.startswith(q) and text.endswith(q) and len(text) >= 2 * len(q):
            return text[len(q) : -len(q)]
    return text


def _walk(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(cur.named_children)
    return out
