"""Go extraction: the declarations and reference sites of one file, from its tree-sitter tree.

Qualified names follow the Go convention of the facts model: package-level
names are bare (``Parse``), methods are ``Type.Method`` (the receiver type,
pointer and type parameters dropped), struct fields ``Type.Field`` (an
embedded field is named by its type, a field of an unnamed nested struct is
``Type.Outer.Inner``), interface methods ``Iface.Method``.

The module symbol: Go code lives in declarations, so a file gets a ``module``
symbol (qualified name = the path with ``/`` turned into ``.`` and ``.go``
dropped) only when it has package-level uses that no declaration owns, such
as ``var _ Iface = (*T)(nil)``. That is the lazy module symbol of the facts
model, decided per file because extraction is per file.

Duplicate qualified names in one file (several ``init`` functions) keep the
first as it is and name the later ones ``init#2``, ``init#3``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import tree_sitter_go
from tree_sitter import Language, Node

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.go import sites as S
from indexer.languages.go.modules import LANGUAGE, module_qualified_name
from indexer.languages.syntax import collapse as _collapse
from indexer.languages.syntax import extract_tree
from indexer.languages.syntax import node_text as _text

EXTRACTOR_VERSION = "go-ts-4"

_TS_LANGUAGE = Language(tree_sitter_go.language())
# Nodes that introduce names bound inside a function body.
_LOCAL_BINDERS = frozenset({"short_var_declaration", "range_clause", "receive_statement", "type_switch_statement"})


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one Go file; a syntax error makes it partial (see extract_tree)."""
    return extract_tree(
        _TS_LANGUAGE, LANGUAGE, path, source, package, lambda root, text: _Extractor(text, path).run(root)
    )


def _exported(name: str) -> bool:
    return name[:1].isupper()


def type_name_of(node: Node | None) -> str:
    """The named type a type expression denotes: ``*T``, ``T[K]`` → ``T``; ``pkg.T`` → ``pkg.T``; else ""."""
    while node is not None and node.type in ("pointer_type", "parenthesized_type", "generic_type"):
        node = node.named_children[0] if node.type != "generic_type" else node.child_by_field_name("type")
    if node is None:
        return ""
    if node.type == "type_identifier":
        return _text(node)
    if node.type == "qualified_type":
        return f"{_text(node.child_by_field_name('package'))}.{_text(node.child_by_field_name('name'))}"
    return ""


@dataclass
class _Function:
    """Names bound inside one function (coarse: for the whole body) and the types the syntax gives them."""

    names: set[str] = field(default_factory=set)
    types: dict[str, str] = field(default_factory=dict)


class _Extractor:
    def __init__(self, source: bytes, path: str) -> None:
        self.source = source
        self.path = path
        self.symbols: list[SymbolFact] = []
        self.sites: list[Site] = []
        self.seen_qn: dict[str, int] = {}
        self.enclosing = ""
        self.fn: _Function | None = None
        self.needs_module = False

    def run(self, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
        for child in root.named_children:
            kind = child.type
            if kind == "import_declaration":
                self._imports(child)
            elif kind == "function_declaration":
                self._function(child, child)
            elif kind == "method_declaration":
                self._method(child)
            elif kind == "type_declaration":
                for spec in child.named_children:
                    if spec.type in ("type_spec", "type_alias"):
                        self._type_spec(spec, child)
            elif kind in ("var_declaration", "const_declaration"):
                self._value_decl(child, "var" if kind == "var_declaration" else "const")
        if self.needs_module or any(s.enclosing == "" and s.kind != S.IMPORT for s in self.sites):
            self.symbols.insert(0, self._module_symbol(root))
        self.sites.sort(key=lambda s: (s.line, s.col))
        return tuple(self.symbols), tuple(self.sites)

    def _module_symbol(self, root: Node) -> SymbolFact:
        qn = module_qualified_name(self.path)
        return SymbolFact(
            name=qn.rsplit(".", 1)[-1],
            qualified_name=qn,
            kind="module",
            start_line=1,
            start_col=0,
            end_line=root.end_point[0] + 1,
            end_col=root.end_point[1],
        )

    # -- declarations ---------------------------------------------------------------------------

    def _doc(self, decl: Node) -> str:
        """The ``//`` comment lines directly above a declaration, first paragraph, on one line."""
        lines: list[str] = []
        prev = decl.prev_sibling
        expect_row = decl.start_point[0] - 1
        while prev is not None and prev.type == "comment" and prev.end_point[0] == expect_row:
            text = _text(prev)
            if text.startswith("//"):
                lines.append(text[2:].strip())
            elif text.startswith("/*"):
                lines.append(text[2:-2].strip())
            expect_row = prev.start_point[0] - 1
            prev = prev.prev_sibling
        lines.reverse()
        para: list[str] = []
        for line in lines:
            if not line:
                if para:
                    break
                continue
            para.append(line)
        return _collapse(" ".join(para))

    def _declare(
        self, name: str, qn: str, kind: str, span: Node, signature: str, doc: str = "", container: str = ""
    ) -> str:
        n = self.seen_qn.get(qn, 0) + 1
        self.seen_qn[qn] = n
        if n > 1:
            qn = f"{qn}#{n}"
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=span.start_point[0] + 1,
                start_col=span.start_point[1],
                end_line=span.end_point[0] + 1,
                end_col=span.end_point[1],
                signature=_collapse(signature),
                doc=doc,
                exported=_exported(name),
                container=container,
            )
        )
        return qn

    def _signature_of_func(self, node: Node, prefix: str) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        return prefix + self.source[node.start_byte : end].decode("utf-8", "replace").strip()[len(prefix) :]

    def _function(self, node: Node, doc_node: Node) -> None:
        name = _text(node.child_by_field_name("name"))
        qn = self._declare(name, name, "func", node, self._signature_of_func(node, ""), self._doc(doc_node))
        self._body(node, qn, receiver=None)

    def _method(self, node: Node) -> None:
        name = _text(node.child_by_field_name("name"))
        receiver = node.child_by_field_name("receiver")
        recv_decl = receiver.named_children[0] if receiver is not None and receiver.named_children else None
        recv_type = type_name_of(recv_decl.child_by_field_name("type")) if recv_decl is not None else ""
        qn = self._declare(
            name,
            f"{recv_type}.{name}" if recv_type else name,
            "method",
            node,
            self._signature_of_func(node, ""),
            self._doc(node),
            container=recv_type,
        )
        self._body(node, qn, receiver=recv_decl)

    def _type_spec(self, spec: Node, decl: Node) -> None:
        name_node = spec.child_by_field_name("name")
        name = _text(name_node)
        typ = spec.child_by_field_name("type")
        doc = self._doc(spec if len(decl.named_children) > 1 else decl)
        if spec.type == "type_alias":
            qn = self._declare(name, name, "alias", spec, f"type {name} = {_text(typ)}", doc)
            self._in(qn, None, lambda: self._type(typ))
            return
        shape = typ.type if typ is not None else ""
        summary = {"struct_type": "struct", "interface_type": "interface"}.get(shape, _text(typ))
        tparams = spec.child_by_field_name("type_parameters")
        qn = self._declare(name, name, "type", spec, f"type {name}{_text(tparams)} {summary}", doc)
        fn = _Function()
        if tparams is not None:
            fn.names.update(self._param_names(tparams))
        self.fn = fn
        if tparams is not None:
            self._in(qn, fn, lambda: self._type(tparams))
        if typ is not None and typ.type == "struct_type":
            self._struct(typ, qn, fn)
        elif typ is not None and typ.type == "interface_type":
            self._interface(typ, qn, fn)
        else:
            self._in(qn, fn, lambda: self._type(typ))
        self.fn = None

    def _struct(self, struct: Node, owner: str, fn: _Function) -> None:
        for flist in struct.named_children:
            for fdecl in flist.named_children:
                if fdecl.type != "field_declaration":
                    continue
                names = [c for c in fdecl.children_by_field_name("name") if c.is_named]
                ftype = fdecl.child_by_field_name("type")
                if not names:  # embedded: the field is named by its type
                    tname = type_name_of(ftype).rsplit(".", 1)[-1]
                    if tname:
                        self._declare(
                            tname, f"{owner}.{tname}", "field", fdecl, _text(ftype), self._doc(fdecl), container=owner
                        )
                    self._in(owner, fn, lambda t=ftype: self._type(t, embed=True))
                    continue
                fqns = [
                    self._declare(
                        _text(n),
                        f"{owner}.{_text(n)}",
                        "field",
                        fdecl,
                        f"{_text(n)} {_text(ftype)}",
                        self._doc(fdecl),
                        container=owner,
                    )
                    for n in names
                ]
                for fqn in fqns[:1]:  # the type is one use, owned by the first name (as go/types sees it)
                    inner = ftype
                    while inner is not None and inner.type in ("pointer_type", "slice_type", "array_type"):
                        inner = inner.child_by_field_name("element") or (
                            inner.named_children[-1] if inner.named_children else None
                        )
                    if inner is not None and inner.type == "struct_type":
                        self._struct(inner, fqn, fn)
                    else:
                        self._in(fqn, fn, lambda t=ftype: self._type(t))

    def _interface(self, iface: Node, owner: str, fn: _Function) -> None:
        for elem in iface.named_children:
            if elem.type == "method_elem":
                mname = _text(elem.child_by_field_name("name"))
                mqn = self._declare(
                    mname, f"{owner}.{mname}", "method", elem, _text(elem), self._doc(elem), container=owner
                )
                inner = _Function(set(fn.names))
                for part in ("parameters", "result"):
                    node = elem.child_by_field_name(part)
                    if node is not None:
                        self._in(mqn, inner, lambda n=node: self._type(n))
            elif elem.type == "type_elem":
                self._in(owner, fn, lambda e=elem: self._type(e, embed=len(e.named_children) == 1))

    def _value_decl(self, decl: Node, kind: str) -> None:
        specs = [c for c in decl.named_children if c.type in ("var_spec", "const_spec")]
        for spec_list in (c for c in decl.named_children if c.type in ("var_spec_list", "const_spec_list")):
            specs.extend(c for c in spec_list.named_children if c.type in ("var_spec", "const_spec"))
        for spec in specs:
            names = [c for c in spec.children_by_field_name("name") if c.is_named]
            typ = spec.child_by_field_name("type")
            value = spec.child_by_field_name("value")
            first = ""
            doc = self._doc(spec if len(specs) > 1 else decl)
            values = value.named_children if value is not None and value.type == "expression_list" else [value]
            for i, n in enumerate(names):
                name = _text(n)
                if name == "_":
                    continue
                sig = f"{kind} {name}" + (f" {_text(typ)}" if typ is not None else "")
                if kind == "const" and value is not None and typ is None and len(names) == 1:
                    sig += f" = {_text(value)}"
                qn = self._declare(name, name, kind, spec, sig, doc)
                held = values[i] if len(values) == len(names) else None
                # a func literal, or a declared func type: the variable holds a function (records.Symbol.callable)
                if (typ is not None and typ.type == "function_type") or (
                    held is not None and held.type == "func_literal"
                ):
                    self.symbols[-1] = msgspec.structs.replace(self.symbols[-1], callable=True)
                first = first or qn
            if not first:
                self.needs_module = True
            fn = _Function()
            if typ is not None:
                self._in(first, fn, lambda t=typ: self._type(t))
            if value is not None:
                self._in(first, fn, lambda v=value: self._locals_and_expr(v))

    # -- bodies -----------------------------------------------------------------------------------

    def _in(self, enclosing: str, fn: _Function | None, work: object) -> None:
        saved = self.enclosing, self.fn
        self.enclosing, self.fn = enclosing, fn
        try:
            work()  # type: ignore[operator]
        finally:
            self.enclosing, self.fn = saved

    def _param_names(self, node: Node) -> set[str]:
        out: set[str] = set()
        for p in node.named_children:
            for n in p.children_by_field_name("name"):
                out.add(_text(n))
        return out

    def _body(self, node: Node, qn: str, receiver: Node | None) -> None:
        fn = _Function()
        self._collect_locals(node, fn)
        if receiver is not None:
            rname = _text(receiver.child_by_field_name("name"))
            rtype = receiver.child_by_field_name("type")
            if rname:
                fn.names.add(rname)
                fn.types[rname] = type_name_of(rtype)
            # the receiver's type parameters (func (s *Stack[T]) ...) are local names too
            inner = rtype
            while inner is not None and inner.type == "pointer_type":
                inner = inner.named_children[0] if inner.named_children else None
            if inner is not None and inner.type == "generic_type":
                args = inner.child_by_field_name("type_arguments")
                for a in args.named_children if args is not None else ():
                    fn.names.add(_text(a).strip())
            self._in(qn, fn, lambda: self._type(rtype))
        for part in ("type_parameters", "parameters", "result"):
            child = node.child_by_field_name(part)
            if child is not None:
                self._in(qn, fn, lambda c=child: self._type(c))
        body = node.child_by_field_name("body")
        if body is not None:
            self._in(qn, fn, lambda: self._expr(body))

    def _collect_locals(self, node: Node, fn: _Function) -> None:
        """Every name bound anywhere inside a function (Go scoping is by block; coarse is enough here)."""
        stack = [node]
        while stack:
            cur = stack.pop()
            t = cur.type
            if t in ("parameter_declaration", "variadic_parameter_declaration", "type_parameter_declaration"):
                ptype = type_name_of(cur.child_by_field_name("type"))
                for n in cur.children_by_field_name("name"):
                    fn.names.add(_text(n))
                    if ptype:
                        fn.types[_text(n)] = ptype
            elif t in ("var_spec", "const_spec") and cur is not node:
                vtype = type_name_of(cur.child_by_field_name("type"))
                for n in cur.children_by_field_name("name"):
                    fn.names.add(_text(n))
                    if vtype:
                        fn.types[_text(n)] = vtype
            elif t == "type_spec" and cur is not node:
                fn.names.add(_text(cur.child_by_field_name("name")))
            elif t in _LOCAL_BINDERS:
                target = cur.child_by_field_name("left") or cur.child_by_field_name("alias")
                if target is not None:
                    lefts = [c for c in target.named_children if c.type == "identifier"]
                    for n in lefts:
                        fn.names.add(_text(n))
                    if t == "short_var_declaration" and len(lefts) == 1:
                        right = cur.child_by_field_name("right")
                        values = right.named_children if right is not None else []
                        if len(values) == 1:
                            made = _constructed_type(values[0])
                            if made:
                                fn.types[_text(lefts[0])] = made
            stack.extend(cur.named_children)

    def _locals_and_expr(self, node: Node) -> None:
        if self.fn is not None:
            self._collect_locals(node, self.fn)
        self._expr(node)

    # -- sites -----------------------------------------------------------------------------------

    def _site(self, kind: str, ident: Node, extra: tuple[str, ...] = ()) -> None:
        row, col = ident.start_point
        self.sites.append(Site(kind, _text(ident), row + 1, col, self.enclosing, extra))

    def _is_local(self, name: str) -> bool:
        return self.fn is not None and name in self.fn.names

    def _imports(self, decl: Node) -> None:
        stack = list(decl.named_children)
        while stack:
            cur = stack.pop(0)
            if cur.type == "import_spec_list":
                stack[:0] = list(cur.named_children)
            elif cur.type == "import_spec":
                path_node = cur.child_by_field_name("path")
                alias = _text(cur.child_by_field_name("name"))
                if path_node is not None:
                    row, col = path_node.start_point
                    self.sites.append(Site(S.IMPORT, _text(path_node).strip('"`'), row + 1, col, "", (alias,)))

    def _qualifier(self, operand: Node) -> tuple[str, str, str]:
        """(qualifier, binding, qualifier type) of a selector's operand."""
        if operand.type == "identifier":
            name = _text(operand)
            if self._is_local(name):
                assert self.fn is not None
                return name, S.LOCAL, self.fn.types.get(name, "")
            return name, S.OUTER, ""
        return "?", S.EXPR, ""

    def _name_use(self, kind: str, node: Node) -> None:
        """A use of ``node`` (an identifier or a selector) as a callee, argument or plain reference."""
        if node.type == "identifier":
            name = _text(node)
            if not self._is_local(name) and name not in S.PREDECLARED:
                self._site(kind, node, ("", "", ""))
        elif node.type == "selector_expression":
            operand = node.child_by_field_name("operand")
            fld = node.child_by_field_name("field")
            if operand is None or fld is None:
                return
            self._site(kind, fld, self._qualifier(operand))
            if operand.type != "identifier":
                self._expr(operand)
        else:
            self._expr(node)

    def _expr(self, node: Node | None) -> None:
        if node is None:
            return
        t = node.type
        if t in ("identifier", "selector_expression"):
            self._name_use(S.REF, node)
            return
        if t == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type in ("index_expression", "generic_type"):
                inner = callee.child_by_field_name("operand") or callee.child_by_field_name("type")
                for c in callee.named_children:
                    if not _same(c, inner):
                        self._type(c) if callee.type == "generic_type" else self._expr(c)
                callee = inner
            if callee is not None:
                self._name_use(S.CALL, callee)
            args = node.child_by_field_name("arguments")
            for arg in args.named_children if args is not None else ():
                if arg.type in ("identifier", "selector_expression"):
                    self._name_use(S.CALLBACK, arg)
                elif _is_type_node(arg):
                    self._type(arg)  # make([]T, n), new(T)
                else:
                    self._expr(arg)
            return
        if t == "type_conversion_expression":
            typ = node.child_by_field_name("type")
            if typ is not None and typ.type == "generic_type":
                name = typ.child_by_field_name("type")
                if name is not None and name.type == "type_identifier":
                    if not self._is_local(_text(name)) and _text(name) not in S.PREDECLARED:
                        self._site(S.CALL, name, ("", "", ""))  # F[int](x): a call of a generic function
                    self._type(typ.child_by_field_name("type_arguments"))
                else:
                    self._type(typ)
            else:
                self._type(typ)
            self._expr(node.child_by_field_name("operand"))
            return
        if t == "composite_literal":
            self._type(node.child_by_field_name("type"))
            body = node.child_by_field_name("body")
            for el in body.named_children if body is not None else ():
                if el.type == "keyed_element":
                    key, *rest = el.named_children
                    inner_key = key.named_children[0] if key.type == "literal_element" and key.named_children else key
                    if inner_key.type not in ("identifier", "field_identifier"):
                        self._expr(key)  # a map key expression; a field name is the type's business
                    for r in rest:
                        self._expr(r)
                else:
                    self._expr(el)
            return
        if t == "func_literal":
            for part in ("parameters", "result"):
                self._type(node.child_by_field_name(part))
            self._expr(node.child_by_field_name("body"))
            return
        if t in (
            "type_identifier",
            "qualified_type",
            "pointer_type",
            "slice_type",
            "array_type",
            "map_type",
            "channel_type",
            "function_type",
            "struct_type",
            "interface_type",
            "generic_type",
        ):
            self._type(node)
            return
        if t in ("field_identifier", "label_name", "package_identifier"):
            return
        if t in ("var_spec", "const_spec"):
            self._type(node.child_by_field_name("type"))
            self._expr(node.child_by_field_name("value"))
            return
        if t == "type_spec":
            self._type(node.child_by_field_name("type"))
            return
        if t == "parameter_declaration":
            self._type(node.child_by_field_name("type"))
            return
        if t in _LOCAL_BINDERS:
            target = node.child_by_field_name("left") or node.child_by_field_name("alias")
            for c in node.named_children:
                if _same(c, target) and t != "receive_statement":
                    continue
                self._expr(c)
            return
        if t == "type_case":
            for c in node.children_by_field_name("type"):
                self._type(c)
            for c in node.named_children:
                if c.type == "statement_list":
                    self._expr(c)
            return
        for child in node.named_children:
            self._expr(child)

    def _type(self, node: Node | None, embed: bool = False) -> None:
        if node is None:
            return
        t = node.type
        if t == "type_identifier":
            name = _text(node)
            if not self._is_local(name) and name not in S.PREDECLARED:
                self._site(S.EMBED if embed else S.TYPE, node, ("", "", ""))
            return
        if t == "qualified_type":
            pkg = node.child_by_field_name("package")
            name = node.child_by_field_name("name")
            if name is not None:
                self._site(S.EMBED if embed else S.TYPE, name, (_text(pkg), S.OUTER, ""))
            return
        if t in ("parameter_declaration", "variadic_parameter_declaration"):
            self._type(node.child_by_field_name("type"))
            return
        if t == "pointer_type" or t == "type_elem":
            for c in node.named_children:
                self._type(c, embed)
            return
        if t == "generic_type":
            self._type(node.child_by_field_name("type"), embed)
            self._type(node.child_by_field_name("type_arguments"))
            return
        if t == "struct_type" and self.enclosing:
            # an unnamed struct in a signature or a body: its field types are uses of the enclosing declaration
            for flist in node.named_children:
                for fdecl in flist.named_children:
                    self._type(fdecl.child_by_field_name("type"))
            return
        if t in ("array_type", "implicit_length_array_type"):
            self._expr(node.child_by_field_name("length"))
            self._type(node.child_by_field_name("element"))
            return
        if t in (
            "identifier",
            "selector_expression",
            "call_expression",
            "binary_expression",
            "unary_expression",
            "int_literal",
            "parenthesized_expression",
        ):
            self._expr(node)
            return
        for child in node.named_children:
            self._type(child)


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _is_type_node(node: Node) -> bool:
    return node.type in (
        "slice_type",
        "map_type",
        "channel_type",
        "pointer_type",
        "array_type",
        "function_type",
        "struct_type",
        "interface_type",
        "qualified_type",
        "type_identifier",
        "generic_type",
    )


def _constructed_type(value: Node) -> str:
    """The type a value's syntax names: ``T{}``, ``&T{}``, ``new(T)``; else ""."""
    node = value
    if node.type == "unary_expression" and _text(node.child_by_field_name("operator")) == "&":
        node = node.child_by_field_name("operand") or node
    if node.type == "composite_literal":
        return type_name_of(node.child_by_field_name("type"))
    if node.type == "call_expression" and _text(node.child_by_field_name("function")) == "new":
        args = node.child_by_field_name("arguments")
        if args is not None and args.named_children:
            return type_name_of(args.named_children[0])
    return ""
