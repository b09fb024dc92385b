"""Python extraction: the declarations and reference sites of one file, from its tree-sitter tree.

One pass over the tree with a scope stack. Before a function or class body is
visited, its bindings are collected (Python decides locality for a whole
function, not from the first assignment), so each reference site records
where its head name is bound; the resolver then only needs the other files.

``@overload`` stubs followed by their implementation are not declarations of
their own: the implementation is (its uses are attributed to it). Other
duplicate qualified names in one file (conditional redefinitions, property
setters, overloads without an implementation as in stubs) keep the first
declaration as it is and give later ones a ``#2``, ``#3`` suffix; declarations nested in a suffixed one are
named under the suffixed name. A module-level variable assigned more than once
is one variable, declared by its first assignment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_python
from tree_sitter import Language, Node, Query, QueryCursor

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.python import sites as S
from indexer.languages.python.modules import LANGUAGE
from indexer.languages.syntax import extract_tree
from indexer.languages.syntax import node_text as _text

EXTRACTOR_VERSION = "python-ts-7"

_TS_LANGUAGE = Language(tree_sitter_python.language())
_WALRUS_QUERY = Query(_TS_LANGUAGE, "(named_expression name: (identifier) @name)")

_MAX_TEXT = 200
_MAX_DETAIL = 80
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SPACE_AFTER_OPEN = re.compile(r"([(\[]) ")
_SPACE_BEFORE_CLOSE = re.compile(r",? ([)\]])")

# Receivers whose type is a builtin literal: "".join(...) is no reference to anything of ours.
_LITERALS = frozenset(
    {
        "string",
        "concatenated_string",
        "integer",
        "float",
        "true",
        "false",
        "none",
        "list",
        "dictionary",
        "set",
        "tuple",
        "list_comprehension",
        "dictionary_comprehension",
        "set_comprehension",
    }
)
# A literal's value is an instance of a builtin type: followed as a call of that builtin.
_LITERAL_TYPES = {
    "string": "str",
    "concatenated_string": "str",
    "integer": "int",
    "float": "float",
    "true": "bool",
    "false": "bool",
    "list": "list",
    "dictionary": "dict",
    "set": "set",
    "tuple": "tuple",
    "list_comprehension": "list",
    "dictionary_comprehension": "dict",
    "set_comprehension": "set",
}
_COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"}
)
_PATTERNS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "tuple",
        "list",
        "expression_list",
        "parenthesized_expression",
        "list_splat_pattern",
        "as_pattern_target",
        "list_splat",
    }
)
_CLAUSES = frozenset({"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"})
_SCOPE_OWNERS = frozenset({"function_definition", "lambda", "class_definition", "module"})
_PROPERTY_ACCESSORS = frozenset({"setter", "getter", "deleter"})
# Builtins through which a module can create its own names at run time.
_NAMESPACE_WRITERS = frozenset({"globals", "exec"})
_CLASS_FIRST_PARAM = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})

# Binding modes collected before a body is visited.
_DEF, _IMPORT, _ANN, _VALUE, _OTHER = "def", "import", "ann", "value", "other"
# Scope status of a local with a followable value (a ``local`` head binding, but never a declaration).
_TYPED = "typed"


def extract(path: str, source: bytes, package: str) -> FileFacts:
    """Declarations and reference sites of one Python file; a syntax error makes it partial (see extract_tree)."""
    return extract_tree(
        _TS_LANGUAGE,
        LANGUAGE,
        path,
        source,
        package,
        lambda root, text: _Extractor(text, package, path).run(root),
        python=True,
    )


def _is_test_module(path: str) -> bool:
    """Whether pytest collects tests from the file by its default ``python_files`` (``test_*.py``, ``*_test.py``)."""
    base = path.rsplit("/", 1)[-1]
    return base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))


def _decorator_call(decorator: Node) -> tuple[Node | None, Node | None]:
    """(the decorator's callee or name, its argument list when it is a call)."""
    expr = next((c for c in decorator.named_children if c.type != "comment"), None)
    if expr is not None and expr.type == "call":
        return expr.child_by_field_name("function"), expr.child_by_field_name("arguments")
    return expr, None


def _last_name(node: Node | None) -> str:
    if node is None:
        return ""
    if node.type == "attribute":
        return _text(node.child_by_field_name("attribute"))
    return _text(node) if node.type == "identifier" else ""


def _string_value(node: Node | None) -> str | None:
    """The text of a plain string literal (no interpolation, no concatenation)."""
    if node is None or node.type != "string":
        return None
    parts = [c for c in node.named_children if c.type == "string_content"]
    if any(c.type == "interpolation" for c in node.named_children):
        return None
    return "".join(_text(c) for c in parts)


def _fixture_name(name: str, decorators: list[Node]) -> str | None:
    """The name a ``@pytest.fixture`` / ``@fixture`` function is requested by (``name=`` when given), else None."""
    for decorator in decorators:
        callee, args = _decorator_call(decorator)
        if _last_name(callee) != "fixture":
            continue
        if args is not None:
            for arg in args.named_children:
                if arg.type == "keyword_argument" and _text(arg.child_by_field_name("name")) == "name":
                    given = _string_value(arg.child_by_field_name("value"))
                    return given or None
        return name
    return None


def _parametrized_names(decorators: list[Node]) -> set[str]:
    """The argument names ``@pytest.mark.parametrize("a, b", …)`` gives a test (they are not fixtures)."""
    out: set[str] = set()
    for decorator in decorators:
        callee, args = _decorator_call(decorator)
        if _last_name(callee) != "parametrize" or args is None:
            continue
        first = next((a for a in args.named_children if a.type != "comment"), None)
        if first is not None and first.type == "keyword_argument":
            first = (
                first.child_by_field_name("value") if _text(first.child_by_field_name("name")) == "argnames" else None
            )
        text = _string_value(first)
        if text is not None:
            out.update(part.strip() for part in text.split(","))
        elif first is not None and first.type in ("list", "tuple"):
            out.update(v for c in first.named_children if (v := _string_value(c)))
    return out


_NESTED_SCOPES = frozenset({"function_definition", "class_definition", "lambda", "decorated_definition"})


def _given_values(body: Node | None) -> list[Node]:
    """The expressions a function's own ``return`` and ``yield`` statements give (not those of nested scopes);
    a bare ``return``/``yield`` gives None and so makes the value unknown (an empty list is returned then)."""
    if body is None:
        return []
    out: list[Node] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type in _NESTED_SCOPES:
            continue
        if node.type == "return_statement" or node.type == "yield":
            value = next((c for c in node.named_children if c.type != "comment"), None)
            if (
                value is None
                or value.type in ("expression_list", "pattern_list")
                or (node.type == "yield" and any(c.type == "from" for c in node.children))
            ):
                return []
            out.append(value)
            continue
        stack.extend(node.named_children)
    return out


@dataclass(eq=False)
class _Scope:
    """A namespace on the stack: module, class, function, or an inner lambda/comprehension."""

    kind: str  # "module" | "class" | "function" | "inner"
    qn: str  # qualified name of the declaration owning the scope ("" for the module)
    names: dict[str, str] = field(default_factory=dict)  # name -> head binding kind (see sites.py)
    class_qn: str = ""  # methods: the class their first parameter is bound to
    attrs: dict[str, list[tuple[str, str, str, str, int, int]]] = field(default_factory=dict)


@dataclass
class _Collected:
    """Bindings of one body, collected before the body is visited."""

    entries: dict[str, list[tuple[str, Node | None]]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def add(self, name: str, mode: str, node: Node | None = None) -> None:
        self.entries.setdefault(name, []).append((mode, node))


# Exceptions an ImportError is an instance of: a handler naming one of them (or a bare ``except:``) is a fallback.
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(clause: Node) -> bool:
    """Whether an except clause catches ImportError: bare, or naming it (or a base) alone or in a tuple."""
    caught = [c for c in clause.named_children if c.type not in ("block", "comment")]
    if not caught:
        return True
    head = caught[0]
    if head.type == "as_pattern" and head.named_children:
        head = head.named_children[0]
    names = head.named_children if head.type in ("tuple", "parenthesized_expression") else [head]
    return any(_text(n).rsplit(".", 1)[-1] in _IMPORT_ERRORS for n in names)


def _collapse(text: str, limit: int = _MAX_TEXT) -> str:
    """Whitespace collapsed to single spaces, no padding inside brackets, cut to ``limit`` characters."""
    text = " ".join(text.split())
    text = _SPACE_BEFORE_CLOSE.sub(r"\1", _SPACE_AFTER_OPEN.sub(r"\1", text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _doc_summary(text: str) -> str:
    """The first paragraph of a docstring on one line."""
    lines: list[str] = []
    for line in text.expandtabs().splitlines():
        if line.strip():
            lines.append(line.strip())
        elif lines:
            break
    return _collapse(" ".join(lines))


def _exported(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__") and len(name) > 4)


class _Extractor:
    """Walks one parsed file and accumulates its symbols and sites."""

    def __init__(self, source: bytes, package: str, path: str = "") -> None:
        self.source = source
        self.package = package
        self.test_module = _is_test_module(path)
        self.symbols: list[SymbolFact] = []
        self.sites: list[Site] = []
        self.seen_qn: dict[str, int] = {}
        # Per block being visited: names whose @overload stubs are followed by an implementation.
        self.overloaded: list[frozenset[str]] = []
        self.module_vars: set[str] = set()
        self.stack: list[_Scope] = []
        self.enclosing = ""  # declaration that sites are attributed to ("" = the module symbol)
        self.walrus: dict[tuple[int, int], list[str]] = {}
        self.dynamic: Site | None = None  # first globals()/exec() call: the module namespace is open-ended
        self.module_bindings: dict[str, list[tuple[str, Node | None]]] = {}
        self.origins: dict[str, str] = {}  # a module-level import's bound name -> what it imports (dotted)

    # -- entry -----------------------------------------------------------------------------------

    def run(self, root: Node) -> tuple[tuple[SymbolFact, ...], tuple[Site, ...]]:
        """Extract everything; returns (symbols, sites) in source order."""
        if b":=" in self.source:
            self._index_walrus(root)
        collected = self._collect_body(root, root)
        self.module_bindings = collected.entries
        self.origins = _import_origins(root)
        module = _Scope("module", "")
        for name in collected.entries:
            module.names[name] = S.MODULE
        self.stack.append(module)
        self._emit_module_binds(collected)
        self._block(root)
        self.stack.pop()
        if self.dynamic is not None:
            self.sites.append(self.dynamic)
        self.symbols.insert(0, self._module_symbol(root))
        self.sites.sort(key=lambda s: (s.line, s.col))
        return tuple(self.symbols), tuple(self.sites)

    def _module_symbol(self, root: Node) -> SymbolFact:
        lines = self.source.split(b"\n")
        if len(lines) > 1 and lines[-1] == b"":
            lines.pop()
        name = self.package.rsplit(".", 1)[-1]
        return SymbolFact(
            name=name,
            qualified_name=self.package,
            kind="module",
            start_line=1,
            start_col=0,
            end_line=max(len(lines), 1),
            end_col=len(lines[-1]) if lines else 0,
            doc=self._docstring(root),
            exported=_exported(name),
            container="",
        )

    def _index_walrus(self, root: Node) -> None:
        """Map each function/lambda/class/module node to the names its walrus expressions bind."""
        for node in QueryCursor(_WALRUS_QUERY).captures(root).get("name", []):
            owner = node.parent
            while owner is not None and owner.type not in _SCOPE_OWNERS:
                owner = owner.parent
            if owner is not None:
                self.walrus.setdefault((owner.start_byte, owner.end_byte), []).append(_text(node))

    # -- binding collection (before a body is visited) ---------------------------------------------

    def _collect_body(self, owner: Node, body: Node | None) -> _Collected:
        out = _Collected()
        if body is not None:
            self._collect_block(body, out)
        for name in self.walrus.get((owner.start_byte, owner.end_byte), ()):
            out.add(name, _OTHER)
        return out

    def _collect_block(self, block: Node, out: _Collected) -> None:
        for stmt in block.named_children:
            self._collect_stmt(stmt, out)

    def _collect_stmt(self, stmt: Node, out: _Collected) -> None:
        t = stmt.type
        if t == "decorated_definition":
            defn = stmt.child_by_field_name("definition")
            if defn is not None:
                out.add(_text(defn.child_by_field_name("name")), _DEF)
        elif t in ("function_definition", "class_definition"):
            out.add(_text(stmt.child_by_field_name("name")), _DEF)
        elif t == "import_statement":
            for item in stmt.named_children:
                if item.type == "aliased_import":
                    out.add(_text(item.child_by_field_name("alias")), _IMPORT)
                elif item.type == "dotted_name":
                    out.add(_text(item.named_children[0]), _IMPORT)
        elif t == "import_from_statement":
            for item in stmt.children_by_field_name("name"):
                if item.type == "aliased_import":
                    out.add(_text(item.child_by_field_name("alias")), _IMPORT)
                else:
                    out.add(_text(item), _IMPORT)
        elif t == "expression_statement":
            for expr in stmt.named_children:
                if expr.type == "assignment":
                    self._collect_assignment(expr, out)
                elif expr.type == "augmented_assignment":
                    self._collect_targets(expr.child_by_field_name("left"), out)
        elif t == "for_statement":
            self._collect_targets(stmt.child_by_field_name("left"), out)
            self._collect_children(stmt, out)
        elif t == "with_statement":
            for clause in stmt.named_children:
                if clause.type == "with_clause":
                    for item in clause.named_children:
                        value = item.child_by_field_name("value")
                        if value is not None and value.type == "as_pattern":
                            self._collect_as_target(value, out)
            self._collect_children(stmt, out)
        elif t == "global_statement":
            out.declared_global.update(_text(n) for n in stmt.named_children if n.type == "identifier")
        elif t == "nonlocal_statement":
            out.declared_nonlocal.update(_text(n) for n in stmt.named_children if n.type == "identifier")
        elif t == "type_alias_statement":
            left = stmt.child_by_field_name("left")
            if left is not None:
                self._collect_targets(left, out)
        elif t == "match_statement":
            for block in stmt.named_children:
                if block.type == "block":
                    for case in block.named_children:
                        if case.type == "case_clause":
                            for pattern in case.named_children:
                                if pattern.type == "case_pattern":
                                    for name in self._pattern_captures(pattern):
                                        out.add(name, _OTHER)
                            self._collect_children(case, out)
        else:
            self._collect_children(stmt, out)

    def _collect_children(self, node: Node, out: _Collected) -> None:
        """Collect from the blocks and clauses of a compound statement."""
        for child in node.named_children:
            if child.type == "block":
                self._collect_block(child, out)
            elif child.type in _CLAUSES:
                for part in child.named_children:
                    if part.type == "as_pattern":
                        self._collect_as_target(part, out)
                self._collect_children(child, out)

    def _collect_as_target(self, as_pattern: Node, out: _Collected) -> None:
        for child in as_pattern.named_children:
            if child.type == "as_pattern_target":
                self._collect_targets(child, out)

    def _collect_assignment(self, node: Node, out: _Collected) -> None:
        value = node.child_by_field_name("right")
        while value is not None and value.type == "assignment":
            value = value.child_by_field_name("right")
        current: Node | None = node
        while current is not None and current.type == "assignment":
            left = current.child_by_field_name("left")
            ann = current.child_by_field_name("type")
            if left is not None and left.type == "identifier":
                if ann is not None:
                    out.add(_text(left), _ANN, ann)
                else:
                    out.add(_text(left), _VALUE, value)
            elif left is not None:
                self._collect_targets(left, out)
            current = current.child_by_field_name("right")

    def _collect_targets(self, target: Node | None, out: _Collected) -> None:
        if target is None:
            return
        if target.type == "identifier":
            out.add(_text(target), _OTHER, target)
        elif target.type in _PATTERNS or target.type == "type":
            for child in target.named_children:
                self._collect_targets(child, out)

    def _pattern_captures(self, pattern: Node) -> list[str]:
        """Names a match-case pattern binds (captures, star captures, ``as`` names)."""
        names: list[str] = []
        stack = [pattern]
        while stack:
            node = stack.pop()
            t = node.type
            if t == "dotted_name":
                parent = node.parent
                if node.named_child_count == 1 and not (parent is not None and parent.type == "class_pattern"):
                    names.append(_text(node))
            elif t in ("splat_pattern", "as_pattern"):
                for child in node.named_children:
                    if child.type == "identifier":
                        names.append(_text(child))
                    else:
                        stack.append(child)
            elif t == "keyword_pattern":
                stack.extend(node.named_children[1:])
            else:
                stack.extend(node.named_children)
        return [n for n in names if n != "_"]

    # -- scopes and head bindings -----------------------------------------------------------------

    def _classify(self, name: str) -> tuple[str, str]:
        """Where ``name`` is bound as seen from the top of the scope stack."""
        binding, scope, _ = self._lookup(name)
        return binding, scope

    def _lookup(self, name: str) -> tuple[str, str, str]:
        """(head binding, scope, status in that scope) of ``name``."""
        innermost = True
        for scope in reversed(self.stack):
            if scope.kind == "class" and not innermost:
                continue  # a class body is not visible from the functions inside it
            innermost = False
            binding = scope.names.get(name)
            if binding is None:
                continue
            if scope.kind == "module":
                return S.MODULE, "", binding
            if binding in (S.LOCAL, _TYPED):
                return S.LOCAL, scope.qn, binding
            if binding in (S.SELF, S.CLS):
                return binding, scope.class_qn, binding
            return S.UNTYPED, "", binding
        return S.MODULE, "", S.MODULE

    def _method_class(self) -> str:
        for scope in reversed(self.stack):
            if scope.kind == "function":
                return scope.class_qn
            if scope.kind != "inner":
                return ""
        return ""

    def _decide(self, collected: _Collected, scope: _Scope, params: dict[str, str]) -> list[tuple[str, Node, str]]:
        """Fill ``scope.names`` from collected bindings; return the (name, node, mode) binds to emit."""
        binds: list[tuple[str, Node, str]] = []
        for name, entries in collected.entries.items():
            if name in collected.declared_global or name in collected.declared_nonlocal:
                continue
            modes = [mode for mode, _ in entries]
            if _DEF in modes or _IMPORT in modes:
                scope.names[name] = S.LOCAL
            elif name in params:
                scope.names[name] = params[name]
            elif _ANN in modes:
                node = next(n for mode, n in entries if mode == _ANN)
                scope.names[name] = S.UNTYPED
                if node is not None and self._type_chain(node) is not None:
                    scope.names[name] = _TYPED
                    binds.append((name, node, S.ANNOTATION))
            elif all(mode == _VALUE for mode in modes) and self._same_value(entries):
                scope.names[name] = _TYPED
                node = entries[0][1]
                assert node is not None
                binds.append((name, node, S.VALUE))
            else:
                scope.names[name] = S.UNTYPED
        for name, binding in params.items():
            scope.names.setdefault(name, binding)
        return binds

    def _same_value(self, entries: list[tuple[str, Node | None]]) -> bool:
        """Whether every assignment binds the same followable chain (flow-insensitive typing)."""
        chains = {tuple(c) if (c := self._value_chain(n)) else None for _, n in entries}
        return len(chains) == 1 and None not in chains

    def _emit_module_binds(self, collected: _Collected) -> None:
        for name, entries in collected.entries.items():
            modes = [mode for mode, _ in entries]
            if _DEF in modes or _IMPORT in modes:
                continue
            first = next((n for _, n in entries if n is not None), None)
            line, col = self._pos(first) if first is not None else (1, 0)
            if _ANN in modes:
                node = next(n for mode, n in entries if mode == _ANN)
                assert node is not None
                parts = self._type_chain(node)
                self._bind_site(S.BIND, name, parts, S.ANNOTATION, node, "")
            elif _VALUE in modes and all(mode == _VALUE for mode in modes) and self._same_value(entries):
                node = entries[0][1]
                assert node is not None
                self._bind_site(S.BIND, name, self._value_chain(node), S.VALUE, node, "")
            elif _VALUE not in modes:
                # Bound only by other forms (for targets, with/except names, walrus): known, value unknown.
                self.sites.append(Site(S.BIND, name, line, col, "", ("", "", "", S.VALUE)))

    def _bind_site(
        self,
        kind: str,
        name: str,
        parts: list[str] | None,
        mode: str,
        node: Node,
        enclosing: str,
        binding: tuple[str, str] | None = None,
    ) -> None:
        line, col = self._pos(node)
        if not parts:
            self.sites.append(Site(kind, name, line, col, enclosing, ("", "", "", mode)))
            return
        if binding is None:
            binding = self._head_binding(parts)
        if binding is None:
            self.sites.append(Site(kind, name, line, col, enclosing, ("", "", "", mode)))
            return
        self.sites.append(Site(kind, name, line, col, enclosing, (".".join(parts), binding[0], binding[1], mode)))

    def _head_binding(self, parts: list[str]) -> tuple[str, str] | None:
        head = parts[0]
        if head == S.SUPER_HEAD:
            cls = self._method_class()
            return (S.SUPER, cls) if cls else None
        if head == S.UNKNOWN_HEAD:
            return S.UNKNOWN, ""
        return self._classify(S.segment(head)[0])

    # -- statements ---------------------------------------------------------------------------------

    def _block(self, block: Node) -> None:
        self.overloaded.append(_overloads_with_implementation(block))
        for stmt in block.named_children:
            self._stmt(stmt)
        self.overloaded.pop()

    def _stmt(self, node: Node) -> None:
        t = node.type
        if t == "decorated_definition":
            defn = node.child_by_field_name("definition")
            decorators = [d for d in node.named_children if d.type == "decorator"]
            if defn is not None and defn.type == "function_definition":
                self._function(defn, node, decorators)
            elif defn is not None and defn.type == "class_definition":
                self._class(defn, node, decorators)
        elif t == "function_definition":
            self._function(node, node, [])
        elif t == "class_definition":
            self._class(node, node, [])
        elif t == "expression_statement":
            for expr in node.named_children:
                if expr.type == "assignment":
                    self._assignment(expr, node)
                elif expr.type == "augmented_assignment":
                    self._expr(expr.child_by_field_name("left"))
                    self._expr(expr.child_by_field_name("right"))
                else:
                    self._expr(expr)
        elif t == "import_statement":
            self._import(node)
        elif t == "import_from_statement":
            self._import_from(node)
        elif t == "for_statement":
            self._store(node.child_by_field_name("left"))
            self._expr(node.child_by_field_name("right"))
            self._compound(node, skip={"left", "right"})
        elif t == "with_statement":
            for clause in node.named_children:
                if clause.type == "with_clause":
                    for item in clause.named_children:
                        self._with_item(item)
                elif clause.type == "block":
                    self._block(clause)
        elif t == "match_statement":
            self._match(node)
        elif t == "try_statement":
            self._try(node)
        elif t == "delete_statement":
            for target in node.named_children:
                self._store(target)
        elif t == "type_alias_statement":
            self._type_alias(node)
        elif t in (
            "global_statement",
            "nonlocal_statement",
            "future_import_statement",
            "pass_statement",
            "break_statement",
            "continue_statement",
            "comment",
        ):
            return
        else:
            self._compound(node)

    def _compound(self, node: Node, skip: frozenset[str] | set[str] = frozenset()) -> None:
        """Visit the blocks, clauses and expressions of a statement not handled specially."""
        for i, child in enumerate(node.children):
            if not child.is_named or (skip and node.field_name_for_child(i) in skip):
                continue
            self._compound_part(child)

    def _compound_part(self, child: Node) -> None:
        if child.type == "block":
            self._block(child)
        elif child.type in _CLAUSES:
            for part in child.named_children:
                if part.type == "block":
                    self._block(part)
                elif part.type == "as_pattern":
                    self._with_item(part)
                else:
                    self._expr(part)
        elif child.type != "comment":
            self._expr(child)

    def _try(self, node: Node) -> None:
        """A try statement, visited as any compound; then an ``alt`` site for each import of its body and of its
        ImportError handlers that binds a name both bind (``try: from ._speedups import f`` / ``except
        ImportError: from ._native import f``): a checker reads the first, the run time may take a fallback."""
        marks: list[tuple[str, int, int]] = []
        for child in node.named_children:
            start = len(self.sites)
            self._compound_part(child)
            if child.type == "block":
                marks.append(("try", start, len(self.sites)))
            elif child.type in ("except_clause", "except_group_clause") and _catches_import_error(child):
                marks.append(("except", start, len(self.sites)))
        scope = self.stack[-1].qn
        bound: dict[str, dict[str, list[Site]]] = {}
        for role, start, end in marks:
            for site in self.sites[start:end]:
                if site.enclosing != scope or site.kind not in (S.IMPORT, S.FROM):
                    continue
                name = site.extra[1] if site.kind == S.FROM else site.extra[0] or site.name.split(".")[0]
                bound.setdefault(name, {}).setdefault(role, []).append(site)
        group = f"{node.start_point[0] + 1}:{node.start_point[1]}"
        for name, roles in bound.items():
            if "try" in roles and "except" in roles:
                for role, site in (("try", roles["try"][0]), *(("except", s) for s in roles["except"])):
                    self.sites.append(Site(S.ALT, name, site.line, site.col, scope, (group, role)))

    def _with_item(self, item: Node) -> None:
        value = item.child_by_field_name("value") if item.type == "with_item" else item
        if value is None:
            return
        if value.type == "as_pattern":
            for child in value.named_children:
                if child.type == "as_pattern_target":
                    self._store(child)
                else:
                    self._expr(child)
        else:
            self._expr(value)

    def _match(self, node: Node) -> None:
        for child in node.named_children:
            if child.type == "block":
                for case in child.named_children:
                    if case.type != "case_clause":
                        continue
                    for part in case.named_children:
                        if part.type == "case_pattern":
                            self._pattern_refs(part)
                        elif part.type == "block":
                            self._block(part)
                        elif part.type == "if_clause":
                            self._expr(part)
            elif child.type != "comment":
                self._expr(child)

    def _pattern_refs(self, pattern: Node) -> None:
        """Class patterns and dotted value patterns are references; captures are not."""
        stack = [pattern]
        while stack:
            node = stack.pop()
            if node.type == "dotted_name":
                parent = node.parent
                if node.named_child_count > 1 or (parent is not None and parent.type == "class_pattern"):
                    self._chain_site(S.REF, [_text(n) for n in node.named_children], node)
            elif node.type == "keyword_pattern":
                stack.extend(node.named_children[1:])
            else:
                stack.extend(node.named_children)

    def _type_alias(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is not None and self.stack[-1].kind == "module":
            name_node = left.named_children[0] if left.type == "type" and left.named_children else left
            if name_node.type == "identifier":
                self._variable(_text(name_node), node, "type " + _collapse(_text(node)))
        if right is not None:
            self._type(right)

    def _import(self, node: Node) -> None:
        for item in node.named_children:
            if item.type == "aliased_import":
                dotted = item.child_by_field_name("name")
                alias = _text(item.child_by_field_name("alias"))
            elif item.type == "dotted_name":
                dotted, alias = item, ""
            else:
                continue
            if dotted is None:
                continue
            line, col = self._pos(dotted)
            self.sites.append(Site(S.IMPORT, _text(dotted), line, col, self.stack[-1].qn, (alias,)))

    def _import_from(self, node: Node) -> None:
        module = node.child_by_field_name("module_name")
        spec = "".join(_text(module).split())
        scope = self.stack[-1].qn
        for child in node.named_children:
            if child.type == "wildcard_import":
                line, col = self._pos(child)
                self.sites.append(Site(S.STAR, spec, line, col, scope, ()))
        for item in node.children_by_field_name("name"):
            if item.type == "aliased_import":
                name_node = item.child_by_field_name("name")
                bound = _text(item.child_by_field_name("alias"))
            else:
                name_node, bound = item, _text(item)
            if name_node is None:
                continue
            name = _text(name_node)
            line, col = self._pos(name_node)
            self.sites.append(Site(S.FROM, name, line, col, scope, (spec, bound or name)))

    def _assignment(self, node: Node, stmt: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        ann = node.child_by_field_name("type")
        if ann is not None:
            self._type(ann)
        value = right
        scope = self.stack[-1]
        held = ""  # a module-level variable holding code: the uses in its value are its own
        if left is not None and left.type == "identifier" and scope.kind == "module":
            name = _text(left)
            sig = f"{name}: {_collapse(_text(ann))}" if ann is not None else ""
            if right is not None and right.type != "assignment" and self._holds_callable(right, ann):
                held = self._variable(name, stmt, sig, callable=True)
            else:
                self._variable(name, stmt, sig)
        if right is not None and right.type == "assignment":
            self._assignment(right, stmt)
            while value is not None and value.type == "assignment":
                value = value.child_by_field_name("right")
        elif right is not None:
            saved, self.enclosing = self.enclosing, held or self.enclosing
            try:
                self._expr(right)
            finally:
                self.enclosing = saved
        if left is None:
            return
        if left.type == "identifier":
            if scope.kind == "class":
                self._record_attr(scope, _text(left), left, value, ann)
        elif left.type == "attribute":
            self._self_attribute(left, value, ann)
            self._store(left)
        else:
            stack = [left]
            while stack:  # self.a, self.b = pair(): attributes of unknown value
                node = stack.pop()
                if node.type == "attribute":
                    self._self_attribute(node, None, None)
                elif node.type in _PATTERNS:
                    stack.extend(node.named_children)
            self._store(left)

    def _self_attribute(self, target: Node, value: Node | None, ann: Node | None) -> None:
        """Record ``self.x = value`` (or ``cls.x``) in a method as an attribute of the method's class."""
        obj = target.child_by_field_name("object")
        attr = target.child_by_field_name("attribute")
        if obj is None or obj.type != "identifier" or attr is None:
            return
        binding = self._classify(_text(obj))
        if binding[0] not in (S.SELF, S.CLS):
            return
        owner = next((s for s in reversed(self.stack) if s.kind == "class" and s.qn == binding[1]), None)
        if owner is not None:
            self._record_attr(owner, _text(attr), attr, value, ann)

    def _record_attr(self, owner: _Scope, name: str, node: Node, value: Node | None, ann: Node | None) -> None:
        """Remember one binding of an instance attribute; merged into an ``attr`` site at class end."""
        line, col = self._pos(node)
        if ann is not None:
            parts, mode = self._type_chain(ann), S.ANNOTATION
        else:
            parts, mode = self._value_chain(value), S.VALUE
        binding = self._head_binding(parts) if parts else None
        if parts and binding is not None and binding[0] != S.UNTYPED:
            owner.attrs.setdefault(name, []).append((".".join(parts), binding[0], binding[1], mode, line, col))
        else:
            owner.attrs.setdefault(name, []).append(("", "", "", S.VALUE, line, col))

    def _emit_attrs(self, scope: _Scope) -> None:
        for name, records in scope.attrs.items():
            chosen = next((r for r in records if r[3] == S.ANNOTATION and r[0]), None)
            if chosen is None:
                distinct = {r[:4] for r in records}
                chosen = records[0] if len(distinct) == 1 else ("", "", "", S.VALUE, records[0][4], records[0][5])
            chain, binding, bscope, mode, line, col = chosen
            self.sites.append(Site(S.ATTR, name, line, col, scope.qn, (chain, binding, bscope, mode)))

    def _store(self, target: Node | None) -> None:
        """An assignment target: bound names are not references, but objects and indexes are."""
        if target is None:
            return
        t = target.type
        if t == "identifier":
            return
        if t == "attribute":
            self._expr(target.child_by_field_name("object"))
        elif t == "subscript":
            self._expr(target.child_by_field_name("value"))
            for sub in target.children_by_field_name("subscript"):
                self._expr(sub)
        elif t in _PATTERNS:
            for child in target.named_children:
                self._store(child)
        else:
            self._expr(target)

    # -- declarations -----------------------------------------------------------------------------

    def _unique(self, qn: str) -> str:
        count = self.seen_qn.get(qn, 0) + 1
        self.seen_qn[qn] = count
        return qn if count == 1 else f"{qn}#{count}"

    def _prefix(self) -> str:
        return self.stack[-1].qn or self.package

    def _holds_callable(self, value: Node, ann: Node | None) -> bool:
        """Whether a module-level assignment's value is seen to be a function, a class or another callable.

        A ``lambda``; a call of a standard-library factory of callables or classes, named through this
        file's imports (``functools.partial``, ``collections.namedtuple``, ``typing.NamedTuple``/``TypedDict``/
        ``NewType``, the functional ``enum.Enum`` API, ``dataclasses.make_dataclass``, ``operator.itemgetter``
        and its kin; the builtin ``type`` with three arguments); another name for a function or class this
        module defines (``load = _load``); or a declared ``Callable[...]`` or ``type[...]``.
        """
        if value.type == "lambda":
            return True
        if ann is not None:
            head = ann.named_children[0] if ann.type == "type" and ann.named_children else ann
            if head.type == "generic_type" and head.named_children:
                head = head.named_children[0]
            elif head.type == "subscript":
                head = head.child_by_field_name("value")
            if self._origin(head) in _CALLABLE_TYPES:
                return True
        if value.type == "identifier":
            bindings = self.module_bindings.get(_text(value), [])
            return bool(bindings) and all(mode == _DEF for mode, _node in bindings)
        if value.type != "call":
            return False
        origin = self._origin(value.child_by_field_name("function"))
        if origin == "builtins.type":
            args = value.child_by_field_name("arguments")
            return args is not None and args.named_child_count == 3
        return origin in _CALLABLE_FACTORIES

    def _origin(self, node: Node | None) -> str:
        """What a name or dotted name denotes through this module's imports (``builtins.x`` for an unbound
        builtin), or ""."""
        parts: list[str] = []
        while node is not None and node.type == "attribute":
            parts.append(_text(node.child_by_field_name("attribute")))
            node = node.child_by_field_name("object")
        if node is None or node.type != "identifier":
            return ""
        head = _text(node)
        parts.append(self.origins.get(head, "") or ("" if head in self.module_bindings else f"builtins.{head}"))
        return ".".join(reversed(parts)) if parts[-1] else ""

    def _variable(self, name: str, stmt: Node, signature: str, *, callable: bool = False) -> str:
        """Declare a module-level variable (its first assignment); its qualified name, or "" if declared."""
        if name in self.module_vars:
            return ""
        self.module_vars.add(name)
        qn = self._unique(f"{self.package}.{name}")
        (sl, sc), (el, ec) = stmt.start_point, stmt.end_point
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind="variable",
                start_line=sl + 1,
                start_col=sc,
                end_line=el + 1,
                end_col=ec,
                signature=signature,
                exported=_exported(name),
                container=self.package,
                callable=callable,
            )
        )
        return qn

    def _declare(self, node: Node, start: Node, kind: str, signature: str, doc: str) -> str:
        name = _text(node.child_by_field_name("name"))
        container = self._prefix()
        qn = self._unique(f"{container}.{name}")
        (sl, sc), (el, ec) = start.start_point, node.end_point
        self.symbols.append(
            SymbolFact(
                name=name,
                qualified_name=qn,
                kind=kind,
                start_line=sl + 1,
                start_col=sc,
                end_line=el + 1,
                end_col=ec,
                signature=signature,
                doc=doc,
                exported=_exported(name),
                container=container,
            )
        )
        return qn

    def _function(self, node: Node, start: Node, decorators: list[Node]) -> None:
        outer = self.stack[-1]
        is_method = outer.kind == "class"
        name = _text(node.child_by_field_name("name"))
        params = node.child_by_field_name("parameters")
        ret = node.child_by_field_name("return_type")
        body = node.child_by_field_name("body")
        sig = "async def " if node.children and node.children[0].type == "async" else "def "
        sig += name + _text(node.child_by_field_name("type_parameters")) + _text(params)
        if ret is not None:
            sig += " -> " + _text(ret)
        if self.overloaded and name in self.overloaded[-1] and any(_is_overload(d) for d in decorators):
            # An @overload stub of a function that has an implementation: the implementation is the
            # declaration (so its name leads to its body); the stub's annotations are its uses.
            qn = f"{self._prefix()}.{name}"
        else:
            qn = self._declare(
                node, start, "method" if is_method else "function", _collapse(sig), self._docstring(body)
            )

        saved, self.enclosing = self.enclosing, qn
        decorator_names: set[str] = set()
        for decorator in decorators:
            parts = self._decorator(decorator)
            if parts:
                decorator_names.add(parts[-1])
        first_binding = ""
        if is_method and "staticmethod" not in decorator_names:
            classy = "classmethod" in decorator_names or name in _CLASS_FIRST_PARAM
            first_binding = S.CLS if classy else S.SELF
        param_bindings, param_binds = self._parameters(params, first_binding)
        fixture = _fixture_name(name, decorators)
        requests = self._fixture_requests(
            name, params, decorators, fixture is not None, is_method, outer, param_bindings
        )
        for pname, _pnode in requests:
            param_bindings[pname] = _TYPED
        if ret is not None:
            self._type(ret)
            ret_parts = self._type_chain(ret)
            binding = self._head_binding(ret_parts) if ret_parts else None
            if ret_parts and binding is not None and binding[0] != S.UNTYPED:
                line, col = self._pos(ret)
                self.sites.append(Site(S.RETURNS, ".".join(ret_parts), line, col, qn, binding))

        collected = self._collect_body(node, body)
        scope = _Scope("function", qn, class_qn=outer.qn if is_method else "")
        binds = self._decide(collected, scope, param_bindings)
        self._declare_globals(collected)
        self.stack.append(scope)
        for pname, pnode, parts, binding in param_binds:
            if scope.names.get(pname) == _TYPED:
                self._bind_site(S.BIND, pname, parts, S.ANNOTATION, pnode, qn, binding)
        for pname, pnode in requests:
            if scope.names.get(pname) == _TYPED:
                line, col = self._pos(pnode)
                self.sites.append(Site(S.BIND, pname, line, col, qn, (pname, "", "", S.FIXTURE)))
        for bname, bnode, mode in binds:
            if any(p[0] == bname for p in param_binds):
                continue
            parts = self._type_chain(bnode) if mode == S.ANNOTATION else self._value_chain(bnode)
            self._bind_site(S.BIND, bname, parts, mode, bnode, qn)
        if body is not None:
            self._block(body)
        if fixture is not None:
            self._fixture_value(fixture, qn, ret, body)
        self.stack.pop()
        self.enclosing = saved

    def _fixture_requests(
        self,
        name: str,
        params: Node | None,
        decorators: list[Node],
        is_fixture: bool,
        is_method: bool,
        outer: _Scope,
        bindings: dict[str, str],
    ) -> list[tuple[str, Node]]:
        """The parameters pytest fills with fixtures: the plain, unannotated parameters of a fixture, or of a test
        (``test*`` in a test module, at module level or in a ``Test*`` class), less those a ``parametrize``
        decorator names and ``request`` (pytest's own)."""
        if params is None:
            return []
        if not is_fixture:
            if not (self.test_module and name.startswith("test")):
                return []
            if is_method and not outer.qn.rsplit(".", 1)[-1].startswith("Test"):
                return []
        named = _parametrized_names(decorators)
        out: list[tuple[str, Node]] = []
        for param in params.named_children:
            if param.type != "identifier":
                continue
            pname = _text(param)
            if bindings.get(pname) == S.UNTYPED and pname not in named and pname != "request":
                out.append((pname, param))
        return out

    def _fixture_value(self, fixture: str, qn: str, ret: Node | None, body: Node | None) -> None:
        """A ``fixture`` site: what the fixture gives its requesters, its return annotation or the one value
        every ``return``/``yield`` of its own body gives (followed in the fixture's scope)."""
        if ret is not None:
            parts = self._type_chain(ret)
            mode, node = S.ANNOTATION, ret
        else:
            values = _given_values(body)
            chains = {tuple(c) if (c := self._value_chain(v)) else None for v in values}
            if len(chains) != 1 or None in chains:
                return
            parts, mode, node = self._value_chain(values[0]), S.VALUE, values[0]
        if parts:
            self._bind_site(S.FIXTURE, fixture, parts, mode, node, qn)

    def _declare_globals(self, collected: _Collected) -> None:
        """A ``global x`` assigned in a function makes ``x`` a module name of unknown value."""
        module = self.stack[0]
        for name in collected.declared_global:
            if name in collected.entries and name not in module.names:
                module.names[name] = S.MODULE
                node = next((n for _, n in collected.entries[name] if n is not None), None)
                line, col = self._pos(node) if node is not None else (1, 0)
                self.sites.append(Site(S.BIND, name, line, col, "", ("", "", "", S.VALUE)))

    def _parameters(
        self, params: Node | None, first_binding: str
    ) -> tuple[dict[str, str], list[tuple[str, Node, list[str], tuple[str, str]]]]:
        """Visit defaults and annotations (in the outer scope); return param bindings and typed binds."""
        bindings: dict[str, str] = {}
        binds: list[tuple[str, Node, list[str], tuple[str, str]]] = []
        if params is None:
            return bindings, binds
        first = True
        for param in params.named_children:
            t = param.type
            if t in ("keyword_separator", "positional_separator", "comment"):
                continue
            name_node: Node | None
            ann = param.child_by_field_name("type")
            default = param.child_by_field_name("value")
            if t == "identifier":
                name_node = param
            elif t in ("default_parameter", "typed_default_parameter"):
                name_node = param.child_by_field_name("name")
            elif t == "typed_parameter":
                name_node = param.named_children[0] if param.named_children else None
            else:  # *args / **kwargs / tuple parameters
                name_node = param
            if default is not None:
                self._expr(default)
            if ann is not None:
                self._type(ann)
            plain = name_node is not None and name_node.type == "identifier"
            pname = _text(name_node) if plain else ""
            if first and first_binding and plain:
                bindings[pname] = first_binding
            elif plain:
                bindings[pname] = S.UNTYPED
                parts = self._type_chain(ann) if ann is not None else None
                binding = self._head_binding(parts) if parts else None
                if parts and binding is not None and binding[0] != S.UNTYPED and ann is not None:
                    bindings[pname] = _TYPED
                    binds.append((pname, ann, parts, binding))
            elif name_node is not None:
                for ident in self._identifiers(name_node):
                    bindings[ident] = S.UNTYPED
            first = False
        return bindings, binds

    def _identifiers(self, node: Node) -> list[str]:
        if node.type == "identifier":
            return [_text(node)]
        out: list[str] = []
        for child in node.named_children:
            out.extend(self._identifiers(child))
        return out

    def _class(self, node: Node, start: Node, decorators: list[Node]) -> None:
        name = _text(node.child_by_field_name("name"))
        bases = node.child_by_field_name("superclasses")
        body = node.child_by_field_name("body")
        sig = "class " + name + _text(node.child_by_field_name("type_parameters")) + _text(bases)
        qn = self._declare(node, start, "class", _collapse(sig), self._docstring(body))

        saved, self.enclosing = self.enclosing, qn
        for decorator in decorators:
            self._decorator(decorator)
        if bases is not None:
            self._bases(bases)
        collected = self._collect_body(node, body)
        scope = _Scope("class", qn)
        for cname, entries in collected.entries.items():
            modes = {mode for mode, _ in entries}
            scope.names[cname] = S.LOCAL if modes & {_DEF, _IMPORT} else S.UNTYPED
        self.stack.append(scope)
        if body is not None:
            self._block(body)
        self._emit_attrs(scope)
        self.stack.pop()
        self.enclosing = saved

    def _bases(self, bases: Node) -> None:
        for arg in bases.named_children:
            if arg.type == "keyword_argument":
                value = arg.child_by_field_name("value")
                if value is None:
                    continue
                if _text(arg.child_by_field_name("name")) == "metaclass":
                    line, col = self._pos(arg)
                    self.sites.append(Site(S.METACLASS, _text(value), line, col, self.enclosing, ()))
                self._argument(value, S.REF)
                continue
            base = arg
            if arg.type == "subscript":
                base = arg.child_by_field_name("value") or arg
                for sub in arg.children_by_field_name("subscript"):
                    self._type(sub)
            parts = self._chain(base) if base.type in ("identifier", "attribute") else None
            if parts:
                self._chain_site(S.BASE, parts, base)
            elif arg.type != "comment":
                self._expr(arg)

    def _decorator(self, decorator: Node) -> list[str] | None:
        """Visit a decorator; return its name chain when it has one."""
        expr = next((c for c in decorator.named_children if c.type != "comment"), None)
        if expr is None:
            return None
        if expr.type == "call":
            fn = expr.child_by_field_name("function")
            parts = self._chain(fn) if fn is not None else None
            self._call(expr, S.DECORATOR)
            return parts
        parts = self._chain(expr) if expr.type in ("identifier", "attribute") else None
        if parts:
            if not (len(parts) == 2 and parts[1] in _PROPERTY_ACCESSORS):
                self._chain_site(S.DECORATOR, parts, expr)
            self._inner_calls(expr)
            return parts
        self._expr(expr)
        return None

    # -- expressions -------------------------------------------------------------------------------

    def _expr(self, node: Node | None) -> None:
        """Visit an expression in load context (iterative, so long operator chains cannot overflow)."""
        if node is None:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "identifier":
                self._chain_site(S.REF, [_text(n)], n)
            elif t == "attribute":
                parts = self._chain(n)
                if parts:
                    self._chain_site(S.REF, parts, n)
                    self._inner_calls(n)
                else:
                    obj = n.child_by_field_name("object")
                    if obj is not None:
                        stack.append(obj)
            elif t == "call":
                self._call(n)
            elif t == "lambda":
                self._lambda(n)
            elif t in _COMPREHENSIONS:
                self._comprehension(n)
            elif t == "keyword_argument" or t == "named_expression":
                value = n.child_by_field_name("value")
                if value is not None:
                    stack.append(value)
            elif t == "as_pattern":
                for child in n.named_children:
                    if child.type == "as_pattern_target":
                        self._store(child)
                    else:
                        stack.append(child)
            elif t == "type":
                self._type(n)
            elif t == "assignment":
                self._assignment(n, n)
            elif t not in ("comment", "string_content", "escape_sequence", "integer", "float"):
                stack.extend(reversed(n.named_children))

    def _chain(self, node: Node | None) -> list[str] | None:
        """The dotted chain of a name/attribute/call spine, or None when it has another shape."""
        parts: list[str] = []
        n = node
        while n is not None:
            t = n.type
            if t == "identifier":
                parts.append(_text(n))
                break
            if t == "attribute":
                attr = n.child_by_field_name("attribute")
                parts.append(_text(attr))
                n = n.child_by_field_name("object")
                continue
            if t == "call":
                fn = n.child_by_field_name("function")
                if fn is not None and fn.type == "identifier" and _text(fn) == "super":
                    parts.append(S.SUPER_HEAD)
                    break
                parts.append(S.CALLED)
                n = fn
                continue
            return None
        else:
            return None
        out: list[str] = []
        for part in reversed(parts):
            if part == S.CALLED:
                if not out:
                    return None
                out[-1] += S.CALLED
            else:
                out.append(part)
        return out

    def _value_chain(self, node: Node | None) -> list[str] | None:
        """The chain a bound value can be followed through; literals count as calls of their builtin type."""
        if node is None:
            return None
        builtin = _LITERAL_TYPES.get(node.type)
        if builtin is not None:
            return [builtin + S.CALLED]
        return self._chain(node)

    def _inner_calls(self, node: Node) -> None:
        """Visit the calls inside a chain (``a.b(x).c``): each is a call site with its own arguments."""
        n: Node | None = node
        while n is not None:
            if n.type == "attribute":
                n = n.child_by_field_name("object")
            elif n.type == "call":
                self._call(n)
                return
            else:
                return

    def _call(self, node: Node, kind: str = S.CALL) -> None:
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        parts = self._chain(fn) if fn is not None else None
        if (
            self.dynamic is None
            and parts is not None
            and len(parts) == 1
            and parts[0] in _NAMESPACE_WRITERS
            and parts[0] not in self.stack[0].names
            and fn is not None
        ):
            line, col = self._pos(fn)
            self.dynamic = Site(S.DYNAMIC, parts[0], line, col, "", ())
        if fn is None:
            pass
        elif parts:
            self._chain_site(kind, parts, fn)
            self._inner_calls(fn)
        elif fn.type == "attribute":
            obj = fn.child_by_field_name("object")
            attr = _text(fn.child_by_field_name("attribute"))
            if obj is not None and obj.type not in _LITERALS and attr:
                self._chain_site(kind, [S.UNKNOWN_HEAD, attr], fn, text=_collapse(_text(fn), _MAX_DETAIL))
            self._expr(obj)
        else:
            self._expr(fn)
        if args is None:
            return
        if args.type != "argument_list":
            self._expr(args)
            return
        for arg in args.named_children:
            if arg.type == "keyword_argument":
                value = arg.child_by_field_name("value")
                if value is not None:
                    self._argument(value, S.ARG)
            else:
                self._argument(arg, S.ARG)

    def _argument(self, node: Node, kind: str) -> None:
        if node.type in ("identifier", "attribute"):
            parts = self._chain(node)
            if parts:
                self._chain_site(kind, parts, node)
                self._inner_calls(node)
                return
        self._expr(node)

    def _lambda(self, node: Node) -> None:
        scope = _Scope("inner", self.stack[-1].qn)
        params = node.child_by_field_name("parameters")
        if params is not None:
            for param in params.named_children:
                default = param.child_by_field_name("value")
                if default is not None:
                    self._expr(default)
                name_node = param.child_by_field_name("name") or param
                for ident in self._identifiers(name_node):
                    scope.names[ident] = S.UNTYPED
        for name in self.walrus.get((node.start_byte, node.end_byte), ()):
            scope.names[name] = S.UNTYPED
        self.stack.append(scope)
        self._expr(node.child_by_field_name("body"))
        self.stack.pop()

    def _comprehension(self, node: Node) -> None:
        scope = _Scope("inner", self.stack[-1].qn)
        clauses = [c for c in node.named_children if c.type == "for_in_clause"]
        for clause in clauses:
            for ident in self._target_names(clause.child_by_field_name("left")):
                scope.names[ident] = S.UNTYPED
        # The first iterable is evaluated in the enclosing scope (a class body's names are visible there).
        first = clauses[0].child_by_field_name("right") if clauses else None
        self._expr(first)
        self.stack.append(scope)
        for child in node.named_children:
            if child.type == "for_in_clause":
                self._store(child.child_by_field_name("left"))
                right = child.child_by_field_name("right")
                if right is not None and right != first:
                    self._expr(right)
            else:
                self._expr(child)
        self.stack.pop()

    def _target_names(self, target: Node | None) -> list[str]:
        if target is None:
            return []
        if target.type == "identifier":
            return [_text(target)]
        if target.type in _PATTERNS:
            return [n for child in target.named_children for n in self._target_names(child)]
        return []

    # -- annotations -------------------------------------------------------------------------------

    def _type(self, node: Node) -> None:
        """Emit ``type`` sites for the names in an annotation (plain-name string forward refs included)."""
        stack: list[tuple[Node, bool]] = [(node, True)]
        while stack:
            n, strings = stack.pop()
            t = n.type
            if t in ("identifier", "attribute"):
                parts = self._chain(n)
                if parts:
                    self._chain_site(S.TYPE, parts, n)
                    self._inner_calls(n)
                else:
                    self._expr(n)
            elif t == "string":
                dotted = self._string_dotted(n) if strings else None
                if dotted:
                    self._chain_site(S.TYPE, dotted.split("."), n)
            elif t in ("generic_type", "subscript"):
                base = n.child_by_field_name("value") if t == "subscript" else n.named_children[0]
                params = (
                    list(n.children_by_field_name("subscript"))
                    if t == "subscript"
                    else [c for p in n.named_children[1:] for c in p.named_children]
                )
                parts = self._chain(base) if base is not None else None
                if parts and base is not None:
                    self._chain_site(S.TYPE, parts, base)
                elif base is not None:
                    stack.append((base, strings))
                last = parts[-1] if parts else ""
                if last == "Literal":
                    continue
                if last == "Annotated":
                    params = params[:1]
                stack.extend((p, True) for p in reversed(params))
            elif t == "call":
                self._call(n)
            elif t not in ("none", "comment", "integer", "float", "ellipsis"):
                stack.extend((c, strings) for c in reversed(n.named_children))

    def _type_chain(self, node: Node | None) -> list[str] | None:
        """The class an annotation declares: ``Optional[X]``, ``X | None``, ``Annotated[X, ...]`` are X, ``G[X]`` is G."""
        n = node
        while n is not None:
            t = n.type
            if t == "type":
                n = n.named_children[0] if n.named_child_count == 1 else None
            elif t in ("identifier", "attribute"):
                return self._chain(n)
            elif t == "string":
                dotted = self._string_dotted(n)
                return dotted.split(".") if dotted else None
            elif t in ("generic_type", "subscript"):
                base = n.child_by_field_name("value") if t == "subscript" else n.named_children[0]
                params = (
                    list(n.children_by_field_name("subscript"))
                    if t == "subscript"
                    else [c for p in n.named_children[1:] for c in p.named_children]
                )
                parts = self._chain(base)
                last = parts[-1] if parts else ""
                params = [p for p in params if not _is_none(p)]
                if last in ("Optional", "Union", "Annotated") and params and (last == "Annotated" or len(params) == 1):
                    n = params[0]
                elif last in ("Optional", "Union"):
                    return None
                else:
                    return parts  # list[Shape] is a list; Box[int] is a Box
            elif t in ("union_type", "binary_operator"):
                sides = [c for c in n.named_children if not _is_none(c)]
                if len(sides) != 1:
                    return None
                n = sides[0]
            else:
                return None
        return None

    def _string_dotted(self, node: Node) -> str | None:
        """The content of a plain string literal that is a dotted name (a forward reference)."""
        children = node.named_children
        if len(children) != 3 or children[1].type != "string_content":
            return None
        prefix = _text(children[0]).lower()
        if "f" in prefix or "b" in prefix:
            return None
        content = _text(children[1]).strip()
        return content if _DOTTED.fullmatch(content) else None

    # -- sites -------------------------------------------------------------------------------------

    def _pos(self, node: Node) -> tuple[int, int]:
        row, col = node.start_point
        return row + 1, col

    def _chain_site(self, kind: str, parts: list[str], node: Node, text: str = "") -> None:
        """Append a reference site unless it can only be noise (builtins, plain locals, bare self)."""
        head = parts[0]
        binding = self._head_binding(parts)
        if binding is None:
            return
        name, calls = S.segment(head)
        single = len(parts) == 1
        if single and not calls and kind == S.REF and binding[0] == S.LOCAL and self._lookup(name)[2] == _TYPED:
            return  # reading a typed local names no declaration
        if (
            binding[0] == S.MODULE
            and name in S.IMPLICIT_NAMES
            and name not in self.stack[0].names
            and not (kind == S.BASE and name != "object")
        ):
            return  # builtins are silent, except as a base: a dict subclass has members we do not index
        if binding[0] == S.UNTYPED and (kind not in (S.CALL, S.DECORATOR) or (single and not calls)):
            return  # a local of unknown value: only a call on it is worth an unresolved row
        if binding[0] == S.SELF and single and not calls:
            return
        if binding[0] == S.CLS and single and kind != S.CALL:
            return
        line, col = self._pos(node)
        extra = (*binding, text) if text else binding
        self.sites.append(Site(kind, ".".join(parts), line, col, self.enclosing, extra))

    def _docstring(self, body: Node | None) -> str:
        if body is None:
            return ""
        for stmt in body.named_children:
            if stmt.type == "comment":
                continue
            if stmt.type == "expression_statement" and stmt.named_child_count == 1:
                string = stmt.named_children[0]
                if string.type == "string":
                    children = string.children
                    if any(c.type == "interpolation" for c in children) or len(children) < 2:
                        return ""
                    raw = self.source[children[0].end_byte : children[-1].start_byte]
                    return _doc_summary(raw.decode("utf-8", "replace"))
            return ""
        return ""


def _is_none(node: Node) -> bool:
    if node.type == "none":
        return True
    return node.type == "type" and node.named_child_count == 1 and node.named_children[0].type == "none"


_OVERLOAD_DECORATOR = re.compile(r"^@\s*(?:[A-Za-z_][\w.]*\.)?overload\s*$")


def _is_overload(decorator: Node) -> bool:
    return bool(_OVERLOAD_DECORATOR.match(_text(decorator).strip()))


def _overloads_with_implementation(block: Node) -> frozenset[str]:
    """Names in a block declared by @overload stubs and also by an undecorated-by-overload implementation."""
    stubs: set[str] = set()
    implementations: set[str] = set()
    for stmt in block.named_children:
        defn, decorators = stmt, []
        if stmt.type == "decorated_definition":
            defn = stmt.child_by_field_name("definition")
            decorators = [d for d in stmt.named_children if d.type == "decorator"]
        if defn is None or defn.type != "function_definition":
            continue
        name = _text(defn.child_by_field_name("name"))
        (stubs if any(_is_overload(d) for d in decorators) else implementations).add(name)
    return frozenset(stubs & implementations)


# Standard-library callables whose result is a class or another callable (what ``_holds_callable`` trusts).
_CALLABLE_FACTORIES = frozenset(
    {
        "collections.namedtuple",
        "typing.NamedTuple",
        "typing.TypedDict",
        "typing.NewType",
        "typing_extensions.NamedTuple",
        "typing_extensions.TypedDict",
        "typing_extensions.NewType",
        "enum.Enum",
        "enum.IntEnum",
        "enum.StrEnum",
        "enum.Flag",
        "enum.IntFlag",
        "dataclasses.make_dataclass",
        "functools.partial",
        "functools.partialmethod",
        "functools.singledispatch",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "operator.itemgetter",
        "operator.attrgetter",
        "operator.methodcaller",
        "contextlib.contextmanager",
        "contextlib.asynccontextmanager",
        "builtins.staticmethod",
        "builtins.classmethod",
        "builtins.property",
    }
)
_CALLABLE_TYPES = frozenset(
    {"typing.Callable", "collections.abc.Callable", "typing.Type", "builtins.type", "typing_extensions.Callable"}
)


def _import_origins(root: Node) -> dict[str, str]:
    """The names this module's top-level imports bind (also under ``try``/``if``), each to what it imports."""
    out: dict[str, str] = {}
    stack = list(root.named_children)
    while stack:
        stmt = stack.pop()
        if stmt.type in ("try_statement", "if_statement", "else_clause", "elif_clause", "except_clause", "block"):
            stack.extend(stmt.named_children)
        elif stmt.type == "import_statement":
            for item in stmt.named_children:
                if item.type == "aliased_import":
                    out[_text(item.child_by_field_name("alias"))] = _text(item.child_by_field_name("name"))
                elif item.type == "dotted_name":
                    out.setdefault(_text(item.named_children[0]), _text(item.named_children[0]))
        elif stmt.type == "import_from_statement":
            module = "".join(_text(stmt.child_by_field_name("module_name")).split())
            for item in stmt.children_by_field_name("name"):
                if item.type == "aliased_import":
                    bound, imported = _text(item.child_by_field_name("alias")), item.child_by_field_name("name")
                else:
                    bound, imported = _text(item), item
                out[bound] = f"{module}.{_text(imported)}"
    return out
