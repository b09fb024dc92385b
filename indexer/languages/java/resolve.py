"""The Java CANDIDATE resolver: binds the extractor's sites on syntax alone.

What syntax can tell: a type name is looked up as javac scopes it (member types of the enclosing types,
single-type imports, the file's package, on-demand imports; a dotted name as written); a bare call is a
method of the enclosing types or their supertypes as the corpus declares them; ``T.m()``, ``this.m()``,
``super.m()`` and ``x.m()`` with ``x`` declared as ``T x`` go to ``T``'s methods. Overloads are told apart by
the number of arguments only. A receiver that is an expression is an UNRESOLVED row. A method that
redeclares one of a supertype (same name and parameter types) OVERRIDES or IMPLEMENTS it. None of this is
proof: every edge is CANDIDATE / TREE_SITTER_SYNTAX, and scip-java replaces it where it runs.

A name found in no registered repository is the JDK's or a dependency's: no edge and no row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, SymbolFact, UnresolvedFact
from indexer.languages.java import sites as S
from indexer.languages.java.modules import LANGUAGE
from snapshot_format.vocab import IMPLICIT_CALL, Confidence, EdgeKind, Provenance

TYPE_KINDS = frozenset({"class", "interface", "enum"})
_METHOD_KINDS = frozenset({"method", "constructor"})
_VALUE_KINDS = frozenset({"field", "constant", "enum_member"})
_MAX_SUPERTYPE_DEPTH = 12


@dataclass(frozen=True)
class Target:
    repository: str
    path: str
    symbol: SymbolFact

    @property
    def qualified_name(self) -> str:
        return self.symbol.qualified_name

    @property
    def kind(self) -> str:
        return self.symbol.kind


@dataclass
class _FileScope:
    package: str
    imports: dict[str, str] = field(default_factory=dict)  # simple name -> imported FQN
    on_demand: list[str] = field(default_factory=list)  # packages (or types) imported with .*
    static_members: dict[str, list[str]] = field(default_factory=dict)  # member name -> owning type FQNs
    static_on_demand: list[str] = field(default_factory=list)  # types whose static members are imported


def arity(sym: SymbolFact) -> int | None:
    """The number of parameters of a method from its signature (None for a varargs method or unknown)."""
    head = sym.signature
    open_at = head.find("(")
    if open_at < 0:
        return None
    inner = head[open_at + 1 : head.rfind(")")] if ")" in head else ""
    depth, count, token = 0, 0, ""
    for ch in inner:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
            continue
        token += ch
    if "..." in inner:
        return None
    return count + 1 if inner.strip() else 0


def parameters_of(sym: SymbolFact) -> str:
    """The erased parameter list an overload's name carries, or "" for a method named without one."""
    qn = sym.qualified_name
    return qn[qn.rfind("(") :] if qn.endswith(")") else ""


class JavaIndex:
    """Every registered repository's Java declarations: types by qualified name, members by type."""

    def __init__(self, corpus: Corpus) -> None:
        self.types: dict[str, list[Target]] = {}
        self.members: dict[tuple[str, str], dict[str, list[Target]]] = {}  # (repo, type qn) -> name -> members
        self.by_qn: dict[tuple[str, str], dict[str, SymbolFact]] = {}  # (repo, path) -> qn -> symbol
        self.packages: dict[str, set[str]] = {}  # package -> repositories declaring it
        self.scopes: dict[tuple[str, str], _FileScope] = {}
        self.bases: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (repo, type qn) -> [(repo, base qn)]
        self._files = {(r.name, f.path): f for r in corpus.repositories for f in r.files}
        for repo in corpus.repositories:
            for ff in repo.files:
                if not ff.parsed:
                    continue
                table: dict[str, SymbolFact] = {}
                for sym in ff.symbols:
                    # a field and a method of one name share it: the method is the one code is in
                    if sym.qualified_name not in table or table[sym.qualified_name].kind in _VALUE_KINDS:
                        table[sym.qualified_name] = sym
                    if sym.kind in TYPE_KINDS:
                        self.types.setdefault(sym.qualified_name, []).append(Target(repo.name, ff.path, sym))
                    elif sym.container and sym.kind != "module":
                        by_name = self.members.setdefault((repo.name, sym.container), {})
                        by_name.setdefault(sym.name, []).append(Target(repo.name, ff.path, sym))
                self.by_qn[(repo.name, ff.path)] = table
                self.packages.setdefault(ff.package, set()).add(repo.name)
                self.scopes[(repo.name, ff.path)] = _file_scope(ff)
        for repo in corpus.repositories:
            for ff in repo.files:
                if not ff.parsed:
                    continue
                for site in ff.sites:
                    if site.kind in (S.EXTENDS, S.IMPLEMENTS):
                        for t in self.resolve_type(repo.name, ff, site.name, site.enclosing, outer_only=True):
                            self.bases.setdefault((repo.name, site.enclosing), []).append(
                                (t.repository, t.qualified_name)
                            )

    # -- types ----------------------------------------------------------------------------------------------

    def _pick(self, repo: str, qn: str) -> list[Target]:
        found = self.types.get(qn, [])
        own = [t for t in found if t.repository == repo]
        return own or found

    def enclosing_types(self, repo: str, ff: FileFacts, qn: str) -> list[str]:
        """The types around a declaration, innermost first (a type's own name included)."""
        table = self.by_qn.get((repo, ff.path), {})
        out: list[str] = []
        sym = table.get(qn)
        while sym is not None:
            if sym.kind in TYPE_KINDS:
                out.append(sym.qualified_name)
            sym = table.get(sym.container) if sym.container else None
        return out

    def resolve_type(
        self, repo: str, ff: FileFacts, name: str, enclosing: str, *, outer_only: bool = False
    ) -> list[Target]:
        """The corpus types a type name written in ``ff`` inside ``enclosing`` denotes (javac's scoping)."""
        if "." in name:
            head, _, rest = name.partition(".")
            for t in self.resolve_type(repo, ff, head, enclosing, outer_only=outer_only):
                found = self._pick(repo, f"{t.qualified_name}.{rest}")
                if found:
                    return found
            return self._pick(repo, name)
        chain = self.enclosing_types(repo, ff, enclosing)
        if outer_only and chain and chain[0] == enclosing:
            chain = chain[1:]  # a type's own extends clause is not in its own member scope
        for owner in chain:
            found = self._pick(repo, f"{owner}.{name}")
            if found:
                return found
            if not outer_only:
                for base in self.supertypes(repo, owner):
                    found = self._pick(base[0], f"{base[1]}.{name}")
                    if found:
                        return found
        scope = self.scopes.get((repo, ff.path))
        if scope is None:
            return []
        if name in scope.imports:
            return self._pick(repo, scope.imports[name])
        local = self._pick(repo, f"{scope.package}.{name}" if scope.package else name)
        if local:
            return local
        for pkg in scope.on_demand:
            found = self._pick(repo, f"{pkg}.{name}")
            if found:
                return found
        return []

    def supertypes(self, repo: str, qn: str) -> list[tuple[str, str]]:
        """Every supertype of a type the corpus declares, nearest first (breadth first, each once)."""
        out: list[tuple[str, str]] = []
        frontier = [(repo, qn)]
        seen = {(repo, qn)}
        for _ in range(_MAX_SUPERTYPE_DEPTH):
            nxt: list[tuple[str, str]] = []
            for t in frontier:
                for b in self.bases.get(t, []):
                    if b not in seen:
                        seen.add(b)
                        out.append(b)
                        nxt.append(b)
            frontier = nxt
            if not frontier:
                break
        return out

    def has_outside_supertype(self, repo: str, ff: FileFacts, qn: str) -> bool:
        """Whether a type (or one of its supertypes) extends a type no registered repository declares."""
        for owner in [(repo, qn), *self.supertypes(repo, qn)]:
            target = self._pick(owner[0], owner[1])
            if not target:
                return True
            t = target[0]
            base_sites = [
                s
                for s in self._file(t).sites
                if s.enclosing == t.qualified_name and s.kind in (S.EXTENDS, S.IMPLEMENTS)
            ]
            if len(base_sites) != len(self.bases.get(owner, [])):
                return True
        return False

    def _file(self, t: Target) -> FileFacts:
        return self._files[(t.repository, t.path)]

    def members_named(self, repo: str, qn: str, name: str, *, inherited: bool = True) -> list[Target]:
        """Members named ``name`` of a type, else of its nearest supertype that has some."""
        own = self.members.get((repo, qn), {}).get(name, [])
        if own or not inherited:
            return own
        for base in self.supertypes(repo, qn):
            found = self.members.get(base, {}).get(name, [])
            if found:
                return found
        return []


def _file_scope(ff: FileFacts) -> _FileScope:
    scope = _FileScope(ff.package)
    for site in ff.sites:
        if site.kind != S.IMPORT:
            continue
        static, star = ((*site.extra, "", ""))[:2]
        if static and star:
            scope.static_on_demand.append(site.name)
        elif static:
            owner, _, member = site.name.rpartition(".")
            scope.static_members.setdefault(member, []).append(owner)
        elif star:
            scope.on_demand.append(site.name)
        else:
            scope.imports[site.name.rsplit(".", 1)[-1]] = site.name
    return scope


_PRIMITIVES = frozenset({"boolean", "byte", "char", "short", "int", "long", "float", "double"})
# a primitive argument converts to these parameter types (widening, then boxing to its wrapper or Object)
_WIDENS = {
    "byte": ("byte", "short", "int", "long", "float", "double", "Byte", "Object", "Number"),
    "short": ("short", "int", "long", "float", "double", "Short", "Object", "Number"),
    "char": ("char", "int", "long", "float", "double", "Character", "Object"),
    "int": ("int", "long", "float", "double", "Integer", "Object", "Number"),
    "long": ("long", "float", "double", "Long", "Object", "Number"),
    "float": ("float", "double", "Float", "Object", "Number"),
    "double": ("double", "Double", "Object", "Number"),
    "boolean": ("boolean", "Boolean", "Object"),
}


def _accepts(param: str, arg: str) -> bool:
    """Whether a parameter of erased type ``param`` can take an argument syntax typed ``arg`` ("" = unknown)."""
    param = param.removesuffix("...")
    if not arg or param == arg:
        return True
    if arg == "null":
        return param not in _PRIMITIVES
    if arg in _WIDENS:
        return param in _WIDENS[arg]
    if param in _PRIMITIVES:
        return False
    return param in ("Object", "CharSequence", "Comparable", "Serializable") if arg == "String" else True


def _by_arity(targets: list[Target], args: int | None, types: str = "") -> list[Target]:
    """The overloads a call of ``args`` arguments of syntax types ``types`` can reach (all, when none fits)."""
    if args is None or len(targets) < 2:
        return targets
    fitting = [t for t in targets if arity(t.symbol) in (args, None)]
    written = types.split(",") if types else []
    if fitting and len(written) == args and any(written):
        typed, exact = [], []
        for t in fitting:
            params = parameters_of(t.symbol)[1:-1].split(",") if parameters_of(t.symbol) else []
            if len(params) != args or all(_accepts(p, a) for p, a in zip(params, written, strict=True)):
                typed.append(t)
                if len(params) == args and all(not a or p == a for p, a in zip(params, written, strict=True)):
                    exact.append(t)  # javac picks the most specific: one taking every argument as it is
        fitting = exact or typed or fitting
    return fitting or targets


@dataclass
class _Resolver:
    corpus: Corpus
    index: JavaIndex
    out: Resolution = field(default_factory=Resolution)
    # (consumer, its package, provider, its package) -> the first site (path, line) that uses it
    dependencies: dict[tuple[str, str, str, str], tuple[str, int]] = field(default_factory=dict)

    def edge(self, kind: EdgeKind, repo: str, ff: FileFacts, site: Site, target: Target) -> None:
        source = self.source_key(repo, ff, site.enclosing)
        key = self.corpus.key_of(target.repository, target.path, target.qualified_name, target.kind)
        if source is None or key is None or (key == source and kind not in (EdgeKind.CALLS_DIRECT,)):
            return
        self.out.edges.append(
            EdgeFact(
                int(kind),
                source,
                key,
                int(Confidence.CANDIDATE),
                int(Provenance.TREE_SITTER_SYNTAX),
                site.line,
                site.col,
            )
        )
        if target.repository != repo:
            provider = self.corpus_package(target)
            where = (ff.path, site.line)
            key4 = (repo, ff.package, target.repository, provider)
            if key4 not in self.dependencies or where < self.dependencies[key4]:
                self.dependencies[key4] = where

    def corpus_package(self, target: Target) -> str:
        for repo in self.corpus.repositories:
            if repo.name == target.repository:
                for ff in repo.files:
                    if ff.path == target.path:
                        return ff.package
        return ""

    def source_key(self, repo: str, ff: FileFacts, enclosing: str) -> str | None:
        table = self.index.by_qn.get((repo, ff.path), {})
        sym = table.get(enclosing) if enclosing else None
        if sym is None:
            sym = ff.symbols[0] if ff.symbols and ff.symbols[0].kind == "module" else None
        if sym is None:
            return None
        return self.corpus.key_of(repo, ff.path, sym.qualified_name, sym.kind)

    def row(self, reason: str, repo: str, ff: FileFacts, site: Site, detail: str) -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=site.name,
                reason=reason,
                repository=repo,
                path=ff.path,
                line=site.line,
                col=site.col,
                language=LANGUAGE,
                source=self.source_key(repo, ff, site.enclosing) or "",
                package=ff.package,
                detail=detail,
            )
        )

    # -- one site -------------------------------------------------------------------------------------------

    def site(self, repo: str, ff: FileFacts, site: Site, args: int | None, types: str = "") -> None:
        kind = site.kind
        if kind in (S.TYPE, S.EXTENDS, S.IMPLEMENTS, S.ANNOTATION):
            targets = self.index.resolve_type(repo, ff, site.name, site.enclosing, outer_only=kind != S.TYPE)
            edge_kind = {
                S.TYPE: EdgeKind.TYPE_USES,
                S.ANNOTATION: EdgeKind.REFERENCES,
                S.EXTENDS: EdgeKind.EXTENDS,
                S.IMPLEMENTS: EdgeKind.IMPLEMENTS,
            }[kind]
            for t in targets:
                self.edge(edge_kind, repo, ff, site, t)
        elif kind == S.IMPORT:
            self.import_site(repo, ff, site)
        elif kind == S.NEW:
            for t in self.index.resolve_type(repo, ff, site.name, site.enclosing):
                ctors = [
                    m
                    for m in self.index.members_named(t.repository, t.qualified_name, t.symbol.name, inherited=False)
                    if m.kind == "constructor"
                ]
                implicit = site.extra[5:6] == ("implicit",)
                if implicit and ctors:  # an unwritten call has no overload to fall back to: one that fits, or none
                    ctors = [c for c in ctors if arity(c.symbol) in (args, None)]
                    if not ctors:
                        continue
                for target in _by_arity(ctors, args, types) if ctors else [t]:
                    self.edge(EdgeKind.CALLS_DIRECT, repo, ff, site, target)
        elif kind in (S.CALL, S.CALLBACK, S.REF):
            self.member_site(repo, ff, site, args, types)

    def import_site(self, repo: str, ff: FileFacts, site: Site) -> None:
        static, star = ((*site.extra, "", ""))[:2]
        if star and not static:
            return
        if static:
            owner, _, member = site.name.rpartition(".")
            types = self.index._pick(repo, site.name if star else owner)
            for t in types:
                if star:
                    self.edge(EdgeKind.IMPORTS_SYMBOL, repo, ff, site, t)
                    continue
                for m in self.index.members_named(t.repository, t.qualified_name, member):
                    self.edge(EdgeKind.IMPORTS_SYMBOL, repo, ff, site, m)
            return
        found = self.index._pick(repo, site.name)
        for t in found:
            self.edge(EdgeKind.IMPORTS_SYMBOL, repo, ff, site, t)
        if not found:
            pkg = site.name.rpartition(".")[0]
            if pkg in self.index.packages:
                self.row(
                    "IMPORT_NOT_RESOLVED",
                    repo,
                    ff,
                    site,
                    f"package {pkg} is declared by {', '.join(sorted(self.index.packages[pkg]))} but no such type",
                )

    def member_site(self, repo: str, ff: FileFacts, site: Site, args: int | None, types: str = "") -> None:
        qualifier, binding, declared = ((*site.extra, "", "", ""))[:3]
        owners: list[tuple[str, str]] = []  # (repo, type qn) searched in order, the first with members wins
        want = _METHOD_KINDS if site.kind != S.REF else _VALUE_KINDS
        chain = self.index.enclosing_types(repo, ff, site.enclosing)
        if binding == "":
            owners = [(repo, t) for t in chain]
            scope = self.index.scopes.get((repo, ff.path))
            if scope is not None:
                for owner in scope.static_members.get(site.name, []) + scope.static_on_demand:
                    owners += [(t.repository, t.qualified_name) for t in self.index._pick(repo, owner)]
        elif binding == "this":
            owners = [(repo, chain[0])] if chain else []
        elif binding == "super":
            owners = self.index.bases.get((repo, chain[0]), []) if chain else []
        elif binding == "local":
            owners = [
                (t.repository, t.qualified_name)
                for t in self.index.resolve_type(repo, ff, declared, site.enclosing)
                if declared
            ]
            if not declared:
                if site.kind != S.REF:
                    self.row("RECEIVER_NOT_RESOLVED", repo, ff, site, f"the type of {qualifier} is not written")
                return
        elif binding == "name":
            field_type = self.field_type(repo, ff, chain, qualifier)
            if field_type:
                owners = [(t.repository, t.qualified_name) for t in field_type]
            else:
                owners = [
                    (t.repository, t.qualified_name)
                    for t in self.index.resolve_type(repo, ff, qualifier, site.enclosing)
                ]
        else:
            if site.kind != S.REF:
                self.row("RECEIVER_NOT_RESOLVED", repo, ff, site, "the receiver is an expression syntax cannot type")
            return
        for owner in owners:
            found = [m for m in self.index.members_named(*owner, site.name) if m.kind in want]
            if found:
                edge_kind = {
                    S.CALL: EdgeKind.CALLS_DIRECT,
                    S.CALLBACK: EdgeKind.PASSES_AS_CALLBACK,
                    S.REF: EdgeKind.REFERENCES,
                }[site.kind]
                for t in _by_arity(found, args, types) if site.kind == S.CALL else found:
                    self.edge(edge_kind, repo, ff, site, t)
                return
        if site.kind == S.REF and binding == "":
            for t in self.index.resolve_type(repo, ff, site.name, site.enclosing):
                self.edge(EdgeKind.REFERENCES, repo, ff, site, t)
            return
        if owners and site.kind == S.CALL:
            first = owners[0]
            targets = self.index._pick(first[0], first[1])
            if targets and not self.index.has_outside_supertype(first[0], self.index._file(targets[0]), first[1]):
                self.row("MEMBER_NOT_RESOLVED", repo, ff, site, f"{first[1]} declares no method {site.name}")

    def field_type(self, repo: str, ff: FileFacts, chain: list[str], name: str) -> list[Target]:
        """The corpus type of a field named ``name`` of the enclosing types, from its declaration's text."""
        if "." in name:
            return []
        for owner in chain:
            for m in self.index.members_named(repo, owner, name):
                if m.kind in ("field", "constant"):
                    words = re.sub(r"<[^<>]*>", "", m.symbol.signature).split()
                    if len(words) >= 2:
                        where = self.index._file(m)
                        return self.index.resolve_type(m.repository, where, words[-2], m.symbol.container)
                    return []
        return []

    # -- overrides ------------------------------------------------------------------------------------------

    def overrides(self, repo: str, ff: FileFacts) -> None:
        for sym in ff.symbols:
            if sym.kind != "method" or "static" in sym.signature.split():
                continue
            owner = sym.container
            params = parameters_of(sym)
            for base in self.index.supertypes(repo, owner):
                found = [
                    m
                    for m in self.index.members.get(base, {}).get(sym.name, [])
                    if m.kind == "method" and (parameters_of(m.symbol) == params or not params)
                ]
                if not found:
                    continue
                base_types = self.index._pick(base[0], base[1])
                interface = bool(base_types) and base_types[0].kind == "interface"
                site = Site("override", sym.name, sym.start_line, sym.start_col, sym.qualified_name)
                for t in found:
                    self.edge(EdgeKind.IMPLEMENTS if interface else EdgeKind.OVERRIDES, repo, ff, site, t)
                break


# Methods Java calls without a line naming them (docs/surface.md §4.8), by name and parameter count, with the syntax.
IMPLICIT_BY: dict[tuple[str, int], str] = {
    ("close", 0): "a try-with-resources statement (at the end of its block, for each resource)",
    ("iterator", 0): "an enhanced for statement over an Iterable (for (T x : it))",
    ("hasNext", 0): "an enhanced for statement over an Iterable, on the iterator it takes",
    ("next", 0): "an enhanced for statement over an Iterable, on the iterator it takes",
    ("toString", 0): 'string concatenation and conversion ("" + x, String.valueOf(x), println(x))',
    # serialization calls these by reflection on a Serializable class (ObjectInputStream, ObjectOutputStream)
    ("readObject", 1): "Java serialization (ObjectInputStream.readObject of a Serializable object)",
    ("writeObject", 1): "Java serialization (ObjectOutputStream.writeObject of a Serializable object)",
    ("readObjectNoData", 0): "Java serialization (ObjectInputStream, for a class the stream does not list)",
    ("readResolve", 0): "Java serialization (ObjectInputStream, after reading the object)",
    ("writeReplace", 0): "Java serialization (ObjectOutputStream, before writing the object)",
}


def implicit_calls(out: Resolution, corpus: Corpus, repo: str, ff: FileFacts) -> None:
    """An ``IMPLICIT_CALL`` row on each method Java calls through syntax that names no method (``close`` for
    try-with-resources, ``iterator``/``hasNext``/``next`` for an enhanced for, ``toString`` for string
    conversion): neither javac's occurrences nor syntax record those calls as uses of it, so its callers are
    never all in the graph. The row sits on the method (``source`` is its key), in every mode."""
    for d in ff.symbols:
        if d.kind != "method" or not d.container or "static" in d.signature.split("(")[0].split():
            continue
        n = arity(d)
        by = IMPLICIT_BY.get((d.name, n)) if n is not None else None
        source = corpus.key_of(repo, ff.path, d.qualified_name, d.kind) if by else None
        if source is None:
            continue
        out.unresolved.append(
            UnresolvedFact(
                name=d.name,
                reason=IMPLICIT_CALL,
                repository=repo,
                path=ff.path,
                line=d.start_line,
                col=d.start_col,
                language=LANGUAGE,
                source=source,
                package=ff.package,
                detail=f"Java calls {d.name}() through {by}; no analyzer records such a call as a use of it",
            )
        )


def resolve(corpus: Corpus) -> Resolution:
    """Bind every Java site of the corpus on syntax: CANDIDATE edges, UNRESOLVED rows with reasons."""
    index = JavaIndex(corpus)
    resolver = _Resolver(corpus, index)
    for repo in corpus.repositories:
        for ff in repo.files:
            if not ff.parsed:
                continue

            def work(repo_name: str = repo.name, facts: FileFacts = ff) -> None:
                for site in facts.sites:
                    args = int(site.extra[3]) if len(site.extra) > 3 and site.extra[3].isdigit() else None
                    resolver.site(repo_name, facts, site, args, site.extra[4] if len(site.extra) > 4 else "")
                resolver.overrides(repo_name, facts)
                implicit_calls(resolver.out, corpus, repo_name, facts)

            resolver.out.guarded(repo.name, ff, LANGUAGE, work)
    for (consumer, cpkg, provider, ppkg), (path, line) in sorted(resolver.dependencies.items()):
        resolver.out.package_dependencies.append(PackageDependencyFact(consumer, cpkg, provider, ppkg, path, line))
    return resolver.out
