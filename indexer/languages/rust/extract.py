"""Rust extraction: the declarations and reference sites of one file, from its tree-sitter tree.

Qualified names are Rust paths led by the crate's name: ``serde_json::de::Deserializer``.
The file's package is its module path (``package_for_root``, from Cargo.toml
and the file path); inline ``mod x {}`` blocks nest below it. Declarations:

- every file is a ``module`` symbol named by its module path (the crate root by the crate name);
  an inline ``mod`` is a ``module`` too;
- ``struct``, ``enum`` (its variants ``enum_member``), ``union``, ``trait``, ``function``, ``const``,
  ``static``, ``type_alias``, ``macro`` (a ``#[macro_export]`` one at the crate root, where Rust puts it);
  fields of structs, unions and struct-like variants are ``field``;
- a trait's functions (required and provided) are ``method`` under the trait, its associated types
  ``associated_type`` and consts ``const``;
- an impl's members belong to the implementing type: ``Type::method`` for an inherent impl and
  ``Type::<Trait>::method`` for a trait impl (``<From<u8>>`` keeps the trait's arguments), so an inherent
  method and a trait's method of the same name, or two traits' ``fmt``, stay apart. The type is the
  base of the self type (``impl<T> Tr for Wrapper<T>`` → ``Wrapper``) as the file names it, resolved
  through this file's ``use`` declarations; a blanket impl (``impl<T: Bound> Tr for T``) names its members
  ``<impl Tr for T>::method`` under the module;
- items declared inside a function body are named under the function.

Duplicate qualified names in one file (``#[cfg]`` alternatives) keep the first as it is and name the
later ones ``name#2``, ``name#3``. Fields are a namespace of their own, as in Rust: a field ``len`` and a
method ``len`` are both ``S::len``, told apart by kind; a field encloses no site (its type's use belongs
to the struct), so an enclosing qualified name always means the non-field declaration.

What syntax cannot see: macro arguments are token trees to tree-sitter, so calls inside ``println!(..)``
or ``tri!(..)`` are not sites; their identifiers become ``macro_arg`` sites, which the resolver keeps as
MACRO_NOT_EXPANDED rows so that an answer about such a name is never a complete empty one. Code a macro
generates (derives included) is absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import tree_sitter_rust
from tree_sitter import Language, Node

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.rust import modules as cargo
from indexer.languages.rust import sites as S
from indexer.languages.rust.modules import LANGUAGE
from indexer.languages.syntax import collapse as _collapse
from indexer.languages.syntax import extract_tree
from indexer.languages.syntax import node_text as _text

EXTRACTOR_VERSION = "rust-ts-2"

_TS_LANGUAGE = Language(tree_sitter_rust.language())
_SMART_POINTERS = frozenset({"Box", "Rc", "Arc"})
_PATTERN_PATHS = frozenset({"scoped_identifier", "scoped_type_identifier", "generic_type"})
_ITEM_KINDS = frozenset(
    {
        "function_item",
        "function_signature_item",
        "struct_item",
        "enum_item",
        "union_item",
        "trait_item",
        "impl_item",
        "const_item",
        "static_item",
        "type_item",
        "macro_definition",
        "mod_item",
        "use_declaration",
        "extern_crate_declaration",
        "foreign_mod_item",
    }
)
_LITERALS = frozenset(
    {
        "string_literal",
        "raw_string_literal",
        "char_literal",
        "integer_literal",
        "float_literal",
        "boolean_literal",
        "array_expression",
        "tuple_expression",
        "unit_expression",
        "range_expression",
    }
)


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one Rust file; a syntax error makes it partial (see extract_tree)."""
    return extract_tree(
        _TS_LANGUAGE, LANGUAGE, path, source, package, lambda root, text: _Extractor(text, package).run(root)
    )


# -- paths -------------------------------------------------------------------------------------------


def path_segments(node: Node | None) -> list[str]:
    """The segments of a path node, generic arguments dropped: ``a::b::<T>::c`` → ``[a, b, c]``.

    A leading ``::`` is an empty first segment; ``<T as Tr>`` and other type heads are ``?``.
    """
    if node is None:
        return []
    t = node.type
    if t in (
        "identifier",
        "type_identifier",
        "field_identifier",
        "primitive_type",
        "self",
        "super",
        "crate",
        "metavariable",
        "shorthand_field_identifier",
    ):
        return [_text(node)]
    if t in ("scoped_identifier", "scoped_type_identifier", "scoped_use_list"):
        path = node.child_by_field_name("path")
        name = node.child_by_field_name("name")
        head = path_segments(path) if path is not None else ([""] if _text(node).startswith("::") else [])
        return head + (path_segments(name) if name is not None else [])
    if t in ("generic_type", "generic_type_with_turbofish", "generic_function"):
        return path_segments(node.child_by_field_name("type") or node.child_by_field_name("function"))
    return ["?"]


def last_identifier(node: Node) -> Node:
    """The identifier a path ends with (where a site sits)."""
    while True:
        t = node.type
        if t in ("scoped_identifier", "scoped_type_identifier"):
            name = node.child_by_field_name("name")
            if name is None:
                return node
            node = name
        elif t in ("generic_type", "generic_type_with_turbofish", "generic_function"):
            inner = node.child_by_field_name("type") or node.child_by_field_name("function")
            if inner is None:
                return node
            node = inner
        else:
            return node


@dataclass
class _Function:
    """Names bound inside one function (coarse: the whole body) and what the syntax says their types are."""

    names: set[str] = field(default_factory=set)
    types: dict[str, str | None] = field(default_factory=dict)  # name -> type encoding, None when it varies

    def bind(self, name: str, encoding: str) -> None:
        if name in self.names and self.types.get(name) != encoding:
            self.types[name] = None
        elif name not in self.names:
            self.types[name] = encoding
        self.names.add(name)


@dataclass
class _Scope:
    """Where the walk is: the Rust module, the prefix new items are named under, and what ``Self`` is."""

    module: str
    prefix: str
    block: str = ""  # the function whose body this is ("" outside bodies)
    self_path: str = ""  # ``Self`` as a path (a nominal impl type or the trait itself)
    self_encoding: str = ""  # the type encoding of ``self``
    self_trait: str = ""  # the trait an impl implements: ``Self::Item`` there is ``<Self as Trait>::Item``
    generics: dict[str, str] = field(default_factory=dict)  # type parameter -> its bounds as an encoding
    fn: _Function | None = None

    def child(self, **changes: object) -> _Scope:
        values = {**self.__dict__, **changes}
        return _Scope(**values)  # type: ignore[arg-type]


class _Extractor:
    def __init__(self, source: bytes, package: str) -> None:
        self.source = source
        self.package = package
        self.crate = cargo.crate_of(package)
        self.symbols: list[SymbolFact] = []
        self.sites: list[Site] = []
        self.seen_qn: dict[tuple[str, bool], int] = {}
        self.enclosing = package
        # Per module scope: names this file's ``use`` declarations bind (name -> path), and names it declares.
        self.imports: dict[str, dict[str, list[str]]] = {}
        self.declared: dict[str, set[str]] = {}

    def run(self, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
        self.symbols.append(
            SymbolFact(
                name=self.package.rsplit("::", 1)[-1],
                qualified_name=self.package,
                kind="module",
                start_line=1,
                start_col=0,
                end_line=root.end_point[0] + 1,
                end_col=root.end_point[1],
                signature=f"mod {self.package.rsplit('::', 1)[-1]}",
                doc=self._inner_doc(root),
                exported=self.package == self.crate,
            )
        )
        self._prescan(root, self.package)
        self._items(root, _Scope(module=self.package, prefix=self.package), self.package)
        self.sites.sort(key=lambda s: (s.line, s.col))
        return tuple(self.symbols), tuple(self.sites)

    # -- the file's own names, for naming impl members ------------------------------------------------

    def _prescan(self, container: Node, module: str) -> None:
        """Record, per module of the file, the names its ``use`` declarations bind and the items it declares."""
        imports = self.imports.setdefault(module, {})
        declared = self.declared.setdefault(module, set())
        for child in container.named_children:
            if child.type == "use_declaration":
                for leaf, segments, alias, _node in self._use_leaves(child.child_by_field_name("argument"), []):
                    if leaf != "*":
                        imports[alias or leaf] = segments
            elif child.type == "mod_item":
                name = _text(child.child_by_field_name("name"))
                declared.add(name)
                body = child.child_by_field_name("body")
                if body is not None:
                    self._prescan(body, f"{module}::{name}")
            elif child.type in ("struct_item", "enum_item", "union_item", "trait_item", "type_item"):
                declared.add(_text(child.child_by_field_name("name")))

    def absolute(self, segments: list[str], module: str, block: str = "") -> str:
        """A type path as this file names it, made absolute through its own ``use`` declarations.

        Only for naming impl members: the resolver links an impl to its type by resolving the path itself.
        A name the enclosing function body declares (``block``) is that body's.
        """
        if not segments or "?" in segments:
            return ""
        head, rest = segments[0], segments[1:]
        if block and head in self.declared.get(block, set()):
            return "::".join([block, *segments])
        if head == "crate":
            return "::".join([self.crate, *rest])
        if head in ("self", "super"):
            base = module
            while segments and segments[0] in ("self", "super"):
                if segments[0] == "super":
                    base = cargo.parent_module(base)
                segments = segments[1:]
            return "::".join([base, *segments])
        if head == "":
            return "::".join(rest)
        if head in self.declared.get(module, set()):
            return "::".join([module, *segments])
        imported = self.imports.get(module, {}).get(head)
        if imported is not None:
            resolved = self.absolute(imported, module) if imported[:1] != [head] else "::".join(imported)
            return "::".join([resolved, *rest]) if resolved else ""
        if rest:
            return "::".join(segments)  # another crate's path
        return f"{module}::{head}"

    # -- declarations ---------------------------------------------------------------------------------

    def _doc(self, decl: Node) -> str:
        """The ``///`` or ``/** */`` doc comment above a declaration (attributes between skipped), first paragraph."""
        lines: list[str] = []
        prev = decl.prev_named_sibling
        while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
            if prev.type != "attribute_item":
                doc = prev.child_by_field_name("doc")
                if prev.child_by_field_name("outer") is None or doc is None:
                    break
                lines.extend(reversed(_text(doc).splitlines() or [""]))
            prev = prev.prev_named_sibling
        return _first_paragraph(list(reversed(lines)))

    def _inner_doc(self, root: Node) -> str:
        lines: list[str] = []
        for child in root.named_children:
            if child.type not in ("line_comment", "block_comment"):
                break
            doc = child.child_by_field_name("doc")
            if child.child_by_field_name("inner") is None or doc is None:
                break
            lines.extend(_text(doc).splitlines() or [""])
        return _first_paragraph(lines)

    def _attributes(self, decl: Node) -> list[Node]:
        out: list[Node] = []
        prev = decl.prev_named_sibling
        while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
            if prev.type == "attribute_item":
                out.append(prev)
            prev = prev.prev_named_sibling
        return out

    def _declare(
        self,
        name: str,
        qn: str,
        kind: str,
        span: Node,
        signature: str,
        doc: str = "",
        container: str = "",
        exported: bool = False,
    ) -> str:
        # Fields have a namespace of their own: a field and a method ``len`` are both ``S::len``, told apart by kind.
        seen = (qn, kind == "field")
        n = self.seen_qn.get(seen, 0) + 1
        self.seen_qn[seen] = n
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
                exported=exported,
                container=container,
            )
        )
        return qn

    def _head(self, node: Node) -> str:
        """A declaration's text up to its body."""
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        return self.source[node.start_byte : end].decode("utf-8", "replace").strip().rstrip(";").strip()

    def _items(self, container: Node, scope: _Scope, owner: str) -> None:
        for child in container.named_children:
            self._item(child, scope, owner)

    def _item(self, node: Node, scope: _Scope, owner: str) -> None:
        t = node.type
        if t == "use_declaration":
            self._use(node, scope)
        elif t == "extern_crate_declaration":
            name = node.child_by_field_name("name")
            alias = _text(node.child_by_field_name("alias"))
            if name is not None:
                self._site_at(
                    S.USE, name, (scope.module, f"::{_text(name)}", alias, _visibility(node), scope.block), owner
                )
        elif t == "mod_item":
            self._mod(node, scope, owner)
        elif t in ("function_item", "function_signature_item"):
            name = _text(node.child_by_field_name("name"))
            qn = self._declare(
                name,
                f"{scope.prefix}::{name}",
                "function",
                node,
                self._head(node),
                self._doc(node),
                owner,
                _is_pub(node),
            )
            self._function(node, qn, scope)
        elif t in ("struct_item", "union_item"):
            self._struct(node, scope, owner, "struct" if t == "struct_item" else "union")
        elif t == "enum_item":
            self._enum(node, scope, owner)
        elif t == "trait_item":
            self._trait(node, scope, owner)
        elif t == "impl_item":
            self._impl(node, scope)
        elif t in ("const_item", "static_item"):
            self._value(node, scope, owner, "const" if t == "const_item" else "static")
        elif t == "type_item":
            name = _text(node.child_by_field_name("name"))
            qn = self._declare(
                name,
                f"{scope.prefix}::{name}",
                "type_alias",
                node,
                _text(node).rstrip(";"),
                self._doc(node),
                owner,
                _is_pub(node),
            )
            inner = scope.child(generics={**scope.generics, **self._generics(node, scope)})
            self._type_params(node, inner, qn)
            self._typeof(node, qn, self.type_encoding(node.child_by_field_name("type"), inner), inner)
            self._type(node.child_by_field_name("type"), inner, qn)
        elif t == "macro_definition":
            name = _text(node.child_by_field_name("name"))
            exported = any("macro_export" in _text(a) for a in self._attributes(node))
            prefix = self.crate if exported else scope.prefix
            self._declare(
                name,
                f"{prefix}::{name}",
                "macro",
                node,
                f"macro_rules! {name}",
                self._doc(node),
                owner if not exported else "",
                exported,
            )
        elif t == "foreign_mod_item":
            body = node.child_by_field_name("body")
            if body is not None:
                self._items(body, scope, owner)
        elif t == "macro_invocation":
            self._macro(node, scope, owner)
        elif t == "attribute_item" or t in ("line_comment", "block_comment", "inner_attribute_item"):
            return
        elif t == "expression_statement" or t.endswith("_expression"):
            self._expr(node, scope, owner)

    def _mod(self, node: Node, scope: _Scope, owner: str) -> None:
        name = _text(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        if body is None:  # ``mod x;``: the module is the file x.rs or x/mod.rs, which is its own symbol
            ident = node.child_by_field_name("name")
            if ident is not None:
                self._site_at(S.MOD, ident, (scope.module, self._path_attribute(node), S.PATH, "", scope.block), owner)
            return
        qn = self._declare(
            name, f"{scope.module}::{name}", "module", node, f"mod {name}", self._doc(node), owner, _is_pub(node)
        )
        self._items(body, _Scope(module=qn, prefix=qn), qn)

    def _path_attribute(self, node: Node) -> str:
        """The file ``#[path = "x.rs"]`` names for a ``mod x;`` ("" without one)."""
        for attr in self._attributes(node):
            inner = attr.named_children[0] if attr.named_children else None
            if inner is None or _text(inner.named_children[0] if inner.named_children else None) != "path":
                continue
            value = inner.child_by_field_name("value")
            if value is not None and value.type == "string_literal":
                return _text(value)[1:-1]
        return ""

    def _derives(self, node: Node, scope: _Scope, qn: str) -> None:
        for attr in self._attributes(node):
            inner = attr.named_children[0] if attr.named_children else None
            if inner is None or _text(inner.named_children[0] if inner.named_children else None) != "derive":
                continue
            args = inner.child_by_field_name("arguments")
            for tok in args.named_children if args is not None else ():
                if tok.type == "identifier":
                    self._site_at(S.DERIVE, tok, (scope.module, "", S.PATH, "", scope.block), qn)

    def _struct(self, node: Node, scope: _Scope, owner: str, kind: str) -> None:
        name = _text(node.child_by_field_name("name"))
        qn = self._declare(
            name, f"{scope.prefix}::{name}", kind, node, self._head(node), self._doc(node), owner, _is_pub(node)
        )
        self._derives(node, scope, qn)
        inner = scope.child(generics={**scope.generics, **self._generics(node, scope)})
        self._type_params(node, inner, qn)
        self._fields(node.child_by_field_name("body"), inner, qn, _is_pub(node))

    def _fields(self, body: Node | None, scope: _Scope, owner: str, public: bool) -> None:
        if body is None:
            return
        if body.type == "ordered_field_declaration_list":
            for ftype in body.children_by_field_name("type"):
                self._type(ftype, scope, owner)
            return
        for fdecl in body.named_children:
            if fdecl.type != "field_declaration":
                continue
            fname = _text(fdecl.child_by_field_name("name"))
            ftype = fdecl.child_by_field_name("type")
            fqn = self._declare(
                fname,
                f"{owner}::{fname}",
                "field",
                fdecl,
                f"{fname}: {_text(ftype)}",
                self._doc(fdecl),
                owner,
                _is_pub(fdecl),
            )
            self._typeof(fdecl, fqn, self.type_encoding(ftype, scope), scope, "field")
            self._type(ftype, scope, owner)  # owned by the type: a field never encloses a site (see _declare)

    def _enum(self, node: Node, scope: _Scope, owner: str) -> None:
        name = _text(node.child_by_field_name("name"))
        public = _is_pub(node)
        qn = self._declare(
            name, f"{scope.prefix}::{name}", "enum", node, self._head(node), self._doc(node), owner, public
        )
        self._derives(node, scope, qn)
        inner = scope.child(generics={**scope.generics, **self._generics(node, scope)})
        self._type_params(node, inner, qn)
        body = node.child_by_field_name("body")
        for variant in body.named_children if body is not None else ():
            if variant.type != "enum_variant":
                continue
            vname = _text(variant.child_by_field_name("name"))
            vqn = self._declare(
                vname, f"{qn}::{vname}", "enum_member", variant, _text(variant), self._doc(variant), qn, public
            )
            self._fields(variant.child_by_field_name("body"), inner, vqn, public)
            value = variant.child_by_field_name("value")
            if value is not None:
                self._expr(value, inner, vqn)

    def _trait(self, node: Node, scope: _Scope, owner: str) -> None:
        name = _text(node.child_by_field_name("name"))
        public = _is_pub(node)
        qn = self._declare(
            name, f"{scope.prefix}::{name}", "trait", node, self._head(node), self._doc(node), owner, public
        )
        generics = {**scope.generics, **self._generics(node, scope)}
        inner = scope.child(self_path=name, self_encoding=f"bound:{name}", generics=generics, prefix=qn)
        self._type_params(node, inner, qn)
        bounds = node.child_by_field_name("bounds")
        for bound in bounds.named_children if bounds is not None else ():
            for trait in _bound_traits(bound):
                self._path_site(S.SUPERTRAIT, trait, inner, qn)
        body = node.child_by_field_name("body")
        for member in body.named_children if body is not None else ():
            self._member(member, inner, qn, qn, public)

    def _member(self, member: Node, scope: _Scope, prefix: str, container: str, public: bool) -> None:
        """A function, associated type or const of a trait or an impl, named under ``prefix``."""
        t = member.type
        if t in ("function_item", "function_signature_item"):
            mname = _text(member.child_by_field_name("name"))
            mqn = self._declare(
                mname,
                f"{prefix}::{mname}",
                "method",
                member,
                self._head(member),
                self._doc(member),
                container,
                public or _is_pub(member),
            )
            self._function(member, mqn, scope)
        elif t in ("associated_type", "type_item"):
            mname = _text(member.child_by_field_name("name"))
            mqn = self._declare(
                mname,
                f"{prefix}::{mname}",
                "associated_type",
                member,
                _text(member).rstrip(";"),
                self._doc(member),
                container,
                public or _is_pub(member),
            )
            value = member.child_by_field_name("type")
            bounds = member.child_by_field_name("bounds")
            paths = self._bound_paths(bounds)
            encoding = (
                self.type_encoding(value, scope) if value is not None else (f"bound:{'+'.join(paths)}" if paths else "")
            )
            self._typeof(member, mqn, encoding, scope)
            self._type(value, scope, mqn)
            for bound in bounds.named_children if bounds is not None else ():
                self._type(bound, scope, mqn)
        elif t == "const_item":
            mname = _text(member.child_by_field_name("name"))
            mqn = self._declare(
                mname,
                f"{prefix}::{mname}",
                "const",
                member,
                self._head(member).split("=")[0].strip(),
                self._doc(member),
                container,
                public or _is_pub(member),
            )
            ctype = member.child_by_field_name("type")
            self._typeof(member, mqn, self.type_encoding(ctype, scope), scope)
            self._type(ctype, scope, mqn)
            value = member.child_by_field_name("value")
            if value is not None:
                self._expr(value, scope.child(fn=_Function()), mqn)
        elif t == "macro_invocation":
            self._macro(member, scope, container or scope.module)

    def _impl(self, node: Node, scope: _Scope) -> None:
        type_node = node.child_by_field_name("type")
        trait_node = node.child_by_field_name("trait")
        generics = {**scope.generics, **self._generics(node, scope)}
        base = _base_type(type_node)
        segments = path_segments(base) if base is not None else []
        nominal = bool(segments) and "?" not in segments and not (len(segments) == 1 and segments[0] in generics)
        if base is not None and base.type == "dynamic_type":
            nominal = False
        trait_segments = path_segments(trait_node) if trait_node is not None else []
        type_qn = self.absolute(segments, scope.module, scope.prefix if scope.block else "") if nominal else ""
        if trait_node is not None:
            trait_label = _collapse(_text(last_identifier(trait_node)) + _text(_type_arguments(trait_node)), 80)
            if type_qn:
                prefix = f"{type_qn}::<{trait_label}>"
            else:
                prefix = f"{scope.prefix}::<impl {trait_label} for {_collapse(_text(type_node), 80)}>"
        else:
            prefix = type_qn or f"{scope.prefix}::<impl {_collapse(_text(type_node), 80)}>"
        self_path = "::".join(segments) if nominal else ""
        if nominal:
            self_encoding = f"type:{self_path}"
        elif trait_node is not None:
            # ``impl<T: Visitor> Expected for T``: Self is bounded by the trait and by T's own bounds
            own = generics.get(segments[0], "") if len(segments) == 1 else ""
            bounds = ["::".join(trait_segments), *(own[len("bound:") :].split("+") if own else [])]
            self_encoding = f"bound:{'+'.join(bounds)}"
        else:
            self_encoding = self.type_encoding(type_node, scope.child(generics=generics))
        inner = scope.child(
            self_path=self_path,
            self_encoding=self_encoding,
            generics=generics,
            self_trait="::".join(trait_segments) if trait_node is not None and nominal else "",
        )
        where = scope.block or scope.module
        self._type_params(node, inner, where)
        if trait_node is not None:
            ident = last_identifier(trait_node)
            self._site_at(
                S.IMPL, ident, (scope.module, "::".join(trait_segments), self_path, prefix, scope.block), where
            )
            self._type(_type_arguments(trait_node), inner, where)
        if base is not None and nominal:
            ident = last_identifier(base)
            if trait_node is None:
                self._site_at(S.INHERENT, ident, (scope.module, self_path, "", prefix, scope.block), where)
            else:
                self._path_site(S.TYPE, base, inner, where)
            self._type(_type_arguments(base), inner, where)
        else:
            self._type(type_node, inner, where)
        body = node.child_by_field_name("body")
        container = type_qn
        for member in body.named_children if body is not None else ():
            if member.type == "macro_invocation":  # owned by what this file declares: the type may be elsewhere
                self._macro(member, inner, where)
            else:
                self._member(member, inner, prefix, container, trait_node is not None)

    def _value(self, node: Node, scope: _Scope, owner: str, kind: str) -> None:
        name = _text(node.child_by_field_name("name"))
        vtype = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        sig = f"{kind} {name}: {_text(vtype)}"
        if value is not None and len(_text(value)) <= 40:
            sig += f" = {_text(value)}"
        qn = self._declare(name, f"{scope.prefix}::{name}", kind, node, sig, self._doc(node), owner, _is_pub(node))
        # `const F: fn(u8) -> u8 = |x| x + 1;`: a closure (only a capture-free one can be here) or a fn pointer
        if (vtype is not None and vtype.type == "function_type") or (
            value is not None and value.type == "closure_expression"
        ):
            self.symbols[-1] = msgspec.structs.replace(self.symbols[-1], callable=True)
        self._typeof(node, qn, self.type_encoding(vtype, scope), scope)
        self._type(vtype, scope, qn)
        if value is not None:
            self._expr(value, scope.child(fn=_Function()), qn)

    # -- generics and types ---------------------------------------------------------------------------

    def _generics(self, node: Node, scope: _Scope) -> dict[str, str]:
        """The type parameters a declaration introduces, each with its bounds (generics list and where clause)."""
        bounds: dict[str, list[str]] = {}
        tparams = node.child_by_field_name("type_parameters")
        for param in tparams.named_children if tparams is not None else ():
            if param.type == "type_parameter":
                pname = _text(param.child_by_field_name("name"))
                bounds.setdefault(pname, []).extend(self._bound_paths(param.child_by_field_name("bounds")))
            elif param.type == "const_parameter":  # ``const N: usize``: a local value, never a site
                bounds.setdefault(_text(param.child_by_field_name("name")), [])
        where = next((c for c in node.named_children if c.type == "where_clause"), None)
        for pred in where.named_children if where is not None else ():
            left = pred.child_by_field_name("left")
            if left is not None and left.type == "type_identifier" and _text(left) in bounds:
                bounds[_text(left)].extend(self._bound_paths(pred.child_by_field_name("bounds")))
        return {name: f"bound:{'+'.join(paths)}" if paths else "" for name, paths in bounds.items()}

    def _bound_paths(self, bounds: Node | None) -> list[str]:
        out: list[str] = []
        for bound in bounds.named_children if bounds is not None else ():
            for trait in _bound_traits(bound):
                segments = path_segments(trait)
                if "?" not in segments:
                    out.append("::".join(segments))
        return out

    def _type_params(self, node: Node, scope: _Scope, owner: str) -> None:
        """Type uses in a declaration's generics and where clause (bounds, defaults)."""
        tparams = node.child_by_field_name("type_parameters")
        for param in tparams.named_children if tparams is not None else ():
            if param.type == "type_parameter":
                self._type(param.child_by_field_name("bounds"), scope, owner)
                self._type(param.child_by_field_name("default_type"), scope, owner)
            elif param.type == "const_parameter":
                self._type(param.child_by_field_name("type"), scope, owner)
        where = next((c for c in node.named_children if c.type == "where_clause"), None)
        for pred in where.named_children if where is not None else ():
            self._type(pred.child_by_field_name("left"), scope, owner)
            self._type(pred.child_by_field_name("bounds"), scope, owner)

    def type_encoding(self, node: Node | None, scope: _Scope) -> str:
        """What a type node says a value's type is (see sites.py): smart pointers and references see through."""
        while node is not None and node.type in ("reference_type", "pointer_type", "parenthesized_type"):
            node = node.child_by_field_name("type") or (node.named_children[-1] if node.named_children else None)
        if node is None:
            return ""
        t = node.type
        if t in ("primitive_type", "tuple_type", "array_type", "unit_type", "never_type", "function_type"):
            return "ext:"
        if t == "generic_type":
            base = path_segments(node.child_by_field_name("type"))
            args = node.child_by_field_name("type_arguments")
            first = (
                next((a for a in args.named_children if a.type not in ("lifetime", "type_binding")), None)
                if args is not None
                else None
            )
            if base and base[-1] in _SMART_POINTERS and first is not None:
                return self.type_encoding(first, scope)
        if t in ("dynamic_type", "abstract_type", "bounded_type"):
            paths = self._bound_paths_of(node)
            return f"bound:{'+'.join(paths)}" if paths else "ext:"
        segments = path_segments(node)
        if not segments or "?" in segments:
            return ""
        if segments == ["Self"]:
            return scope.self_encoding
        if len(segments) == 1 and segments[0] in scope.generics:
            return scope.generics[segments[0]]
        if segments[0] == "Self" and scope.self_path:
            segments = [*scope.self_path.split("::"), *segments[1:]]
        if len(segments) == 1 and segments[0] in S.PRIMITIVES:
            return "ext:"
        return f"type:{'::'.join(segments)}"

    def _bound_paths_of(self, node: Node | None) -> list[str]:
        """The trait paths of ``dyn A + B``, ``impl A``, or a bounded type's parts."""
        if node is None:
            return []
        if node.type in ("dynamic_type", "abstract_type"):
            return self._bound_paths_of(node.child_by_field_name("trait"))
        if node.type == "bounded_type":
            return [p for c in node.named_children for p in self._bound_paths_of(c)]
        return ["::".join(s) for s in (path_segments(t) for t in _bound_traits(node)) if "?" not in s]

    def _typeof(self, decl: Node, qn: str, encoding: str, scope: _Scope, kind: str = "") -> None:
        if encoding:
            row, col = decl.start_point
            self.sites.append(Site(S.TYPEOF, qn, row + 1, col, qn, (scope.module, encoding, scope.block, kind)))

    def _type(self, node: Node | None, scope: _Scope, owner: str) -> None:
        """Type uses under a type node (and the expressions inside array lengths)."""
        if node is None:
            return
        t = node.type
        if t in ("type_identifier", "scoped_type_identifier"):
            segments = path_segments(node)
            if len(segments) == 1 and (segments[0] in scope.generics or segments[0] in S.PRIMITIVES):
                return
            if segments == ["Self"]:
                return
            self._path_site(S.TYPE, node, scope, owner)
            return
        if t == "generic_type":
            base = node.child_by_field_name("type")
            self._type(base, scope, owner)
            args = node.child_by_field_name("type_arguments")
            self._type(args, scope, owner)
            segments = path_segments(base)
            for binding in args.named_children if args is not None and "?" not in segments else ():
                name = binding.child_by_field_name("name") if binding.type == "type_binding" else None
                if name is not None:  # ``Iterator<Item = T>``: Item is the trait's associated type
                    qualifier = "::".join(self._self_path(segments, scope))
                    self._site_at(S.TYPE, name, (scope.module, qualifier, S.PATH, "", scope.block), owner)
            return
        if t == "type_binding":
            self._type(node.child_by_field_name("type"), scope, owner)
            self._type(node.child_by_field_name("type_arguments"), scope, owner)
            return
        if t in ("primitive_type", "lifetime", "never_type", "unit_type", "metavariable"):
            return
        if t == "array_type":
            self._type(node.child_by_field_name("element"), scope, owner)
            length = node.child_by_field_name("length")
            if length is not None:
                self._expr(length, scope, owner)
            return
        if t == "macro_invocation":
            self._macro(node, scope, owner)
            return
        if t == "qualified_type":
            self._type(node.child_by_field_name("type"), scope, owner)
            self._type(node.child_by_field_name("alias"), scope, owner)
            return
        if t == "function_type":
            trait = node.child_by_field_name("trait")
            if trait is not None and path_segments(trait)[-1:] not in (["Fn"], ["FnMut"], ["FnOnce"]):
                self._type(trait, scope, owner)
            self._type(node.child_by_field_name("parameters"), scope, owner)
            self._type(node.child_by_field_name("return_type"), scope, owner)
            return
        for child in node.named_children:
            if child.type == "parameter":
                self._type(child.child_by_field_name("type"), scope, owner)
            else:
                self._type(child, scope, owner)

    # -- functions ------------------------------------------------------------------------------------

    def _function(self, node: Node, qn: str, scope: _Scope) -> None:
        generics = {**scope.generics, **self._generics(node, scope)}
        fn = _Function()
        inner = scope.child(generics=generics, fn=fn)
        params = node.child_by_field_name("parameters")
        for param in params.named_children if params is not None else ():
            if param.type == "self_parameter":
                fn.bind("self", inner.self_encoding)
            elif param.type == "parameter":
                self._bind_pattern(
                    param.child_by_field_name("pattern"),
                    fn,
                    self.type_encoding(param.child_by_field_name("type"), inner),
                )
        body = node.child_by_field_name("body")
        if body is not None:
            self._collect_locals(body, fn, inner)
        self._type_params(node, inner, qn)
        for param in params.named_children if params is not None else ():
            if param.type == "parameter":
                self._type(param.child_by_field_name("type"), inner, qn)
                self._pattern(param.child_by_field_name("pattern"), inner, qn)
            elif param.type == "self_parameter":
                continue
            else:
                self._type(param, inner, qn)  # a bare type in a function signature item
        ret = node.child_by_field_name("return_type")
        self._typeof(node, qn, self.type_encoding(ret, inner), inner)
        self._type(ret, inner, qn)
        if body is not None:
            self._block(body, inner.child(block=qn, prefix=qn), qn)

    def _bind_pattern(self, pattern: Node | None, fn: _Function, encoding: str) -> None:
        """The names a pattern binds; only a plain ``x`` (or ``mut x``, ``ref x``) gets the given type."""
        if pattern is None:
            return
        plain = pattern
        while plain.type in ("mut_pattern", "ref_pattern") and plain.named_children:
            plain = plain.named_children[-1]
        if plain.type == "identifier":
            fn.bind(_text(plain), encoding)
            return
        for name in _pattern_bindings(pattern):
            fn.bind(name, "")

    def _collect_locals(self, body: Node, fn: _Function, scope: _Scope) -> None:
        """Every name bound anywhere in a body, nested items excepted (Rust scopes by block; coarse is enough)."""
        stack = [body]
        while stack:
            cur = stack.pop()  # in source order: a ``let`` sees the types of the names bound before it
            t = cur.type
            if t in _ITEM_KINDS and cur is not body:
                continue
            if t == "let_declaration":
                ltype = cur.child_by_field_name("type")
                value = cur.child_by_field_name("value")
                encoding = (
                    self.type_encoding(ltype, scope) if ltype is not None else self.value_encoding(value, scope, fn)
                )
                self._bind_pattern(cur.child_by_field_name("pattern"), fn, encoding)
            elif t in ("let_condition", "for_expression", "match_arm"):
                pattern = cur.child_by_field_name("pattern")
                for name in _pattern_bindings(pattern) if pattern is not None else ():
                    fn.bind(name, "")
            elif t == "closure_parameters":
                for param in cur.named_children:
                    if param.type == "parameter":
                        self._bind_pattern(
                            param.child_by_field_name("pattern"),
                            fn,
                            self.type_encoding(param.child_by_field_name("type"), scope),
                        )
                    else:
                        self._bind_pattern(param, fn, "")
            stack.extend(reversed(cur.named_children))

    def value_encoding(self, value: Node | None, scope: _Scope, fn: _Function | None = None) -> str:
        """What an expression's syntax says its type is (see sites.py), "" when it does not."""
        while value is not None and value.type in ("reference_expression", "parenthesized_expression"):
            value = value.child_by_field_name("value") or (value.named_children[-1] if value.named_children else None)
        if value is None:
            return ""
        t = value.type
        if t in _LITERALS:
            return "ext:"
        if t == "struct_expression":
            name = value.child_by_field_name("name")
            segments = path_segments(name)
            if segments == ["Self"]:
                return scope.self_encoding
            return "" if "?" in segments else f"type:{'::'.join(self._self_path(segments, scope))}"
        if t == "macro_invocation":
            macro = path_segments(value.child_by_field_name("macro"))
            return "ext:" if macro[-1:] in (["vec"], ["format"]) else ""
        if t == "self":
            return scope.self_encoding
        if t == "identifier" and fn is not None and _text(value) in fn.names:
            return fn.types.get(_text(value)) or ""
        if t in ("identifier", "scoped_identifier"):
            segments = path_segments(value)
            if not segments or "?" in segments or (len(segments) == 1 and segments[0] in S.PRELUDE):
                return ""
            return f"ret:{'::'.join(self._self_path(segments, scope))}"
        if t == "field_expression":
            fname = value.child_by_field_name("field")
            base = self.value_encoding(value.child_by_field_name("value"), scope, fn)
            if fname is None or fname.type != "field_identifier" or not base or base == "ext:":
                return ""
            return f"field:{_text(fname)};{base}"
        if t == "call_expression":
            callee = value.child_by_field_name("function")
            if callee is None:
                return ""
            if callee.type == "field_expression":
                mname = callee.child_by_field_name("field")
                base = self.value_encoding(callee.child_by_field_name("value"), scope, fn)
                if mname is None or not base or base == "ext:":
                    return ""
                return f"method:{_text(mname)};{base}"
            segments = path_segments(callee)
            if not segments or "?" in segments or (len(segments) == 1 and fn is not None and segments[0] in fn.names):
                return ""
            if len(segments) > 1 and segments[0] in scope.generics:
                return ""
            return f"ret:{'::'.join(self._self_path(segments, scope))}"
        return ""

    def _self_path(self, segments: list[str], scope: _Scope) -> list[str]:
        if segments and segments[0] == "Self" and scope.self_path:
            return [*scope.self_path.split("::"), *segments[1:]]
        return segments

    # -- sites ----------------------------------------------------------------------------------------

    def _site_at(self, kind: str, ident: Node, extra: tuple[str, ...], enclosing: str) -> None:
        row, col = ident.start_point
        self.sites.append(Site(kind, _text(ident), row + 1, col, enclosing, extra))

    def _is_local(self, name: str, scope: _Scope) -> bool:
        return scope.fn is not None and name in scope.fn.names

    def _path_site(self, kind: str, node: Node, scope: _Scope, owner: str) -> None:
        """A site on the last identifier of a path; its qualifier as a path, ``Self`` and type parameters read."""
        if node.type == "scoped_identifier" or node.type == "scoped_type_identifier":
            qualifier_node = node.child_by_field_name("path")
            if qualifier_node is not None and qualifier_node.type == "bracketed_type":
                self._qualified_site(kind, node, qualifier_node, scope, owner)
                return
            if qualifier_node is not None and qualifier_node.type == "generic_type":
                self._type(qualifier_node.child_by_field_name("type_arguments"), scope, owner)
        segments = path_segments(node)
        if not segments or "?" in segments or segments[-1] in ("self", "super", "crate", "Self"):
            return
        ident = last_identifier(node)
        qualifier = segments[:-1]
        if qualifier and qualifier[0] in scope.generics:
            # ``T::f`` is the bound's item; ``T::Assoc::f`` goes through an associated type syntax cannot follow
            encoding = scope.generics[qualifier[0]] if len(qualifier) == 1 else ""
            self._site_at(kind, ident, (scope.module, "::".join(qualifier), S.RECV, encoding, scope.block), owner)
            return
        if qualifier == ["Self"] and scope.self_trait:
            self._site_at(kind, ident, (scope.module, scope.self_trait, S.AS, scope.self_encoding, scope.block), owner)
            return
        if qualifier[:1] == ["Self"]:
            if scope.self_path:
                qualifier = [*scope.self_path.split("::"), *qualifier[1:]]
            else:
                self._site_at(kind, ident, (scope.module, "Self", S.RECV, scope.self_encoding, scope.block), owner)
                return
        # A supertrait of the prelude stays a site: it tells the resolver the trait has items it cannot see.
        prelude = segments[0] in S.PRELUDE and kind != S.SUPERTRAIT
        if not qualifier and (prelude or self._is_local(segments[0], scope)):
            return
        if qualifier:
            self._qualifier_site(node, scope, owner)
        self._site_at(kind, ident, (scope.module, "::".join(qualifier), S.PATH, "", scope.block), owner)

    def _qualifier_site(self, node: Node, scope: _Scope, owner: str) -> None:
        """``Type`` of ``Type::f`` is a type use; the resolver drops it when the qualifier is a module."""
        qualifier = node.child_by_field_name("path")
        if qualifier is None or qualifier.type not in (
            "identifier",
            "scoped_identifier",
            "type_identifier",
            "scoped_type_identifier",
            "generic_type",
        ):
            return
        base = qualifier.child_by_field_name("type") if qualifier.type == "generic_type" else qualifier
        if base is None:
            return
        segments = path_segments(base)
        if not segments or "?" in segments or segments[-1] in ("self", "super", "crate", "Self", ""):
            return
        if len(segments) == 1 and (segments[0] in scope.generics or segments[0] in S.PRELUDE):
            return
        ident = last_identifier(base)
        self._site_at(
            S.QUALIFIER,
            ident,
            (scope.module, "::".join(self._self_path(segments[:-1], scope)), S.PATH, "", scope.block),
            owner,
        )

    def _qualified_site(self, kind: str, node: Node, bracketed: Node, scope: _Scope, owner: str) -> None:
        """``<T as Trait>::f``: the site names the trait; the type's encoding says which impl."""
        name = node.child_by_field_name("name")
        inner = bracketed.named_children[0] if bracketed.named_children else None
        if name is None or inner is None:
            return
        if inner.type == "qualified_type":
            self._type(inner, scope, owner)
            encoding = self.type_encoding(inner.child_by_field_name("type"), scope)
            trait = path_segments(inner.child_by_field_name("alias"))
            if "?" in trait:
                return
            self._site_at(kind, name, (scope.module, "::".join(trait), S.AS, encoding, scope.block), owner)
        else:
            self._type(inner, scope, owner)
            self._site_at(kind, name, (scope.module, "", S.RECV, self.type_encoding(inner, scope), scope.block), owner)

    def _use(self, node: Node, scope: _Scope) -> None:
        vis = _visibility(node)
        for leaf, segments, alias, ident in self._use_leaves(node.child_by_field_name("argument"), []):
            row, col = ident.start_point
            self.sites.append(
                Site(
                    S.USE,
                    leaf,
                    row + 1,
                    col,
                    scope.block or scope.module,
                    (scope.module, "::".join(segments), alias, vis, scope.block),
                )
            )

    def _use_leaves(self, node: Node | None, prefix: list[str]) -> list[tuple[str, list[str], str, Node]]:
        """(name, full path, alias, identifier node) of every leaf of a use tree; a glob's name is ``*``."""
        if node is None:
            return []
        t = node.type
        if t == "use_as_clause":
            path = node.child_by_field_name("path")
            alias = _text(node.child_by_field_name("alias"))
            return [(leaf, segs, alias, ident) for leaf, segs, _a, ident in self._use_leaves(path, prefix)]
        if t == "scoped_use_list":
            path = node.child_by_field_name("path")
            head = prefix + (path_segments(path) if path is not None else [])
            out: list[tuple[str, list[str], str, Node]] = []
            lst = node.child_by_field_name("list")
            for child in lst.named_children if lst is not None else ():
                out.extend(self._use_leaves(child, head))
            return out
        if t == "use_list":
            out = []
            for child in node.named_children:
                out.extend(self._use_leaves(child, prefix))
            return out
        if t == "use_wildcard":
            inner = node.named_children[0] if node.named_children else None
            segs = prefix + (path_segments(inner) if inner is not None else [])
            return [("*", segs, "", last_identifier(inner) if inner is not None else node)]
        if t == "self" and prefix:
            return [(prefix[-1], list(prefix), "", node)]
        segs = prefix + path_segments(node)
        if not segs or "?" in segs:
            return []
        return [(segs[-1], segs, "", last_identifier(node))]

    def _macro(self, node: Node, scope: _Scope, owner: str) -> None:
        macro = node.child_by_field_name("macro")
        if macro is None:
            return
        segments = path_segments(macro)
        if not segments or "?" in segments:
            return
        name = segments[-1]
        if len(segments) > 1 or name not in S.STANDARD_MACROS:
            qualifier = segments[:-1]
            if qualifier[:1] != ["$crate"]:
                self._site_at(
                    S.MACRO,
                    last_identifier(macro),
                    (scope.module, "::".join(qualifier), S.PATH, "", scope.block),
                    owner,
                )
        seen: set[tuple[str, int]] = set()
        stack = [c for c in node.named_children if c.type == "token_tree"]
        while stack:
            cur = stack.pop()
            if cur.type == "identifier":
                word = _text(cur)
                key = (word, cur.start_point[0])
                if key not in seen and word not in S.PRELUDE and not self._is_local(word, scope):
                    seen.add(key)
                    self._site_at(S.MACRO_ARG, cur, (name,), owner)
                continue
            stack.extend(cur.named_children)

    def _pattern(self, pattern: Node | None, scope: _Scope, owner: str) -> None:
        """Paths inside a pattern: ``E::V(..)``, ``S { .. }``, a constant ``MAX``; bindings are not sites."""
        if pattern is None:
            return
        t = pattern.type
        if t in ("tuple_struct_pattern", "struct_pattern"):
            typ = pattern.child_by_field_name("type")
            if typ is not None:
                segments = path_segments(typ)
                if segments and segments != ["Self"] and not (len(segments) == 1 and segments[0] in S.PRELUDE):
                    self._path_site(S.TYPE if t == "struct_pattern" else S.REF, typ, scope, owner)
            for child in pattern.named_children:
                if typ is None or not same_node(child, typ):
                    if child.type == "field_pattern":
                        self._pattern(child.child_by_field_name("pattern"), scope, owner)
                    else:
                        self._pattern(child, scope, owner)
            return
        if t == "scoped_identifier":
            self._path_site(S.REF, pattern, scope, owner)
            return
        if t == "identifier":
            word = _text(pattern)
            if word[:1].isupper() and word not in S.PRELUDE:
                self._path_site(S.REF, pattern, scope, owner)
            return
        if t in _LITERALS or t.endswith("_literal"):
            return
        guard = pattern.child_by_field_name("condition") if t == "match_pattern" else None
        for child in pattern.named_children:
            if guard is not None and same_node(child, guard):
                self._expr(child, scope, owner)
            else:
                self._pattern(child, scope, owner)

    def _block(self, body: Node, scope: _Scope, owner: str) -> None:
        declared = self.declared.setdefault(scope.prefix, set())
        for child in body.named_children:
            if child.type in ("struct_item", "enum_item", "union_item", "trait_item", "type_item"):
                declared.add(_text(child.child_by_field_name("name")))
        for child in body.named_children:
            if child.type in _ITEM_KINDS:
                self._item(child, scope.child(fn=None, self_path=scope.self_path), owner)
            else:
                self._expr(child, scope, owner)

    def _args(self, args: Node | None, scope: _Scope, owner: str) -> None:
        for arg in args.named_children if args is not None else ():
            if arg.type in ("identifier", "scoped_identifier"):
                self._name_use(S.CALLBACK, arg, scope, owner)
            else:
                self._expr(arg, scope, owner)

    def _name_use(self, kind: str, node: Node, scope: _Scope, owner: str) -> None:
        if node.type == "identifier":
            word = _text(node)
            if self._is_local(word, scope) or word in S.PRELUDE or word in scope.generics:
                return
        self._path_site(kind, node, scope, owner)

    def _receiver_site(self, kind: str, member: Node, receiver: Node | None, scope: _Scope, owner: str) -> None:
        """``x.m()`` or ``x.f``: a site on ``m``/``f`` with what the syntax says about ``x``'s type."""
        if member.type != "field_identifier":
            if receiver is not None:
                self._expr(receiver, scope, owner)
            return
        if receiver is None:
            return
        if receiver.type in ("identifier", "self"):
            qualifier = _text(receiver)
            encoding = self.value_encoding(receiver, scope, scope.fn)
            if receiver.type == "identifier" and not self._is_local(qualifier, scope):
                self._name_use(S.REF, receiver, scope, owner)
        else:
            qualifier = "?"
            encoding = self.value_encoding(receiver, scope, scope.fn)
            self._expr(receiver, scope, owner)
        self._site_at(kind, member, (scope.module, qualifier, S.RECV, encoding, scope.block), owner)

    def _expr(self, node: Node | None, scope: _Scope, owner: str) -> None:
        if node is None:
            return
        t = node.type
        if t in _ITEM_KINDS:
            self._item(node, scope.child(fn=None), owner)
            return
        if t in ("identifier", "scoped_identifier"):
            self._name_use(S.REF, node, scope, owner)
            return
        if t == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type == "generic_function":
                self._type(callee.child_by_field_name("type_arguments"), scope, owner)
                callee = callee.child_by_field_name("function")
            if callee is None:
                pass
            elif callee.type == "field_expression":
                member = callee.child_by_field_name("field")
                if member is not None:
                    self._receiver_site(S.CALL, member, callee.child_by_field_name("value"), scope, owner)
            elif callee.type in ("identifier", "scoped_identifier"):
                self._name_use(S.CALL, callee, scope, owner)
            else:
                self._expr(callee, scope, owner)
            self._args(node.child_by_field_name("arguments"), scope, owner)
            return
        if t == "field_expression":
            member = node.child_by_field_name("field")
            if member is not None:
                self._receiver_site(S.FIELD, member, node.child_by_field_name("value"), scope, owner)
            return
        if t == "macro_invocation":
            self._macro(node, scope, owner)
            return
        if t == "struct_expression":
            name = node.child_by_field_name("name")
            encoding = ""
            if name is not None:
                segments = path_segments(name)
                if segments == ["Self"]:
                    encoding = scope.self_encoding
                elif "?" not in segments:
                    if name.type == "generic_type_with_turbofish":
                        self._type(name.child_by_field_name("type_arguments"), scope, owner)
                    base = name.child_by_field_name("type") if name.type.startswith("generic_type") else name
                    if base is not None and segments[-1:] != ["Self"]:
                        self._path_site(S.TYPE, base, scope, owner)
                    encoding = f"type:{'::'.join(self._self_path(segments, scope))}"
            body = node.child_by_field_name("body")
            for init in body.named_children if body is not None else ():
                if init.type == "field_initializer":
                    fname = init.child_by_field_name("field")
                    if fname is not None and fname.type == "field_identifier":
                        self._site_at(S.FIELD, fname, (scope.module, "", S.RECV, encoding, scope.block), owner)
                    self._expr(init.child_by_field_name("value"), scope, owner)
                elif init.type == "shorthand_field_initializer":
                    ident = init.named_children[0] if init.named_children else None
                    if ident is not None:
                        self._site_at(S.FIELD, ident, (scope.module, "", S.RECV, encoding, scope.block), owner)
                        self._name_use(S.REF, ident, scope, owner)
                else:
                    self._expr(init, scope, owner)
            return
        if t == "let_declaration":
            self._type(node.child_by_field_name("type"), scope, owner)
            self._pattern(node.child_by_field_name("pattern"), scope, owner)
            self._expr(node.child_by_field_name("value"), scope, owner)
            self._expr(node.child_by_field_name("alternative"), scope, owner)
            return
        if t in ("let_condition", "for_expression", "match_arm"):
            for child in node.named_children:
                if same_node(child, node.child_by_field_name("pattern")):
                    self._pattern(child, scope, owner)
                else:
                    self._expr(child, scope, owner)
            return
        if t == "closure_expression":
            params = node.child_by_field_name("parameters")
            for param in params.named_children if params is not None else ():
                if param.type == "parameter":
                    self._type(param.child_by_field_name("type"), scope, owner)
                    self._pattern(param.child_by_field_name("pattern"), scope, owner)
            self._type(node.child_by_field_name("return_type"), scope, owner)
            self._expr(node.child_by_field_name("body"), scope, owner)
            return
        if t == "type_cast_expression":
            self._expr(node.child_by_field_name("value"), scope, owner)
            self._type(node.child_by_field_name("type"), scope, owner)
            return
        if t in ("block", "unsafe_block", "async_block", "const_block", "loop_expression"):
            for child in node.named_children:
                if child.type in _ITEM_KINDS:
                    self._item(child, scope.child(fn=None), owner)
                else:
                    self._expr(child, scope, owner)
            return
        if t in (
            "field_identifier",
            "label",
            "lifetime",
            "self",
            "super",
            "crate",
            "metavariable",
            "line_comment",
            "block_comment",
            "attribute_item",
            "inner_attribute_item",
        ) or t in _LITERALS - {"array_expression", "tuple_expression", "range_expression"}:
            return
        if t in ("type_identifier", "scoped_type_identifier", "generic_type", "reference_type", "tuple_type"):
            self._type(node, scope, owner)
            return
        for child in node.named_children:
            self._expr(child, scope, owner)


def _first_paragraph(lines: list[str]) -> str:
    para: list[str] = []
    for line in lines:
        line = line.strip()
        if not line:
            if para:
                break
            continue
        para.append(line)
    return _collapse(" ".join(para))


def _visibility(node: Node) -> str:
    return "pub" if any(c.type == "visibility_modifier" for c in node.named_children) else ""


def _is_pub(node: Node) -> bool:
    """``pub`` exactly: the declaration is part of its crate's interface (``pub(crate)`` is not)."""
    return any(c.type == "visibility_modifier" and _text(c) == "pub" for c in node.named_children)


def same_node(a: Node | None, b: Node | None) -> bool:
    """The same node of one tree (tree-sitter hands out new wrappers for one node)."""
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _base_type(node: Node | None) -> Node | None:
    """The nominal type under references and generic arguments: ``&'a mut Wrapper<T>`` → ``Wrapper``'s path."""
    while node is not None and node.type in ("reference_type", "pointer_type"):
        node = node.child_by_field_name("type")
    if node is not None and node.type == "generic_type":
        return node
    return node


def _type_arguments(node: Node | None) -> Node | None:
    if node is not None and node.type in ("generic_type", "generic_type_with_turbofish"):
        return node.child_by_field_name("type_arguments")
    return None


def _bound_traits(bound: Node) -> list[Node]:
    """The trait paths a bound names: ``Tr``, ``a::Tr<X>``, ``for<'a> Tr<'a>``; not lifetimes, not ``?Sized``."""
    t = bound.type
    if t in ("type_identifier", "scoped_type_identifier", "generic_type"):
        return [bound]
    if t == "higher_ranked_trait_bound":
        value = bound.child_by_field_name("type")
        return _bound_traits(value) if value is not None else []
    if t == "function_type":
        return []
    if t == "bounded_type" or t == "trait_bounds":
        return [n for c in bound.named_children for n in _bound_traits(c)]
    return []


def _pattern_bindings(pattern: Node) -> list[str]:
    """Names a pattern binds: lower-case identifiers outside paths (``Some(x)`` binds x, ``E::A`` nothing)."""
    out: list[str] = []
    stack = [pattern]
    while stack:
        cur = stack.pop()
        t = cur.type
        if t == "identifier":
            word = _text(cur)
            if word[:1].islower() or word[:1] == "_":
                out.append(word)
            continue
        if t == "shorthand_field_identifier":
            out.append(_text(cur))
            continue
        if t in _PATTERN_PATHS:
            continue
        typ = cur.child_by_field_name("type") if t in ("tuple_struct_pattern", "struct_pattern") else None
        guard = cur.child_by_field_name("condition") if t == "match_pattern" else None
        for i, child in enumerate(cur.named_children):
            if (typ is not None and same_node(child, typ)) or (guard is not None and same_node(child, guard)):
                continue
            if (
                t == "field_pattern"
                and cur.field_name_for_named_child(i) == "name"
                and cur.child_by_field_name("pattern") is not None
            ):
                continue
            stack.append(child)
    return out
