"""The Dart CANDIDATE resolver: binds the extractor's sites on syntax alone.

A library is a file plus the files it names with ``part`` (each naming it back
with ``part of``); its scope is the top-level declarations of all of them, then
the libraries it imports. URIs resolve as Dart resolves them: relative to the
importing file, ``package:NAME/PATH`` to ``lib/PATH`` of the package whose
pubspec.yaml says ``name: NAME`` (the importing repository's own package first,
else the one registered repository that has it), ``dart:`` to the SDK, which is
never indexed. An imported library contributes what it exports: its public
top-level names and, through ``export``, what the libraries it re-exports
export (``show``/``hide`` filter both; cycles are cut). A prefix (``as p``)
puts an import's names behind ``p.``.

Members: ``this.m``, a bare ``m`` inside a class and ``super.m`` look in the
class, then its mixins (last first), its superclass chain, a mixin's ``on``
types and the interfaces it implements; ``T.m`` looks in T (static members,
named constructors, enum values); ``x.m`` needs the type of ``x`` from syntax
(a typed parameter or local, ``T(...)`` and ``new T()``, a typed field or
top-level variable or getter). Members are always looked up in one type, so
two types' methods of the same name are never merged. A call of a type is a
call of its unnamed constructor (``Shape.new``) when it declares one.

Type relations: ``extends`` and ``with`` are EXTENDS (a mixin application puts
the mixin into the superclass chain), ``implements`` and a mixin's ``on`` are
IMPLEMENTS, an extension's ``on`` a TYPE_USES. A member that a supertype also
declares OVERRIDES the nearest one up the superclass chain and IMPLEMENTS the
nearest one in each implemented interface, so dispatch walks reach it from the
calls written against the supertype. ``part of`` is PART_OF between the two
module symbols. None of this is proof: every edge is CANDIDATE.

Outcomes that are not edges:
    NAME_NOT_RESOLVED           a name bound nowhere in its scope, which is fully indexed
    DART_TARGET_NOT_INDEXED     not bound, and the scope has libraries or supertypes we do not index
                                (``dart:`` libraries, unregistered packages); the detail names them
    RECEIVER_NOT_RESOLVED       a member of a value whose type syntax does not give
    MEMBER_NOT_RESOLVED         a fully indexed type (supertypes included) declares no such member
    IMPORT_NOT_RESOLVED         a relative import, export or part names no indexed file
    AMBIGUOUS_PACKAGE_PROVIDER  two or more registered repositories have a package of that name
Names of dart:core (``print``, ``int``, ``override``) produce nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, SymbolFact, UnresolvedFact
from indexer.languages.dart import sites as S
from indexer.languages.dart.modules import LANGUAGE, module_qualified_name, package_of
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

TYPE_KINDS = frozenset({"class", "mixin", "enum", "extension", "extension_type", "type_alias"})
CALLABLE_KINDS = frozenset({"function", "method", "constructor"})
_INSTANCE_KINDS = frozenset({"method", "getter", "setter", "field"})
_MAX_DEPTH = 12
_CANDIDATE = int(Confidence.CANDIDATE)
_SYNTAX, _SYNTAX_CALL = int(Provenance.TREE_SITTER_SYNTAX), int(Provenance.DART_SYNTAX_CALL)


@dataclass(frozen=True)
class Target:
    repository: str
    path: str
    symbol: SymbolFact

    @property
    def kind(self) -> str:
        return self.symbol.kind


LibKey = tuple[str, str]  # (repository, library file path)
Namespace = dict[str, list[Target]]


@dataclass(eq=False)
class _File:
    repo: str
    facts: FileFacts
    package: str  # pub name
    package_dir: str  # repository-relative directory of its pubspec.yaml
    by_qn: dict[str, SymbolFact] = field(default_factory=dict)
    top: dict[str, list[SymbolFact]] = field(default_factory=dict)
    members: dict[str, dict[str, list[SymbolFact]]] = field(default_factory=dict)  # owner qn -> name -> decls
    heritage: dict[str, list[Site]] = field(default_factory=dict)  # type qn -> its header sites
    typed: dict[str, Site] = field(default_factory=dict)  # field / variable / getter qn -> its type
    directives: list[Site] = field(default_factory=list)
    library_name: str = ""

    @property
    def path(self) -> str:
        return self.facts.path

    @property
    def module(self) -> SymbolFact:
        return self.facts.symbols[0]


def _index(repo: str, root: Path, facts: FileFacts) -> _File:
    package_dir, name = package_of(root, facts.path)
    f = _File(repo, facts, name or facts.package, package_dir)
    for s in facts.symbols:
        f.by_qn.setdefault(s.qualified_name, s)
        if s.kind == "module":
            continue
        if s.container:
            f.members.setdefault(s.container, {}).setdefault(s.name, []).append(s)
        else:
            f.top.setdefault(s.name, []).append(s)
    for site in facts.sites:
        if site.kind in S.HERITAGE:
            f.heritage.setdefault(site.enclosing, []).append(site)
        elif site.kind == S.TYPED:
            f.typed.setdefault(site.enclosing, site)
        elif site.kind in S.DIRECTIVES:
            f.directives.append(site)
            if site.kind == S.LIBRARY:
                f.library_name = site.name
    return f


def _shown(name: str, site: Site) -> bool:
    """Whether an import's or export's ``show``/``hide`` lets ``name`` through."""
    show = [n for n in site.extra[1].split(",") if n] if len(site.extra) > 1 else []
    hide = [n for n in site.extra[2].split(",") if n] if len(site.extra) > 2 else []
    return (not show or name in show) and name not in hide


@dataclass
class _Scope:
    """What a library sees besides its own declarations."""

    unprefixed: list[Namespace] = field(default_factory=list)
    prefixed: dict[str, list[Namespace]] = field(default_factory=dict)
    # URIs of imports we do not index, by prefix ("" = unprefixed), each with whether it is the SDK
    blind: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)


class _Resolver:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.out = Resolution()
        self.files: dict[tuple[str, str], _File] = {}
        self.providers: dict[str, list[tuple[str, str]]] = {}  # pub name -> [(repository, package dir)]
        for repo in corpus.repositories:
            root = Path(repo.root)
            seen: set[tuple[str, str]] = set()
            for ff in repo.files:
                if not ff.parsed or not ff.symbols:
                    continue
                f = _index(repo.name, root, ff)
                self.files[(repo.name, ff.path)] = f
                if f.package and (f.package, f.package_dir) not in seen:
                    seen.add((f.package, f.package_dir))
                    self.providers.setdefault(f.package, []).append((repo.name, f.package_dir))
        self.library_of: dict[tuple[str, str], LibKey] = {}
        self._link_parts()
        self._exports: dict[LibKey, Namespace] = {}
        self._scopes: dict[LibKey, _Scope] = {}
        self._tops: dict[LibKey, Namespace] = {}
        self._supers: dict[tuple[str, str, str], list[tuple[str, Target]]] = {}
        self._blind_supers: dict[tuple[str, str, str], list[str]] = {}

    # -- libraries, URIs, namespaces ---------------------------------------------------------------

    def resolve_uri(self, f: _File, uri: str) -> tuple[tuple[str, str] | None, str, str]:
        """(file key or None, reason when None: "sdk" | "unregistered" | a row reason, detail)."""
        if uri.startswith("dart:"):
            return None, "sdk", uri
        if uri.startswith("package:"):
            name, _, rest = uri[len("package:") :].partition("/")
            places = self.providers.get(name, [])
            own = [p for p in places if p[0] == f.repo]
            if own:
                places = own[:1]
            if not places:
                return None, "unregistered", f"no registered repository has a package named {name}"
            if len(places) > 1:
                return (
                    None,
                    "AMBIGUOUS_PACKAGE_PROVIDER",
                    f"package {name} is in " + ", ".join(sorted(r for r, _d in places)),
                )
            repo, directory = places[0]
            path = posixpath.join(directory, "lib", rest) if directory else posixpath.join("lib", rest)
            key = (repo, path)
            if key in self.files:
                return key, "", ""
            return None, "IMPORT_NOT_RESOLVED", f"{repo} has no indexed {path}"
        if ":" in uri.split("/", 1)[0]:
            return None, "unregistered", f"{uri} is not a file of a registered repository"
        base = posixpath.dirname(f.path)
        path = posixpath.normpath(posixpath.join(base, uri))
        key = (f.repo, path)
        if key in self.files and not path.startswith(".."):
            return key, "", ""
        return None, "IMPORT_NOT_RESOLVED", f"{uri} from {f.path} names no indexed file"

    def _link_parts(self) -> None:
        by_name: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for key, f in self.files.items():
            if f.library_name:
                by_name.setdefault((f.repo, f.library_name), []).append(key)
        for key, f in self.files.items():
            for site in f.directives:
                if site.kind != S.PART:
                    continue
                target, _why, _detail = self.resolve_uri(f, site.name)
                if target is not None and target != key:
                    self.library_of.setdefault(target, key)
        for key, f in self.files.items():
            if key in self.library_of:
                continue
            part_of = next((s for s in f.directives if s.kind == S.PART_OF), None)
            if part_of is not None and part_of.extra[:1] == ("name",):
                libs = by_name.get((f.repo, part_of.name), [])
                if len(libs) == 1:
                    self.library_of[key] = libs[0]

    def library(self, f: _File) -> LibKey:
        return self.library_of.get((f.repo, f.path), (f.repo, f.path))

    def library_files(self, lib: LibKey) -> list[_File]:
        files = [self.files[lib]] if lib in self.files else []
        files.extend(self.files[k] for k, v in self.library_of.items() if v == lib and k in self.files)
        return files

    def top(self, lib: LibKey) -> Namespace:
        """Every top-level declaration of a library (its parts included)."""
        found = self._tops.get(lib)
        if found is None:
            found = {}
            for f in self.library_files(lib):
                for name, decls in f.top.items():
                    found.setdefault(name, []).extend(Target(f.repo, f.path, d) for d in decls)
            self._tops[lib] = found
        return found

    def exports(self, lib: LibKey, depth: int = 0) -> Namespace:
        """What importing the library gives: its public names plus what its ``export`` directives pass on."""
        if lib in self._exports:
            return self._exports[lib]
        self._exports[lib] = {}  # a cycle sees what was gathered so far
        out: Namespace = {n: list(ts) for n, ts in self.top(lib).items() if not n.startswith("_")}
        f = self.files.get(lib)
        if f is not None and depth < _MAX_DEPTH:
            for site in f.directives:
                if site.kind != S.EXPORT:
                    continue
                target, _why, _detail = self.resolve_uri(f, site.name)
                if target is None:
                    continue
                for name, ts in self.exports(self.library(self.files[target]), depth + 1).items():
                    if _shown(name, site):
                        out.setdefault(name, []).extend(t for t in ts if t not in out.get(name, []))
        self._exports[lib] = out
        return out

    def scope(self, lib: LibKey) -> _Scope:
        found = self._scopes.get(lib)
        if found is not None:
            return found
        found = _Scope()
        f = self.files.get(lib)
        for site in f.directives if f is not None else ():
            if site.kind != S.IMPORT:
                continue
            prefix = site.extra[0] if site.extra else ""
            target, why, _detail = self.resolve_uri(f, site.name)  # type: ignore[arg-type]
            if target is None:
                found.blind.setdefault(prefix, []).append((site.name, why == "sdk"))
                continue
            names = {n: ts for n, ts in self.exports(self.library(self.files[target])).items() if _shown(n, site)}
            if prefix:
                found.prefixed.setdefault(prefix, []).append(names)
            else:
                found.unprefixed.append(names)
        self._scopes[lib] = found
        return found

    def lookup(self, f: _File, name: str) -> list[Target]:
        """A name at library level: the library's own declarations, else its unprefixed imports."""
        lib = self.library(f)
        own = self.top(lib).get(name)
        if own:
            return own
        out: list[Target] = []
        for ns in self.scope(lib).unprefixed:
            out.extend(t for t in ns.get(name, []) if t not in out)
        return out

    def blind_spots(self, f: _File, prefix: str = "") -> list[str]:
        return [uri for uri, _sdk in self.scope(self.library(f)).blind.get(prefix, [])]

    # -- types and members -------------------------------------------------------------------------

    def file_of(self, t: Target) -> _File:
        return self.files[(t.repository, t.path)]

    def resolve_type(self, f: _File, name: str, qualifier: str) -> list[Target]:
        """A type name as written in ``f`` (``qualifier`` = its import prefix, or "")."""
        if qualifier:
            out: list[Target] = []
            for ns in self.scope(self.library(f)).prefixed.get(qualifier, []):
                out.extend(t for t in ns.get(name, []) if t not in out)
            return out
        return self.lookup(f, name)

    def supers(self, t: Target) -> list[tuple[str, Target]]:
        """Direct supertypes of a type declaration in lookup order: mixins (last first), superclass, on, implements."""
        key = (t.repository, t.path, t.symbol.qualified_name)
        if key in self._supers:
            return self._supers[key]
        f = self.file_of(t)
        sites = f.heritage.get(t.symbol.qualified_name, [])
        order = {S.WITH: 0, S.EXTENDS: 1, S.ON: 2, S.IMPLEMENTS: 3}
        ranked = sorted(enumerate(sites), key=lambda p: (order[p[1].kind], -p[0] if p[1].kind == S.WITH else p[0]))
        out: list[tuple[str, Target]] = []
        blind: list[str] = []
        for _i, site in ranked:
            if t.kind == "extension" and site.kind == S.ON:
                continue  # an extension is no subtype of what it extends
            found = [
                c for c in self.resolve_type(f, site.name, site.extra[0] if site.extra else "") if c.kind in TYPE_KINDS
            ]
            if found:
                out.append((site.kind, found[0]))
            elif site.name not in S.DART_CORE:
                blind.append(site.name)
        self._supers[key] = out
        self._blind_supers[key] = blind
        return out

    def unindexed_supertypes(self, t: Target, depth: int = 0) -> list[str]:
        """Supertypes, at any depth, that are not indexed (other than dart:core's)."""
        self.supers(t)
        out = list(self._blind_supers.get((t.repository, t.path, t.symbol.qualified_name), []))
        if depth < _MAX_DEPTH:
            for _rel, s in self.supers(t):
                out.extend(self.unindexed_supertypes(s, depth + 1))
        return out

    def own_members(self, t: Target, name: str) -> list[Target]:
        f = self.file_of(t)
        return [Target(t.repository, t.path, d) for d in f.members.get(t.symbol.qualified_name, {}).get(name, [])]

    def member(self, t: Target, name: str, *, inherited: bool = True, skip_self: bool = False) -> list[Target]:
        """``name`` declared on type ``t`` or, when ``inherited``, on its supertypes (nearest first)."""
        seen: set[tuple[str, str, str]] = set()
        queue: list[tuple[Target, int]] = [(t, 0)]
        while queue:
            cur, depth = queue.pop(0)
            key = (cur.repository, cur.path, cur.symbol.qualified_name)
            if key in seen or depth > _MAX_DEPTH:
                continue
            seen.add(key)
            if not (skip_self and depth == 0):
                found = self.own_members(cur, name)
                if found and not (depth and all(m.kind == "constructor" for m in found)):
                    return [m for m in found if not depth or m.kind != "constructor"]
            if inherited or (skip_self and depth == 0):
                queue.extend((s, depth + 1) for _rel, s in self.supers(cur))
            if cur.kind == "extension" and depth == 0:
                on = next(
                    (s for s in self.file_of(cur).heritage.get(cur.symbol.qualified_name, []) if s.kind == S.ON), None
                )
                if on is not None:
                    queue.extend(
                        (c, depth + 1)
                        for c in self.resolve_type(self.file_of(cur), on.name, on.extra[0] if on.extra else "")
                        if c.kind in TYPE_KINDS
                    )
        return []

    def enclosing_type(self, f: _File, qn: str) -> Target | None:
        sym = f.by_qn.get(qn)
        while sym is not None:
            if sym.kind in TYPE_KINDS - {"type_alias"}:
                return Target(f.repo, f.path, sym)
            sym = f.by_qn.get(sym.container) if sym.container else None
        return None

    def type_of_value(self, t: Target) -> list[Target]:
        """The declared type of a field, top-level variable or getter, when its syntax says it."""
        f = self.file_of(t)
        site = f.typed.get(t.symbol.qualified_name)
        if site is None:
            return []
        return [c for c in self.resolve_type(f, site.name, site.extra[0] if site.extra else "") if c.kind in TYPE_KINDS]

    # -- sites -------------------------------------------------------------------------------------

    def run(self) -> Resolution:
        for repo in self.corpus.repositories:
            for ff in repo.files:
                f = self.files.get((repo.name, ff.path))
                if f is None:
                    continue
                self.out.guarded(repo.name, ff, LANGUAGE, lambda f=f: self._file(f))
        return self.out

    def _file(self, f: _File) -> None:
        for site in f.facts.sites:
            self.site(f, site)
        self._dispatch(f)

    def site(self, f: _File, site: Site) -> None:
        k = site.kind
        if k == S.TYPED or k == S.LIBRARY:
            return
        if k in (S.IMPORT, S.EXPORT, S.PART):
            self._directive(f, site)
            return
        if k == S.PART_OF:
            self._part_of(f, site)
            return
        if k == S.SHOW:
            self._show(f, site)
            return
        if k in S.HERITAGE:
            self._heritage(f, site)
            return
        qualifier, binding, qtype = (*site.extra, "", "", "")[:3]
        if not qualifier:
            self._bare(f, site)
        elif binding in (S.THIS, S.SUPER):
            self._on_self(f, site, qualifier, binding)
        elif binding == S.LOCAL:
            self._on_local(f, site, qualifier, qtype)
        elif binding == S.NEW:
            self._on_constructed(f, site, qualifier, qtype)
        elif binding == S.OUTER:
            self._on_outer(f, site, qualifier.split("."))
        else:
            self.unresolved(
                f, site, "RECEIVER_NOT_RESOLVED", "the receiver is an expression whose type syntax does not give"
            )

    def _directive(self, f: _File, site: Site) -> None:
        target, why, detail = self.resolve_uri(f, site.name)
        if target is None:
            if why in ("IMPORT_NOT_RESOLVED", "AMBIGUOUS_PACKAGE_PROVIDER"):
                self.unresolved(f, site, why, detail)
            return
        if site.kind == S.PART:
            return  # the part's own ``part of`` makes the PART_OF edge
        other = self.files[target]
        if other.package != f.package or other.repo != f.repo:
            self.out.package_dependencies.append(
                PackageDependencyFact(
                    consumer_repository=f.repo,
                    consumer_package=f.package,
                    provider_repository=other.repo,
                    provider_package=other.package,
                    path=f.path,
                    line=site.line,
                )
            )

    def _part_of(self, f: _File, site: Site) -> None:
        lib = self.library(f)
        if lib == (f.repo, f.path):
            if site.extra[:1] == ("uri",):
                target, why, detail = self.resolve_uri(f, site.name)
                if target is None and why == "IMPORT_NOT_RESOLVED":
                    self.unresolved(f, site, why, detail)
                    return
            self.unresolved(
                f, site, "IMPORT_NOT_RESOLVED", f"no indexed library names {f.path} as its part ({site.name})"
            )
            return
        owner = self.files[lib]
        self.edge(f, site, EdgeKind.PART_OF, Target(owner.repo, owner.path, owner.module))

    def _show(self, f: _File, site: Site) -> None:
        uri, _prefix, how = site.extra[:3]
        target, _why, _detail = self.resolve_uri(f, uri)
        if target is None:
            return  # the directive itself carries the reason, or names what we do not index
        found = self.exports(self.library(self.files[target])).get(site.name, [])
        if not found:
            self.unresolved(f, site, "NAME_NOT_RESOLVED", f"{target[1]} exports no {site.name}")
            return
        kind = EdgeKind.IMPORTS_SYMBOL if how == "import" else EdgeKind.REEXPORTS
        for t in found:
            self.edge(f, site, kind, t)

    def _heritage(self, f: _File, site: Site) -> None:
        found = [
            c for c in self.resolve_type(f, site.name, site.extra[0] if site.extra else "") if c.kind in TYPE_KINDS
        ]
        if not found:
            self._missing_name(f, site, site.extra[0] if site.extra else "")
            return
        owner = f.by_qn.get(site.enclosing)
        self.edge(f, site, edge_kind(site.kind, found[0].kind, owner.kind if owner is not None else ""), found[0])

    def _bare(self, f: _File, site: Site) -> None:
        name = site.name
        if site.kind == S.TYPE:
            found = [c for c in self.resolve_type(f, name, "") if c.kind in TYPE_KINDS]
            if found:
                self.edge(f, site, EdgeKind.TYPE_USES, found[0])
            else:
                self._missing_name(f, site, "")
            return
        owner = self.enclosing_type(f, site.enclosing)
        if owner is not None:
            found = self.member(owner, name)
            if found:
                self.use(f, site, found)
                return
        found = self.lookup(f, name)
        if found:
            self.use(f, site, found)
            return
        lib_scope = self.scope(self.library(f))
        if name in lib_scope.prefixed or (name and name in lib_scope.blind):
            return  # an import prefix: its names carry the edges
        blind_types = self.unindexed_supertypes(owner) if owner is not None else []
        self._missing_name(f, site, "", blind_types)

    def _missing_name(self, f: _File, site: Site, prefix: str, blind_types: Iterable[str] = ()) -> None:
        if site.name in S.DART_CORE:
            return
        blind = self.blind_spots(f, prefix)
        types = sorted(set(blind_types))
        if prefix and not blind and prefix not in self.scope(self.library(f)).prefixed:
            self.unresolved(f, site, "NAME_NOT_RESOLVED", f"{prefix} is no import prefix of {f.path}")
            return
        if (
            prefix
            and blind
            and all(sdk for _u, sdk in self.scope(self.library(f)).blind.get(prefix, []))
            and prefix not in self.scope(self.library(f)).prefixed
        ):
            return  # p.X of an SDK library (import 'dart:math' as p): nobody's declaration
        if blind or types:
            where = ", ".join([*blind[:3], *(f"supertype {t}" for t in types[:3])])
            self.unresolved(
                f,
                site,
                "DART_TARGET_NOT_INDEXED",
                f"{site.name} is not declared in what is indexed; it may come from {where}",
            )
            return
        self.unresolved(f, site, "NAME_NOT_RESOLVED", f"{site.name} is declared nowhere in the scope of {f.path}")

    def _on_self(self, f: _File, site: Site, qualifier: str, binding: str) -> None:
        owner = self.enclosing_type(f, site.enclosing)
        if owner is None:
            self.unresolved(f, site, "RECEIVER_NOT_RESOLVED", f"{qualifier} outside a type declaration")
            return
        words = qualifier.split(".")[1:]
        if binding == S.SUPER and site.name == "new" and not words:
            self._super_constructor(f, site, owner)
            return
        receivers = [owner]
        skip_self = binding == S.SUPER
        for w in words:
            found = self.member(receivers[0], w, skip_self=skip_self)
            skip_self = False
            receivers = [t for m in found for t in self.type_of_value(m)] if found else []
            if not receivers and found and self._core_typed(found[0]):
                return
            if not receivers:
                self.unresolved(f, site, "RECEIVER_NOT_RESOLVED", f"the type of {qualifier} is not known from syntax")
                return
        self._member_use(f, site, receivers[0], qualifier, skip_self=skip_self)

    def _super_constructor(self, f: _File, site: Site, owner: Target) -> None:
        base = next((s for rel, s in self.supers(owner) if rel == S.EXTENDS), None)
        if base is None:
            if self.unindexed_supertypes(owner):
                self.unresolved(f, site, "DART_TARGET_NOT_INDEXED", "the superclass is not indexed")
            return  # Object's constructor
        ctor = [m for m in self.own_members(base, "new") if m.kind == "constructor"]
        self.use(f, site, ctor or [base])

    def _on_local(self, f: _File, site: Site, qualifier: str, qtype: str) -> None:
        if not qtype or "." in qualifier:
            self.unresolved(f, site, "RECEIVER_NOT_RESOLVED", f"the type of {qualifier} is not known from syntax")
            return
        found = self._receiver_type(f, site, qtype)
        if found is not None:
            self._member_use(f, site, found, qualifier)

    def _receiver_type(self, f: _File, site: Site, qtype: str) -> Target | None:
        """The type declaration a receiver's syntactic type names; None (with a row unless dart:core's) if none."""
        prefix, _, tname = qtype.rpartition(".")
        types = [c for c in self.resolve_type(f, tname, prefix) if c.kind in TYPE_KINDS]
        if not types and tname not in S.DART_CORE:
            self._missing_type(f, site, qtype, prefix)
        return types[0] if types else None

    def _on_constructed(self, f: _File, site: Site, qualifier: str, qtype: str) -> None:
        """``T(...).m`` / ``T.named(...).m``: a member of T when the call is one of T's constructors."""
        found = self._receiver_type(f, site, qtype)
        if found is None:
            return
        called = qualifier[len(qtype) :].lstrip(".")
        if called and not any(m.kind == "constructor" for m in self.own_members(found, called)):
            self.unresolved(
                f,
                site,
                "RECEIVER_NOT_RESOLVED",
                f"{qualifier}(...) is not a constructor of "
                f"{found.symbol.qualified_name}: what it returns is not known from syntax",
            )
            return
        self._member_use(f, site, found, qualifier + "()")

    def _missing_type(self, f: _File, site: Site, qtype: str, prefix: str) -> None:
        blind = self.blind_spots(f, prefix)
        if prefix and blind and all(sdk for _u, sdk in self.scope(self.library(f)).blind.get(prefix, [])):
            return
        if blind:
            self.unresolved(
                f,
                site,
                "DART_TARGET_NOT_INDEXED",
                f"type {qtype} is not indexed; it may come from " + ", ".join(blind[:3]),
            )
        else:
            self.unresolved(f, site, "RECEIVER_NOT_RESOLVED", f"type {qtype} is declared nowhere in the scope")

    def _on_outer(self, f: _File, site: Site, words: list[str]) -> None:
        head, rest = words[0], words[1:]
        lib_scope = self.scope(self.library(f))
        if head in lib_scope.prefixed or (head in lib_scope.blind and head):
            if not rest:
                found = self.resolve_type(f, site.name, head)
                if found:
                    self.use(f, site, found)
                else:
                    self._missing_name(f, site, head)
                return
            found = self.resolve_type(f, rest[0], head)
            if not found:
                if rest[0] not in S.DART_CORE:
                    self._missing_name(
                        f, Site(site.kind, rest[0], site.line, site.col, site.enclosing, site.extra), head
                    )
                return
            rest = rest[1:]
        else:
            owner = self.enclosing_type(f, site.enclosing)
            found = self.member(owner, head) if owner is not None else []
            if not found:
                found = self.lookup(f, head)
            if not found:
                if head in S.DART_CORE:
                    return  # a member of a dart:core type (String.fromCharCode): nobody's declaration
                blind_types = self.unindexed_supertypes(owner) if owner is not None else []
                self._missing_name(
                    f, Site(site.kind, head, site.line, site.col, site.enclosing, site.extra), "", blind_types
                )
                return
        receiver = found[0]
        for w in rest:
            step = self._step(receiver, w)
            if step is None:
                self.unresolved(
                    f, site, "RECEIVER_NOT_RESOLVED", f"the type of {'.'.join(words)} is not known from syntax"
                )
                return
            receiver = step
        if receiver.kind in TYPE_KINDS:
            self._member_use(f, site, receiver, ".".join(words), static=True)
            return
        types = self.type_of_value(receiver)
        if not types:
            if self._core_typed(receiver):
                return  # a member of a dart:core type (a List field's add): nobody's declaration
            self.unresolved(
                f,
                site,
                "RECEIVER_NOT_RESOLVED",
                f"the type of {'.'.join(words)} "
                f"({receiver.kind} {receiver.symbol.qualified_name}) is not known from syntax",
            )
            return
        self._member_use(f, site, types[0], ".".join(words))

    def _core_typed(self, t: Target) -> bool:
        site = self.file_of(t).typed.get(t.symbol.qualified_name)
        return site is not None and not (site.extra[0] if site.extra else "") and site.name in S.DART_CORE

    def _step(self, receiver: Target, name: str) -> Target | None:
        if receiver.kind in TYPE_KINDS:
            found = self.member(receiver, name)
            return found[0] if found else None
        types = self.type_of_value(receiver)
        if not types:
            return None
        found = self.member(types[0], name)
        return found[0] if found else None

    def _member_use(
        self, f: _File, site: Site, owner: Target, qualifier: str, *, static: bool = False, skip_self: bool = False
    ) -> None:
        found = self.member(owner, site.name, inherited=not static or owner.kind == "enum", skip_self=skip_self)
        if static and not found and owner.kind != "enum":
            found = self.member(owner, site.name)  # an instance member through the type: still that member
        if found:
            self.use(f, site, found)
            return
        if site.name in S.DART_CORE:
            return
        blind = self.unindexed_supertypes(owner)
        if blind:
            self.unresolved(
                f,
                site,
                "DART_TARGET_NOT_INDEXED",
                f"{owner.symbol.qualified_name} declares no "
                f"{site.name}; its supertypes {', '.join(sorted(set(blind))[:3])} are not indexed",
            )
        else:
            self.unresolved(
                f,
                site,
                "MEMBER_NOT_RESOLVED",
                f"{owner.symbol.qualified_name} (via {qualifier}) declares no {site.name}",
            )

    def use(self, f: _File, site: Site, found: list[Target]) -> None:
        """The edge of a use site to the best of its targets (a getter before a setter, a constructor for a call)."""
        target = next((t for t in found if t.kind != "setter"), found[0])
        if site.kind == S.CALL and target.kind in TYPE_KINDS - {"type_alias", "extension"}:
            ctor = [m for m in self.own_members(target, "new") if m.kind == "constructor"]
            if ctor:
                target = ctor[0]
        self.edge(f, site, edge_kind(site.kind, target.kind), target)

    # -- dispatch ----------------------------------------------------------------------------------

    def _dispatch(self, f: _File) -> None:
        """OVERRIDES / IMPLEMENTS from each instance member to the member it overrides or implements."""
        for owner_qn, by_name in f.members.items():
            owner_sym = f.by_qn.get(owner_qn)
            if owner_sym is None or owner_sym.kind not in TYPE_KINDS or owner_sym.kind == "extension":
                continue
            owner = Target(f.repo, f.path, owner_sym)
            supers = self.supers(owner)
            if not supers:
                continue
            for name, decls in by_name.items():
                for decl in decls:
                    if decl.kind not in _INSTANCE_KINDS or decl.signature.startswith("static "):
                        continue
                    done: set[tuple[str, str, str]] = set()
                    for rel, sup in supers:
                        found = [
                            m
                            for m in self.member(sup, name)
                            if _matches(decl.kind, m.kind) and not m.symbol.signature.startswith("static ")
                        ]
                        if not found:
                            continue
                        t = found[0]
                        key = (t.repository, t.path, t.symbol.qualified_name + t.kind)
                        if key in done:
                            continue
                        done.add(key)
                        kind = EdgeKind.IMPLEMENTS if rel == S.IMPLEMENTS else EdgeKind.OVERRIDES
                        self._edge_at(f, decl.qualified_name, decl.kind, decl.start_line, decl.start_col, kind, t)

    # -- output ------------------------------------------------------------------------------------

    def source_key(self, f: _File, enclosing: str) -> str | None:
        sym = f.by_qn.get(enclosing) if enclosing else f.module
        if sym is None:
            sym = f.module
        return self.corpus.key_of(f.repo, f.path, sym.qualified_name, sym.kind)

    def edge(self, f: _File, site: Site, kind: EdgeKind, target: Target) -> None:
        sym = f.by_qn.get(site.enclosing) if site.enclosing else f.module
        sym = sym or f.module
        self._edge_at(f, sym.qualified_name, sym.kind, site.line, site.col, kind, target)

    def _edge_at(self, f: _File, qn: str, qkind: str, line: int, col: int, kind: EdgeKind, target: Target) -> None:
        source = self.corpus.key_of(f.repo, f.path, qn, qkind)
        key = self.corpus.key_of(target.repository, target.path, target.symbol.qualified_name, target.kind)
        if source is None or key is None:
            return
        provenance = _SYNTAX_CALL if kind == EdgeKind.CALLS_DIRECT else _SYNTAX
        self.out.edges.append(EdgeFact(int(kind), source, key, _CANDIDATE, provenance, line, col))

    def unresolved(self, f: _File, site: Site, reason: str, detail: str) -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=site.name,
                reason=reason,
                repository=f.repo,
                path=f.path,
                line=site.line,
                col=site.col,
                language=LANGUAGE,
                source=self.source_key(f, site.enclosing) or "",
                package=f.package,
                detail=detail,
            )
        )


def _matches(kind: str, other: str) -> bool:
    """Whether a member of ``kind`` overrides one of ``other``: methods methods, accessors accessors or fields."""
    if kind == "method" or other == "method":
        return kind == other
    if kind == "getter":
        return other in ("getter", "field")
    if kind == "setter":
        return other in ("setter", "field")
    return other in ("field", "getter", "setter")


def edge_kind(use: str, target_kind: str, source_kind: str = "") -> EdgeKind:
    """The edge a use makes: the syntax picks the class, the target's (and for ``on`` the source's) kind refines it."""
    if use in (S.EXTENDS, S.WITH):
        return EdgeKind.EXTENDS
    if use == S.ON and source_kind == "extension":
        return EdgeKind.TYPE_USES  # an extension is no subtype of what it extends
    if use in (S.IMPLEMENTS, S.ON):
        return EdgeKind.IMPLEMENTS
    if use == S.TYPE:
        return EdgeKind.TYPE_USES
    if use == S.CALL:
        if target_kind in CALLABLE_KINDS or target_kind in ("class", "enum", "extension_type"):
            return EdgeKind.CALLS_DIRECT
        return EdgeKind.TYPE_USES if target_kind in TYPE_KINDS else EdgeKind.REFERENCES
    if target_kind in TYPE_KINDS:
        return EdgeKind.TYPE_USES
    if use == S.CALLBACK:
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in CALLABLE_KINDS else EdgeKind.REFERENCES
    return EdgeKind.REFERENCES


def resolve(corpus: Corpus) -> Resolution:
    """CANDIDATE edges and UNRESOLVED rows for every site of the corpus."""
    return _Resolver(corpus).run()


__all__ = ["Target", "edge_kind", "module_qualified_name", "resolve"]
