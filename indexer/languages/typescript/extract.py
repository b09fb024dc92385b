"""TypeScript and JavaScript extraction with tree-sitter: declarations, a module symbol, reference sites.

``.ts .mts .cts`` parse with the typescript grammar; ``.tsx`` and every
JavaScript extension with the tsx grammar (JSX is legal there). Declarations
are qualified by the module name plus their nesting (``src.cache.Cache.get``);
overload signatures and the implementation of one function are a single
declaration spanning all of them. Local variables inside function bodies are
not declarations; nested functions and classes are.

A file with syntax errors is still extracted (tree-sitter recovers); its
reason names the first error, so a partly broken file keeps what parsed.
What the grammar lacks (variance annotations, a generic call signature
after another member) is made parseable first (``variance``), not counted
as an error.
"""

from __future__ import annotations

import msgspec
import tree_sitter_typescript
from tree_sitter import Language, Node

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.syntax import extract_tree
from indexer.languages.typescript import sites as S
from indexer.languages.typescript.modules import language_of, module_name
from indexer.languages.typescript.variance import prepare, restore

EXTRACTOR_VERSION = "typescript-ts-5"

_TS = Language(tree_sitter_typescript.language_typescript())
_TSX = Language(tree_sitter_typescript.language_tsx())
_TS_ONLY = (".ts", ".mts", ".cts")

_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_signature"})
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})
_METHODS = frozenset({"method_definition", "method_signature", "abstract_method_signature"})
_PROPERTIES = frozenset({"public_field_definition", "property_signature"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CODE_VALUES = _FUNCTION_VALUES | {"class"}
# Expressions that only restate their operand's value: `(f)`, `f as T`, `f satisfies T`, `f!`, `<T>f`.
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression", "type_assertion"}
)
_CALLABLE_TYPES = frozenset({"function_type", "constructor_type"})
_NAME_NODES = frozenset({"identifier", "property_identifier", "type_identifier", "private_property_identifier"})
_MAX_SIGNATURE = 240
_MAX_DOC = 240


def grammar_for(path: str) -> Language:
    """TypeScript for .ts/.mts/.cts, TSX (which also parses JavaScript) for the rest."""
    return _TS if path.endswith(_TS_ONLY) else _TSX


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _string_value(node: Node | None) -> str:
    if node is None:
        return ""
    return "".join(_text(c) for c in node.named_children if c.type == "string_fragment")


def _collapse(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def jsdoc_summary(comment: str) -> str:
    """The first paragraph of a ``/** ... */`` comment, tags left out."""
    if not comment.startswith("/**"):
        return ""
    lines: list[str] = []
    for raw in comment[3:-2].splitlines():
        line = raw.strip().lstrip("*").strip()
        if line.startswith("@"):
            break
        if not line:
            if lines:
                break
            continue
        lines.append(line)
    return _collapse(" ".join(lines), _MAX_DOC)


class _Extractor:
    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.module = module_name(path)
        self.source = source
        self.symbols: list[SymbolFact] = []
        self.index: dict[tuple[str, str], int] = {}  # (qn, kind) -> position in symbols
        self.sites: list[Site] = []
        self.local_exports: set[str] = set()
        # Callable variables (docs/surface.md §11.9): the module's type aliases and interfaces whose values are
        # callable, and the variables whose declared type names one of the file's own declarations.
        self.callable_types: set[str] = set()
        self.typed_by: list[tuple[int, str, bool]] = []  # (symbol index, type name, `typeof`)

    # -- declarations ------------------------------------------------------------------------------

    def _doc(self, node: Node) -> str:
        anchor = node
        while anchor.parent is not None and anchor.parent.type in ("export_statement", "ambient_declaration"):
            anchor = anchor.parent
        prev = anchor.prev_named_sibling
        if prev is not None and prev.type == "comment" and prev.end_point[0] >= anchor.start_point[0] - 1:
            return jsdoc_summary(_text(prev))
        return ""

    def _signature(self, node: Node, kind: str, name: str) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                vbody = value.child_by_field_name("body")
                head = self.source[value.start_byte : vbody.start_byte if vbody is not None else value.end_byte]
                return _collapse(f"{name} = {head.decode('utf-8', 'replace')}".rstrip("{ "), _MAX_SIGNATURE)
            end = value.start_byte if value is not None else node.end_byte
            word = node.parent.children[0] if node.parent is not None and node.parent.children else None
            prefix = _text(word) + " " if word is not None and word.type in ("const", "let", "var") else ""
            text = prefix + self.source[node.start_byte : end].decode("utf-8", "replace")
            return _collapse(text.rstrip().rstrip("=").rstrip(), _MAX_SIGNATURE)
        text = self.source[node.start_byte : end].decode("utf-8", "replace").rstrip().rstrip("=;{").rstrip()
        return _collapse(text, _MAX_SIGNATURE)

    def _add(
        self, node: Node, name: str, qn: str, kind: str, container: str, exported: bool, span: Node | None = None
    ) -> None:
        span = span or node
        key = (qn, kind)
        prior = self.index.get(key)
        if prior is not None:
            # An overload group (signatures, then the implementation): one declaration spanning all of
            # them, described by the implementation when there is one.
            old = self.symbols[prior]
            has_body = node.child_by_field_name("body") is not None
            self.symbols[prior] = SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=old.start_line,
                start_col=old.start_col,
                end_line=span.end_point[0] + 1,
                end_col=span.end_point[1],
                signature=self._signature(node, kind, name) if has_body else old.signature,
                doc=old.doc or self._doc(node),
                exported=old.exported or exported,
                container=container,
            )
            return
        self.index[key] = len(self.symbols)
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=span.start_point[0] + 1,
                start_col=span.start_point[1],
                end_line=span.end_point[0] + 1,
                end_col=span.end_point[1],
                signature=self._signature(node, kind, name),
                doc=self._doc(node),
                exported=exported,
                container=container,
            )
        )

    def run(self, root: Node) -> None:
        self.symbols.append(
            SymbolFact(
                name=self.module.rsplit(".", 1)[-1],
                qualified_name=self.module,
                kind="module",
                start_line=1,
                start_col=0,
                end_line=root.end_point[0] + 1,
                end_col=root.end_point[1],
                exported=True,
            )
        )
        self.index[(self.module, "module")] = 0
        for child in root.named_children:
            self.statement(child, self.module, "", top=True, exported=False)
        self._resolve_callable_types()
        if self.local_exports:
            for i, s in enumerate(self.symbols):
                if s.container == "" and s.kind != "module" and not s.exported and s.name in self.local_exports:
                    self.symbols[i] = msgspec.structs.replace(s, exported=True)

    def statement(self, node: Node, scope: str, source: str, *, top: bool, exported: bool) -> None:
        """A statement at module, namespace or function level."""
        t = node.type
        container = "" if scope == self.module else scope
        if t == "export_statement":
            self.export(node, scope, source, top=top)
            return
        if t == "ambient_declaration":
            for child in node.named_children:
                if child.type != "module":  # `declare module "x" {}` describes another module
                    self.statement(child, scope, source, top=top, exported=exported)
            return
        if (
            t == "expression_statement"
            and node.named_child_count == 1
            and node.named_children[0].type == "internal_module"
        ):
            self.statement(node.named_children[0], scope, source, top=top, exported=exported)
            return
        name_node = node.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else ""
        if t in _FUNCTIONS and name:
            qn = f"{scope}.{name}"
            self._add(node, name, qn, "function", container, exported)
            self.walk_children(node, qn, skip=name_node)
        elif t in _CLASSES and name:
            self.class_like(node, name, scope, container, exported, "class")
        elif t == "interface_declaration" and name:
            self.class_like(node, name, scope, container, exported, "interface")
            body = node.child_by_field_name("body")
            if _has_call_signature(body):
                self._callable_type(f"{scope}.{name}", "interface", name, scope)
        elif t == "type_alias_declaration" and name:
            qn = f"{scope}.{name}"
            self._add(node, name, qn, "type", container, exported)
            value = _unwrap(node.child_by_field_name("value"))
            if value is not None and (
                value.type in _CALLABLE_TYPES or (value.type == "object_type" and _has_call_signature(value))
            ):
                self._callable_type(qn, "type", name, scope)
            self.walk_children(node, qn, skip=name_node)
        elif t == "enum_declaration" and name:
            qn = f"{scope}.{name}"
            self._add(node, name, qn, "enum", container, exported)
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else ():
                m_name = member.child_by_field_name("name") if member.type == "enum_assignment" else member
                if m_name is not None and m_name.type in ("property_identifier", "string"):
                    m = _string_value(m_name) if m_name.type == "string" else _text(m_name)
                    self._add(member, m, f"{qn}.{m}", "enum_member", qn, exported)
                    value = member.child_by_field_name("value") if member.type == "enum_assignment" else None
                    if value is not None:
                        self.expr(value, qn)
        elif t in ("internal_module", "module") and name_node is not None and name_node.type != "string":
            qn = f"{scope}.{name}"
            self._add(node, name.rsplit(".", 1)[-1], qn, "namespace", container, exported)
            body = node.child_by_field_name("body")
            for child in body.named_children if body is not None else ():
                self.statement(child, qn, qn, top=True, exported=False)
        elif t in ("lexical_declaration", "variable_declaration") and top:
            for decl in node.named_children:
                if decl.type != "variable_declarator":
                    continue
                d_name = decl.child_by_field_name("name")
                value = decl.child_by_field_name("value")
                if d_name is None or d_name.type != "identifier":
                    self.walk_children(decl, source)
                    continue
                n = _text(d_name)
                kind = "function" if value is not None and value.type in _FUNCTION_VALUES else "variable"
                qn = f"{scope}.{n}"
                self._add(decl, n, qn, kind, container, exported)
                if kind == "variable":
                    self._callable_variable(decl, value, named=scope == self.module)
                self.walk_children(decl, qn, skip=d_name)
        elif t in ("import_statement",):
            self.import_statement(node)
        else:
            self.walk(node, source)

    def _callable_variable(self, decl: Node, value: Node | None, *, named: bool) -> None:
        """Mark the variable just added callable when the file shows it holds a function or a class.

        Its value is a function or class expression behind parentheses, ``as``, ``satisfies`` or ``!``; or a
        call handed a function or class expression (a factory or a wrapper: ``$constructor("X", (inst) => …)``,
        ``memo(() => …)``); or its declared type is a function or constructor type, or names a type alias or
        interface of this file whose values are callable, or is ``typeof`` a function or class of this file.
        A call handed no code whose type is declared elsewhere (``x: Imported = make()``) is not known here.
        """
        index = len(self.symbols) - 1
        inner = value
        while inner is not None and inner.type in _TRANSPARENT:
            inner = next((c for c in inner.named_children if c.type != "type_arguments"), None)
        callable_value = inner is not None and (
            inner.type in _CODE_VALUES
            or (inner.type == "call_expression" and any(a.type in _CODE_VALUES for a in _arguments(inner)))
        )
        annotation = decl.child_by_field_name("type")
        declared = annotation.named_children[0] if annotation is not None and annotation.named_children else None
        if callable_value or _unwrap_type(declared) in _CALLABLE_TYPES:
            self.symbols[index] = msgspec.structs.replace(self.symbols[index], callable=True)
        elif named and declared is not None:
            head = declared.child_by_field_name("name") if declared.type == "generic_type" else declared
            if head is not None and head.type == "type_identifier":
                self.typed_by.append((index, _text(head), False))
            elif head is not None and head.type == "type_query" and head.named_children:
                query = head.named_children[0]
                if query.type == "identifier":
                    self.typed_by.append((index, _text(query), True))

    def _callable_type(self, qn: str, kind: str, name: str, scope: str) -> None:
        """A type alias or interface whose values are callable: marked so, and known by name to this file."""
        index = self.index.get((qn, kind))
        if index is not None:
            self.symbols[index] = msgspec.structs.replace(self.symbols[index], callable=True)
        if scope == self.module:
            self.callable_types.add(name)

    def _resolve_callable_types(self) -> None:
        """Variables typed by this file's own callable types, or by ``typeof`` its functions and classes."""
        top = {s.name: s.kind for s in self.symbols if s.container == ""}
        for index, name, query in self.typed_by:
            if (top.get(name) in ("function", "class")) if query else name in self.callable_types:
                self.symbols[index] = msgspec.structs.replace(self.symbols[index], callable=True)

    def class_like(self, node: Node, name: str, scope: str, container: str, exported: bool, kind: str) -> None:
        qn = f"{scope}.{name}"
        self._add(node, name, qn, kind, container, exported)
        for child in node.named_children:
            if child.type == "class_heritage":
                for clause in child.named_children:
                    site = S.EXTENDS if clause.type == "extends_clause" else S.IMPLEMENTS
                    for base in clause.named_children:
                        if base.type == "type_arguments":
                            self.walk(base, qn)
                        else:
                            self.chain_site(site, base, qn)
            elif child.type == "extends_type_clause":
                for base in child.named_children:
                    self.chain_site(S.EXTENDS, base, qn)
            elif child.type == "type_parameters":
                self.walk(child, qn)
        body = node.child_by_field_name("body")
        for member in body.named_children if body is not None else ():
            m_name_node = member.child_by_field_name("name")
            if member.type in _METHODS | _PROPERTIES and m_name_node is not None:
                m_name = _text(m_name_node) if m_name_node.type != "string" else _string_value(m_name_node)
                private = m_name.startswith("#") or any(
                    c.type == "accessibility_modifier" and _text(c) == "private" for c in member.children
                )
                m_kind = "method" if member.type in _METHODS else "property"
                if m_kind == "property":
                    value = member.child_by_field_name("value")
                    if value is not None and value.type in _FUNCTION_VALUES:
                        m_kind = "method"
                m_qn = f"{qn}.{m_name}"
                self._add(member, m_name, m_qn, m_kind, qn, exported and not private)
                self.walk_children(member, m_qn, skip=m_name_node)
            else:
                self.walk(member, qn)

    # -- imports and exports ------------------------------------------------------------------------

    def _site(self, kind: str, name: str, at: Node, enclosing: str, extra: tuple[str, ...]) -> None:
        self.sites.append(
            Site(
                kind,
                name,
                at.start_point[0] + 1,
                at.start_point[1],
                "" if enclosing == self.module else enclosing,
                extra,
            )
        )

    def import_statement(self, node: Node) -> None:
        spec = _string_value(node.child_by_field_name("source"))
        if any(c.type == "type" and not c.is_named for c in node.children):
            pass  # `import type`: still a binding of names to declarations
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:
            require = next((c for c in node.named_children if c.type == "import_require_clause"), None)
            if require is not None and require.named_child_count:
                ident = require.named_children[0]
                self._site(
                    S.IMPORT, "*", ident, self.module, (spec or _string_value(require.named_children[-1]), _text(ident))
                )
            return
        for part in clause.named_children:
            if part.type == "identifier":
                self._site(S.IMPORT, "default", part, self.module, (spec, _text(part)))
            elif part.type == "namespace_import":
                ident = part.named_children[-1] if part.named_child_count else part
                self._site(S.IMPORT, "*", ident, self.module, (spec, _text(ident)))
            elif part.type == "named_imports":
                for s in part.named_children:
                    if s.type != "import_specifier":
                        continue
                    name = s.child_by_field_name("name")
                    alias = s.child_by_field_name("alias")
                    if name is None:
                        continue
                    imported = _string_value(name) if name.type == "string" else _text(name)
                    self._site(S.IMPORT, imported, name, self.module, (spec, _text(alias or name)))

    def export(self, node: Node, scope: str, source: str, *, top: bool) -> None:
        decl = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if decl is not None:
            self.statement(decl, scope, source, top=top, exported=True)
            name = decl.child_by_field_name("name")
            if is_default and name is not None:
                self.local_exports.add(_text(name))
                self._site(S.EXPORT, "default", name, self.module, (_text(name),))
            return
        spec_node = node.child_by_field_name("source")
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if spec_node is not None:
            spec = _string_value(spec_node)
            if clause is None:
                ns = next((c for c in node.named_children if c.type == "namespace_export"), None)
                ident = ns.named_children[-1] if ns is not None and ns.named_child_count else spec_node
                self._site(S.REEXPORT, _text(ident) if ns is not None else "*", ident, self.module, (spec, "*"))
                return
            for s in clause.named_children:
                name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                if name is not None:
                    self._site(S.REEXPORT, _text(alias or name), name, self.module, (spec, _text(name)))
            return
        if clause is not None:
            for s in clause.named_children:
                name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                if name is not None:
                    self.local_exports.add(_text(name))
                    self._site(S.EXPORT, _text(alias or name), name, self.module, (_text(name),))
            return
        value = node.child_by_field_name("value")
        if value is not None:
            # `export default <expression>`: a plain name exports that binding, anything else is code
            if value.type == "identifier":
                self.local_exports.add(_text(value))
                self._site(S.EXPORT, "default", value, self.module, (_text(value),))
            else:
                self.expr(value, source or self.module)
        else:
            for child in node.named_children:
                if child.type in _CLASSES or child.type in _FUNCTIONS or child.type.endswith("_declaration"):
                    self.statement(child, scope, source, top=top, exported=True)

    # -- reference sites ----------------------------------------------------------------------------

    def chain_of(self, node: Node) -> tuple[str, Node] | None:
        """(dotted chain, node of its last name) of a name chain; None when it is not one."""
        t = node.type
        if t in ("identifier", "type_identifier", "this", "super", "property_identifier"):
            return _text(node), node
        if t in ("member_expression", "nested_type_identifier", "nested_identifier"):
            obj = node.child_by_field_name("object") or node.child_by_field_name("module") or node.named_children[0]
            prop = node.child_by_field_name("property") or node.child_by_field_name("name") or node.named_children[-1]
            if prop is None or prop.type not in _NAME_NODES:
                return None
            head = self.chain_of(obj)
            if head is None:
                self.expr(obj, self._current)
                return f"?.{_text(prop)}", prop
            return f"{head[0]}.{_text(prop)}", prop
        if t == "generic_type":
            inner = node.named_children[0] if node.named_child_count else None
            for rest in node.named_children[1:]:
                self.walk(rest, self._current)
            return self.chain_of(inner) if inner is not None else None
        return None

    _current = ""

    def chain_site(self, kind: str, node: Node, enclosing: str) -> None:
        saved, self._current = self._current, enclosing
        try:
            found = self.chain_of(node)
            if found is None:
                self.expr(node, enclosing)
                return
            chain, last = found
            if chain in ("this", "super") and kind != S.CALL:
                return
            self._site(kind, chain.rsplit(".", 1)[-1], last, enclosing, (chain,))
        finally:
            self._current = saved

    def expr(self, node: Node, enclosing: str) -> None:
        self.walk(node, enclosing)

    def walk_children(self, node: Node, enclosing: str, skip: Node | None = None) -> None:
        for child in node.named_children:
            if skip is not None and child.start_byte == skip.start_byte and child.type == skip.type:
                continue
            self.walk(child, enclosing)

    def walk(self, node: Node, enclosing: str) -> None:
        """Reference sites under ``node``; nested declarations become symbols."""
        t = node.type
        if (
            t in _FUNCTIONS
            or t in _CLASSES
            or t in ("interface_declaration", "type_alias_declaration", "enum_declaration", "internal_module")
        ):
            scope = enclosing or self.module
            self.statement(node, scope, enclosing, top=False, exported=False)
            return
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None:
                if fn.type == "import":  # dynamic import(): no binding
                    pass
                else:
                    self.chain_site(S.CALL, fn, enclosing)
            args = node.child_by_field_name("arguments")
            if args is not None:
                self.arguments(args, enclosing)
            return
        if t == "new_expression":
            ctor = node.child_by_field_name("constructor")
            if ctor is not None:
                self.chain_site(S.NEW, ctor, enclosing)
            args = node.child_by_field_name("arguments")
            if args is not None:
                self.arguments(args, enclosing)
            return
        if t in ("type_identifier", "nested_type_identifier", "generic_type"):
            self.chain_site(S.TYPE, node, enclosing)
            return
        if t == "type_parameter":
            name = node.child_by_field_name("name")
            self.walk_children(node, enclosing, skip=name)
            return
        if t in ("import_statement", "export_statement"):
            self.statement(node, self.module, enclosing, top=False, exported=False)
            return
        if t in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                name = decl.child_by_field_name("name")
                self.walk_children(
                    decl, enclosing, skip=name if name is not None and name.type == "identifier" else None
                )
            return
        for child in node.named_children:
            self.walk(child, enclosing)

    def arguments(self, args: Node, enclosing: str) -> None:
        for arg in args.named_children:
            if arg.type in ("identifier", "member_expression"):
                saved, self._current = self._current, enclosing
                try:
                    found = self.chain_of(arg)
                finally:
                    self._current = saved
                if found is not None and found[0] not in ("this", "undefined"):
                    self._site(S.ARG, found[0].rsplit(".", 1)[-1], found[1], enclosing, (found[0],))
                    continue
            self.walk(arg, enclosing)


def _unwrap(node: Node | None) -> Node | None:
    """A type behind parentheses (``((x: T) => U)``)."""
    while node is not None and node.type == "parenthesized_type" and node.named_children:
        node = node.named_children[0]
    return node


def _unwrap_type(node: Node | None) -> str:
    """The node type of a type behind parentheses, or "" for none."""
    inner = _unwrap(node)
    return inner.type if inner is not None else ""


def _has_call_signature(body: Node | None) -> bool:
    """Whether an interface body or object type has a call or construct signature (its values are callable)."""
    return body is not None and any(m.type in ("call_signature", "construct_signature") for m in body.named_children)


def _arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return list(args.named_children) if args is not None else []


def _walk(path: str, source: bytes, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
    ex = _Extractor(path, source)
    ex.run(root)
    return tuple(ex.symbols), tuple(ex.sites)


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one TypeScript or JavaScript file (partial on a syntax error)."""
    grammar = grammar_for(path)
    parsed, spans = prepare(grammar, source, jsx=grammar is _TSX)  # what the grammar lacks; texts keep it
    return extract_tree(
        grammar,
        language_of(path),
        path,
        parsed,
        package,
        lambda root, text: _walk(path, restore(text, source, spans), root),
    )
