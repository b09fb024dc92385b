"""The Rust CANDIDATE resolver: binds the extractor's sites on syntax alone.

Names resolve the way rustc's name resolution would on the same text, as far
as syntax shows it: per module, the items it declares, then its ``use``
declarations (groups, aliases, globs, ``pub use`` re-exports followed to the
declaration), then the crates (``crate::``, ``self::``, ``super::``, a
registered repository whose library crate has that name, the toolchain's
crates), then the standard prelude. A module does not see its parent's names
unless it imports them (``use super::*``), as in Rust.

Members: ``Type::f`` and ``x.m()`` look at the type's inherent impls first,
then the trait impls written for it anywhere in the corpus, then the provided
methods of the traits it implements; a trait's items include its
supertraits'. ``x.m()`` binds only when the syntax gives ``x`` a type: the
receiver ``self``, a typed parameter or ``let``, ``S { .. }``, a function or
method whose declared return type is known, a field's declared type. A
type parameter or ``dyn``/``impl`` bound binds ``x.m()`` to the bound trait's
method, which the implementations reach through IMPLEMENTS (dispatch).
Two types' methods of one name never merge: each lookup starts from a type.

Each ``impl Trait for Type`` gives IMPLEMENTS edges (type → trait, and each
member → the trait's item of its name) and METHOD_OF edges (member → type);
``trait A: B`` gives EXTENDS. None of this is proof: every edge is CANDIDATE /
TREE_SITTER_SYNTAX, and the rust-analyzer pass replaces it where it runs.

Outcomes that are not edges (unresolved rows, one per occurrence):
    NAME_NOT_RESOLVED         a name declared nowhere in its module's scope, nor imported, nor a crate
    DECLARATION_NOT_RESOLVED  a path into a module that declares no such name
    TARGET_NOT_INDEXED        the same, when the module's file parsed only in part and the name is on
                              the lines that did not parse
    MEMBER_NOT_RESOLVED       a type whose impls are all visible has no member of that name
    AMBIGUOUS_MEMBER          several trait impls (or implemented traits) provide the name: syntax
                              cannot choose (``S::from`` with two ``From`` impls)
    RECEIVER_NOT_RESOLVED     ``x.m()`` / ``x.f`` where the syntax does not give ``x`` a type
    CRATE_PROVIDER_NOT_FOUND  a path into a dependency of the Cargo.toml that no registered repository provides
    AMBIGUOUS_CRATE_PROVIDER  two or more registered repositories provide the crate
    MACRO_NOT_EXPANDED        an identifier inside a macro's arguments (token trees): it may be a use
Silent (no edge, no row), because the answer lies outside what is indexed: the
toolchain's crates (std, core, alloc) and what is reached through them, the
prelude, uses of a name whose import already has a row, names a module may
get from a glob of something unindexed, members of a type that derives
traits, implements a trait nobody registered, or is named in an item-level
macro (which may expand to impls), and methods every type has (``into``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, UnresolvedFact
from indexer.languages.rust import modules as cargo
from indexer.languages.rust import sites as S
from indexer.languages.rust.modules import LANGUAGE
from snapshot_format.vocab import EXTERNAL_OVERRIDE, Confidence, EdgeKind, Provenance

_TYPE_KINDS = frozenset({"struct", "enum", "union", "trait", "type_alias", "module", "associated_type"})
_VALUE_KINDS = frozenset({"function", "method", "const", "static", "enum_member", "struct"})
_NOMINAL = frozenset({"struct", "enum", "union"})
_CALLABLE = frozenset({"function", "method"})
_ASSOCIATED = frozenset({"method", "const", "associated_type", "enum_member"})
_IMPL_MEMBERS = frozenset({"method", "const", "associated_type"})
# Methods every type has through blanket impls of the toolchain: a miss of these is no finding.
_BLANKET_METHODS = frozenset({"into", "try_into", "from", "try_from", "borrow", "borrow_mut", "type_id", "to_owned"})
_MAX_DEPTH = 40  # nested lookups (re-export chains, receiver chains) deeper than this are cut like a cycle


@dataclass(frozen=True)
class Target:
    repository: str
    path: str
    qualified_name: str
    kind: str
    name: str


@dataclass(frozen=True)
class _Miss:
    """A lookup that found nothing, with the row it would make (not a tuple: found targets are tuples)."""

    reason: str
    detail: str
    package: str = ""


class _External:
    """A lookup that ended outside the indexed code (the toolchain, an import that already has a row)."""


EXTERNAL = _External()
Found = tuple[Target, ...] | _External | _Miss


@dataclass(eq=False)
class _File:
    repo: str
    facts: FileFacts
    manifest: cargo.Manifest | None
    kinds: dict[str, str] = field(default_factory=dict)  # qualified name -> kind (first wins)
    targets: dict[str, Target] = field(default_factory=dict)
    children: dict[str, list[Target]] = field(default_factory=dict)  # container qn -> its direct declarations
    under: dict[str, list[Target]] = field(default_factory=dict)  # qn prefix -> declarations named directly under it
    positions: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (qn, kind) -> (line, col)


@dataclass(eq=False)
class _Use:
    file: _File
    site: Site
    segments: tuple[str, ...]
    public: bool
    scope: str
    block: str


@dataclass(eq=False)
class _Module:
    repo: str
    path: str
    symbol: Target
    files: list[_File] = field(default_factory=list)
    items: dict[str, list[Target]] = field(default_factory=dict)
    uses: dict[tuple[str, str], list[_Use]] = field(default_factory=dict)  # (block, bound name) -> uses
    globs: dict[str, list[_Use]] = field(default_factory=dict)  # block -> glob uses


@dataclass(eq=False)
class _Impl:
    file: _File
    site: Site
    trait: Found | None  # None for an inherent impl
    members: list[Target]


class _Ctx(NamedTuple):
    file: _File
    scope: str
    block: str


class _TypeInfo(NamedTuple):
    """What a receiver is: ``nominal`` types, ``bounds`` (traits), ``external``, or ``unknown`` (with why)."""

    tag: str
    targets: tuple[Target, ...] = ()
    open: bool = False  # bounds: some bound is not an indexed trait
    detail: str = ""


_UNKNOWN = _TypeInfo("unknown")
_EXTERNAL_TYPE = _TypeInfo("external")


def resolve(corpus: Corpus) -> Resolution:
    """CANDIDATE edges and UNRESOLVED rows for every site of the corpus."""
    return _Resolver(corpus).run()


class _Resolver:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.files: dict[tuple[str, str], _File] = {}
        self.modules: dict[tuple[str, str], _Module] = {}
        self.crates: dict[str, list[str]] = {}  # library crate name -> registered repositories providing it
        self.impls: dict[Target, list[_Impl]] = {}
        self.impl_sites: list[tuple[_File, Site]] = []
        # (repo, path, member prefix) -> the first impl site naming members under that prefix
        self.impl_first: dict[tuple[str, str, str], Site] = {}
        # (repo, path, qn, is a field) -> (scope, type encoding, block)
        self.typeofs: dict[tuple[str, str, str, bool], tuple[str, str, str]] = {}
        self.supertraits: dict[tuple[str, str, str], list[tuple[_File, Site]]] = {}
        self.derived: set[tuple[str, str, str]] = set()  # (repo, path, type qn) with a #[derive]
        self.macro_named: set[tuple[str, str]] = set()  # (repo, name) named inside an item-level macro
        self.macro_named_in: dict[tuple[str, str], set[str]] = {}  # (repo, module) -> names its item-level macros name
        self.macros: dict[tuple[str, str], dict[str, list[Target]]] = {}  # (repo, crate) -> macro_rules by name
        self.memo: dict[object, object] = {}
        self.site_line: int | None = None  # the line of the site being resolved (textual macro scope)
        self.depth = 0
        self.out = Resolution()
        self.dependencies: set[tuple[str, str, str, str, str]] = set()

    def run(self) -> Resolution:
        for repo in self.corpus.repositories:
            for ff in repo.files:
                if ff.parsed:
                    self._index(repo.name, Path(repo.root), ff)
        for f in list(self.files.values()):
            self._index_sites(f)
        for f, site in self.impl_sites:
            self._register_impl(f, site)
        for repo in self.corpus.repositories:
            for ff in repo.files:
                f = self.files.get((repo.name, ff.path))
                if f is not None:
                    self.out.guarded(repo.name, ff, LANGUAGE, lambda f=f: [self._site(f, s) for s in f.facts.sites])
        return self.out

    # -- tables -----------------------------------------------------------------------------------

    def _module(self, repo: str, path: str) -> _Module:
        key = (repo, path)
        found = self.modules.get(key)
        if found is None:
            name = path.rsplit("::", 1)[-1]
            found = self.modules[key] = _Module(repo, path, Target(repo, "", path, "module", name))
        return found

    def _index(self, repo: str, root: Path, ff: FileFacts) -> None:
        manifest = cargo.manifest_for(root, ff.path)
        f = _File(repo, ff, manifest)
        self.files[(repo, ff.path)] = f
        if manifest is not None and ff.package == manifest.lib_name:
            providers = self.crates.setdefault(manifest.lib_name, [])
            if repo not in providers:
                providers.append(repo)
        module_qns: set[str] = set()
        for sym in ff.symbols:
            target = Target(repo, ff.path, sym.qualified_name, sym.kind, sym.name)
            if sym.kind != "field":  # a field shares its name with a getter, but never encloses a site
                f.kinds.setdefault(sym.qualified_name, sym.kind)
                f.targets.setdefault(sym.qualified_name, target)
            f.positions.setdefault((sym.qualified_name, sym.kind), (sym.start_line, sym.start_col))
            if sym.container:
                f.children.setdefault(sym.container, []).append(target)
            if "::" in sym.qualified_name:
                f.under.setdefault(sym.qualified_name.rsplit("::", 1)[0], []).append(target)
            if sym.kind == "module":
                module_qns.add(sym.qualified_name)
                mod = self._module(repo, sym.qualified_name)
                if not mod.symbol.path:
                    mod.symbol = target
                mod.files.append(f)
                if sym.qualified_name == ff.package and "::" in ff.package:
                    parent = self._module(repo, cargo.parent_module(ff.package))
                    parent.items.setdefault(sym.name, []).append(target)
        for sym in ff.symbols:
            target = f.targets.get(sym.qualified_name)
            if target is None or target.qualified_name != sym.qualified_name or sym.qualified_name == ff.package:
                continue
            if sym.container in module_qns:
                self._module(repo, sym.container).items.setdefault(sym.name, []).append(target)
            elif sym.kind == "macro" and not sym.container:  # #[macro_export]: at the crate root
                self._module(repo, cargo.parent_module(sym.qualified_name)).items.setdefault(sym.name, []).append(
                    target
                )
            if sym.kind == "macro":  # textual scope and #[macro_use]: a macro_rules is seen across its crate
                crate = self.macros.setdefault((repo, cargo.crate_of(ff.package)), {})
                crate.setdefault(sym.name, []).append(target)

    def _index_sites(self, f: _File) -> None:
        repo, ff = f.repo, f.facts
        for site in ff.sites:
            kind = site.kind
            if kind == S.USE:
                scope, path, alias, vis, block = site.extra
                use = _Use(f, site, tuple(path.split("::")), vis == "pub", scope, block)
                mod = self._module(repo, scope)
                if site.name == "*":
                    mod.globs.setdefault(block, []).append(use)
                elif alias != "_":
                    mod.uses.setdefault((block, alias or site.name), []).append(use)
            elif kind in (S.IMPL, S.INHERENT):
                self.impl_sites.append((f, site))
            elif kind == S.TYPEOF:
                scope, encoding, block, of_field = site.extra
                self.typeofs.setdefault((repo, ff.path, site.name, of_field == "field"), (scope, encoding, block))
            elif kind == S.SUPERTRAIT:
                self.supertraits.setdefault((repo, ff.path, site.enclosing), []).append((f, site))
            elif kind == S.DERIVE:
                self.derived.add((repo, ff.path, site.enclosing))
            elif kind == S.MOD:
                self._child_module(f, site)
            elif kind == S.MACRO_ARG and f.kinds.get(site.enclosing) == "module":
                self.macro_named.add((repo, site.name))
                self.macro_named_in.setdefault((repo, site.enclosing), set()).add(site.name)

    def _child_file(self, f: _File, site: Site) -> _File | None:
        """The file ``mod x;`` names by Rust's rules (``modules.child_module_paths``)."""
        for path in cargo.child_module_paths(f.facts.path, f.facts.package, site.extra[0], site.name, site.extra[1]):
            found = self.files.get((f.repo, path))
            if found is not None:
                return found
        return None

    def _child_module(self, f: _File, site: Site) -> None:
        """``mod x;``: when the file it names got another module path from its place (``tests/common/mod.rs`` of a
        test crate), the declaring module sees it as ``x`` all the same, and its macros join this crate's."""
        child = self._child_file(f, site)
        scope = site.extra[0]
        if child is None or child.facts.package == f"{scope}::{site.name}":
            return
        target = child.targets.get(child.facts.package)
        if target is None:
            return
        items = self._module(f.repo, scope).items.setdefault(site.name, [])
        if target not in items:
            items.append(target)
        crate = self.macros.setdefault((f.repo, cargo.crate_of(scope)), {})
        for t in child.targets.values():
            if t.kind == "macro" and t not in crate.get(t.name, []):
                crate.setdefault(t.name, []).append(t)

    def _register_impl(self, f: _File, site: Site) -> None:
        scope, first, self_path, prefix, block = site.extra
        ctx = _Ctx(f, scope, block)
        type_path = first if site.kind == S.INHERENT else self_path
        if self.impl_first.setdefault((f.repo, f.facts.path, prefix), site) is not site:
            return  # two ``impl S`` blocks of one file: their members are already under the first
        trait = self._path(ctx, first.split("::"), "type") if site.kind == S.IMPL else None
        impl = _Impl(f, site, trait, _members(f, prefix))
        if not type_path:
            return
        found = self._path(ctx, type_path.split("::"), "type")
        for t in found if isinstance(found, tuple) else ():
            if t.kind in _NOMINAL or t.kind == "trait":
                self.impls.setdefault(t, []).append(impl)

    # -- paths ------------------------------------------------------------------------------------

    def _path(self, ctx: _Ctx, segments: list[str], ns: str) -> Found:
        """Resolve a path written in ``ctx`` to declarations in namespace ``ns`` (``type``, ``value``, ``macro``,
        ``any``)."""
        if not segments or (not segments[0] and len(segments) == 1):
            return _Miss("NAME_NOT_RESOLVED", "an empty path")
        if self.depth > _MAX_DEPTH:
            return _Miss("NAME_NOT_RESOLVED", "the lookup nests too deep (a cycle of re-exports?)")
        self.depth += 1
        try:
            return self._walk(ctx, segments, ns)
        finally:
            self.depth -= 1

    def _walk(self, ctx: _Ctx, segments: list[str], ns: str) -> Found:
        head, rest = segments[0], list(segments[1:])
        repo = ctx.file.repo
        cur: Found
        if head in ("crate", "$crate"):
            cur = self._module_found(repo, cargo.crate_of(ctx.scope))
        elif head in ("self", "super"):
            module = ctx.scope if head == "self" else cargo.parent_module(ctx.scope)
            while rest and rest[0] == "super":
                module = cargo.parent_module(module)
                rest.pop(0)
            cur = self._module_found(repo, module)
        elif head == "":
            if not rest:
                return _Miss("NAME_NOT_RESOLVED", "an empty path")
            crate = self._extern_crate(ctx, rest.pop(0))
            cur = crate if crate is not None else _Miss("NAME_NOT_RESOLVED", f"no crate {segments[1]}")
        else:
            cur = self._scope(ctx, head, ns if not rest else "type")
        for i, segment in enumerate(rest):
            if not isinstance(cur, tuple):
                return cur
            cur = self._step(ctx, cur, segment, ns if i == len(rest) - 1 else "type")
        return cur

    def _module_found(self, repo: str, path: str) -> Found:
        mod = self.modules.get((repo, path))
        if mod is None:
            return _Miss("DECLARATION_NOT_RESOLVED", f"{repo} has no module {path}", path)
        return (mod.symbol,)

    def _scope(self, ctx: _Ctx, name: str, ns: str) -> Found:
        """A bare name: the block's items and imports, the module's, the crates, the prelude."""
        mod = self._module(ctx.file.repo, ctx.scope)
        for block in _blocks(ctx.file, ctx.block):  # a body sees the items and imports of the bodies around it
            local = [t for t in ctx.file.children.get(block, []) if t.name == name and _in(t, ns)]
            if local:
                return tuple(local)
            imported = self._imported(mod, block, name, ns, ctx.scope)
            if imported is None:
                imported = self._from_globs(mod, block, name, ns, ctx.scope)
            if imported is not None:
                return imported
        found = self._member_of_module(mod, name, ns, ctx.scope)
        if isinstance(found, tuple | _External):
            return found
        if ns == "macro":
            rules = self.macros.get((ctx.file.repo, cargo.crate_of(ctx.scope)), {}).get(name)
            if rules:
                return self._textual(ctx, rules)
        if ns in ("type", "any"):
            crate = self._extern_crate(ctx, name)
            if crate is not None:
                return crate
        if name in S.PRELUDE or (ns in ("macro", "any") and name in S.STANDARD_MACROS):
            return EXTERNAL
        if found is not None:
            return found
        return self._macro_miss(ctx.file.repo, ctx.scope, name) or _Miss(
            "NAME_NOT_RESOLVED",
            f"{name} is declared nowhere in module {ctx.scope} of {ctx.file.repo} and not imported",
            ctx.scope,
        )

    def _textual(self, ctx: _Ctx, rules: list[Target]) -> tuple[Target, ...]:
        """Of several ``macro_rules`` of one name, a use in their file sees those defined above it (textual
        scope); all of them, because such redefinitions are usually ``#[cfg]`` alternatives."""
        here = [t for t in rules if t.path == ctx.file.facts.path]
        if not here or self.site_line is None:
            return tuple(rules)
        above = [t for t in here if ctx.file.positions.get((t.qualified_name, t.kind), (0, 0))[0] < self.site_line]
        return tuple(above or rules)

    def _macro_miss(self, repo: str, module: str, name: str) -> _Miss | None:
        """A name a macro invoked at item level in ``module`` mentions: the macro may declare it."""
        if name in self.macro_named_in.get((repo, module), set()):
            return _Miss(
                "MACRO_NOT_EXPANDED",
                f"{name} may be declared by a macro invoked in {module}, which the syntax fallback does not expand",
                module,
            )
        return None

    def _imported(self, mod: _Module, block: str, name: str, ns: str, from_scope: str) -> Found | None:
        """What the module's ``use`` declarations of ``block`` bind ``name`` to (None when none binds it)."""
        targets: list[Target] = []
        external = False
        for use in mod.uses.get((block, name), []):
            if not self._visible(use, mod, from_scope):
                continue
            found = self._use_target(use)
            if found is None:
                continue  # the use being resolved: ``use log::log;`` names the crate, not itself
            if isinstance(found, tuple):
                targets.extend(t for t in found if _in(t, ns) and t not in targets)
            else:
                external = True  # the toolchain, or an import that has its own row
        if targets:
            return tuple(targets)
        return EXTERNAL if external else None

    def _member_of_module(self, mod: _Module, name: str, ns: str, from_scope: str) -> Found | None:
        """``name`` in a module: its items, its imports, then its globs. None when nothing names it."""
        key = ("module", mod.repo, mod.path, name, ns, from_scope == mod.path or from_scope.startswith(mod.path + "::"))
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = None  # in progress: a glob cycle finds nothing
        result = self._member_of_module_uncached(mod, name, ns, from_scope)
        self.memo[key] = result
        return result

    def _member_of_module_uncached(self, mod: _Module, name: str, ns: str, from_scope: str) -> Found | None:
        items = [t for t in mod.items.get(name, []) if _in(t, ns)]
        if items:
            return tuple(items)
        imported = self._imported(mod, "", name, ns, from_scope)
        if imported is not None:
            return imported
        globbed = self._from_globs(mod, "", name, ns, from_scope)
        if globbed is not None:
            return globbed
        for f in mod.files:
            if f.facts.status == "partial" and any(word == name for word, _l, _c in f.facts.unparsed):
                return _Miss(
                    "TARGET_NOT_INDEXED",
                    f"{f.facts.path} parsed only in part and {name} is on a line that did not parse ({f.facts.reason})",
                    mod.path,
                )
        return None

    def _from_globs(self, mod: _Module, block: str, name: str, ns: str, from_scope: str) -> Found | None:
        """``name`` through the glob imports of ``block`` in ``mod``; EXTERNAL when a glob of something unindexed
        may provide it, None when none does."""
        targets: list[Target] = []
        external = False
        for glob in mod.globs.get(block, []):
            if not self._visible(glob, mod, from_scope):
                continue
            found = self._use_target(glob)
            if found is None:
                continue
            if not isinstance(found, tuple):
                external = True
                continue
            for t in found:
                sub: Found | None
                if t.kind == "module":
                    other = self.modules.get((t.repository, t.qualified_name))
                    sub = self._member_of_module(other, name, ns, from_scope) if other is not None else None
                elif t.kind == "enum":
                    sub = tuple(v for v in self._children(t) if v.name == name and v.kind == "enum_member") or None
                else:
                    sub = None
                if isinstance(sub, tuple):
                    targets.extend(x for x in sub if x not in targets)
                elif sub is not None:
                    external = True
        if targets:
            return tuple(targets)
        return EXTERNAL if external else None  # EXTERNAL: the name may come from a glob of something unindexed

    @staticmethod
    def _visible(use: _Use, mod: _Module, from_scope: str) -> bool:
        """A ``use`` binds outside its module only when it is ``pub``; inside (and below) it always does."""
        return use.public or from_scope == mod.path or from_scope.startswith(mod.path + "::")

    def _use_target(self, use: _Use) -> Found | None:
        """What one ``use`` leaf names (memoised); None while it is being resolved (a cycle names nothing)."""
        key = ("use", id(use))
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = None
        ctx = _Ctx(use.file, use.scope, use.block)
        segments = list(use.segments)
        if use.site.name != "*" and segments and segments[-1] == "self":
            segments.pop()
        found = self._path(ctx, segments, "any" if use.site.name != "*" else "type")
        self.memo[key] = found
        return found

    def _extern_crate(self, ctx: _Ctx, name: str) -> Found | None:
        """A crate named ``name`` as seen from ``ctx``'s crate; None when no crate has that name."""
        root = self.modules.get((ctx.file.repo, cargo.crate_of(ctx.scope)))
        if root is not None:  # ``extern crate x as y;`` at the crate root: y names x everywhere
            for use in root.uses.get(("", name), []):
                if use.segments[:1] == ("",) and len(use.segments) == 2 and use.segments[1] != name:
                    return self._extern_crate(ctx, use.segments[1])
        providers = self.crates.get(name, [])
        if len(providers) == 1:
            return self._module_found(providers[0], name)
        if len(providers) > 1:
            return _Miss(
                "AMBIGUOUS_CRATE_PROVIDER", f"crate {name} is provided by " + ", ".join(sorted(providers)), name
            )
        if name in S.TOOLCHAIN_CRATES:
            return EXTERNAL
        manifest = ctx.file.manifest
        if manifest is not None and name in manifest.dependencies:
            return _Miss("CRATE_PROVIDER_NOT_FOUND", f"no registered repository provides crate {name}", name)
        return None

    def _step(self, ctx: _Ctx, current: tuple[Target, ...], name: str, ns: str) -> Found:
        """``name`` inside each of ``current`` (modules, types, traits)."""
        targets: list[Target] = []
        external = False
        miss: _Miss | None = None
        for t in current:
            found: Found | None
            if t.kind == "module":
                mod = self.modules.get((t.repository, t.qualified_name))
                found = self._member_of_module(mod, name, ns, ctx.scope) if mod is not None else None
                if found is None:
                    found = self._macro_miss(t.repository, t.qualified_name, name) or _Miss(
                        "DECLARATION_NOT_RESOLVED",
                        f"{t.repository} declares no {name} in {t.qualified_name}",
                        t.qualified_name,
                    )
            elif t.kind in _NOMINAL or t.kind in ("trait", "type_alias"):
                found = self._associated(ctx, t, name, "any")
            elif t.kind == "associated_type":  # ``Self::Unsigned::f``: through what the type is or its bounds
                info = self._declared_type(t)
                found = (
                    self._member_of(ctx, info, name, "any")
                    if info.tag != "unknown"
                    else _Miss(
                        "DECLARATION_NOT_RESOLVED",
                        f"what {t.qualified_name} is, is not known from syntax",
                        t.qualified_name,
                    )
                )
            else:
                found = _Miss(
                    "DECLARATION_NOT_RESOLVED",
                    f"{t.qualified_name} is a {t.kind}: it has no member {name}",
                    t.qualified_name,
                )
            if isinstance(found, tuple):
                targets.extend(x for x in found if _in(x, ns) and x not in targets)
            elif isinstance(found, _External):
                external = True
            elif miss is None or (miss.reason == "DECLARATION_NOT_RESOLVED" and found.reason != miss.reason):
                miss = found
        if targets:
            return tuple(targets)
        if external:
            return EXTERNAL
        where = ", ".join(t.qualified_name for t in current)
        return miss or _Miss("DECLARATION_NOT_RESOLVED", f"{where} declares {name}, but not as a {ns}", where)

    # -- members ----------------------------------------------------------------------------------

    def _children(self, t: Target) -> list[Target]:
        f = self.files.get((t.repository, t.path))
        return f.children.get(t.qualified_name, []) if f is not None else []

    def _associated(self, ctx: _Ctx, t: Target, name: str, want: str) -> Found:
        """``T::name`` or ``x.name`` on a value of type ``t``: its own items, inherent impls, trait impls, then the
        provided items of the traits it implements. ``want`` is ``field``, ``method`` or ``any``."""
        if t.kind == "type_alias":
            info = self._declared_type(t)
            if info.tag != "nominal":
                return (
                    EXTERNAL
                    if info.tag == "external"
                    else _Miss(
                        "MEMBER_NOT_RESOLVED", f"what type alias {t.qualified_name} names is not known from syntax"
                    )
                )
            found: list[Target] = []
            for n in info.targets:
                r = self._associated(ctx, n, name, want)
                if isinstance(r, tuple):
                    found.extend(r)
                elif r is EXTERNAL or not isinstance(r, _Miss):
                    return EXTERNAL
            return tuple(found) if found else _Miss("MEMBER_NOT_RESOLVED", f"no member {name} on {t.qualified_name}")
        if t.kind == "trait":
            items = self._trait_items(t, name)
            if items:
                return tuple(items)
            return (
                EXTERNAL
                if self._trait_is_open(t)
                else _Miss(
                    "MEMBER_NOT_RESOLVED",
                    f"trait {t.qualified_name} and its supertraits declare no {name}",
                    t.qualified_name,
                )
            )
        own = [
            c
            for c in self._children(t)
            if c.name == name and (c.kind == "field" if want == "field" else c.kind == "enum_member" and want == "any")
        ]
        if own:
            return tuple(own)
        if want == "field":
            return (
                EXTERNAL
                if self._is_open(t, name)
                else _Miss("MEMBER_NOT_RESOLVED", f"{t.qualified_name} has no field {name}", t.qualified_name)
            )
        kinds = frozenset({"method"}) if want == "method" else _ASSOCIATED
        impls = self.impls.get(t, [])
        inherent = [m for i in impls if i.trait is None for m in i.members if m.name == name and m.kind in kinds]
        if inherent:
            return tuple(inherent)
        by_impl = [[m for m in i.members if m.name == name and m.kind in kinds] for i in impls if i.trait is not None]
        by_impl = [ms for ms in by_impl if ms]
        if len(by_impl) == 1:
            return tuple(by_impl[0])
        if len(by_impl) > 1:
            return _Miss(
                "AMBIGUOUS_MEMBER",
                f"{len(by_impl)} trait impls of {t.qualified_name} declare {name}; syntax cannot choose",
                t.qualified_name,
            )
        provided: list[Target] = []
        for i in impls:
            for trait in i.trait if isinstance(i.trait, tuple) else ():
                if trait.kind == "trait":
                    provided.extend(x for x in self._trait_items(trait, name) if x.kind in kinds and x not in provided)
        if len(provided) == 1:
            return (provided[0],)
        if len(provided) > 1:
            return _Miss(
                "AMBIGUOUS_MEMBER",
                f"several traits {t.qualified_name} implements declare {name}; syntax cannot choose",
                t.qualified_name,
            )
        if self._is_open(t, name):
            return EXTERNAL
        return _Miss(
            "MEMBER_NOT_RESOLVED",
            f"{t.qualified_name}, its impls and the traits it implements declare no {name}",
            t.qualified_name,
        )

    def _is_open(self, t: Target, name: str) -> bool:
        """Members of ``t`` may come from what is not indexed: derives, impls of unindexed traits, macros."""
        if name in _BLANKET_METHODS or (t.repository, t.path, t.qualified_name) in self.derived:
            return True
        if (t.repository, t.name) in self.macro_named:
            return True
        for impl in self.impls.get(t, []):
            if impl.trait is not None and not (
                isinstance(impl.trait, tuple) and all(x.kind == "trait" for x in impl.trait)
            ):
                return True
            for trait in impl.trait if isinstance(impl.trait, tuple) else ():
                if self._trait_is_open(trait):
                    return True
        return False

    def _supertraits(self, trait: Target) -> tuple[list[Target], bool]:
        """The resolved supertraits of a trait, and whether some supertrait is not an indexed trait."""
        key = ("super", trait)
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        self.memo[key] = ([], False)
        out: list[Target] = []
        open_ = False
        for f, site in self.supertraits.get((trait.repository, trait.path, trait.qualified_name), []):
            scope, qualifier, _b, _e, block = site.extra
            found = self._path(
                _Ctx(f, scope, block), [*qualifier.split("::"), site.name] if qualifier else [site.name], "type"
            )
            if isinstance(found, tuple):
                out.extend(t for t in found if t.kind == "trait")
            else:
                open_ = True
        self.memo[key] = (out, open_)
        return out, open_

    def _trait_items(self, trait: Target, name: str, seen: frozenset[Target] = frozenset()) -> list[Target]:
        """The items named ``name`` of a trait, else of its supertraits (transitively)."""
        own = [
            c
            for c in self._children(trait)
            if c.name == name and c.kind in _ASSOCIATED and c.qualified_name == f"{trait.qualified_name}::{name}"
        ]
        if own:
            return own
        out: list[Target] = []
        for parent in self._supertraits(trait)[0]:
            if parent not in seen and parent != trait:
                out.extend(x for x in self._trait_items(parent, name, seen | {trait}) if x not in out)
        return out

    def _trait_is_open(self, trait: Target, seen: frozenset[Target] = frozenset()) -> bool:
        parents, open_ = self._supertraits(trait)
        return open_ or any(self._trait_is_open(p, seen | {trait}) for p in parents if p not in seen and p != trait)

    # -- types of receivers -------------------------------------------------------------------------

    def _declared_type(self, t: Target) -> _TypeInfo:
        """The type a declaration declares (a field's, a function's return, a const's, an alias's target)."""
        if t.kind in _NOMINAL or t.kind == "trait":
            return _TypeInfo("nominal" if t.kind != "trait" else "bounds", (t,))
        if t.kind == "enum_member":
            enum = self.files[(t.repository, t.path)].targets.get(t.qualified_name.rsplit("::", 1)[0])
            return _TypeInfo("nominal", (enum,)) if enum is not None else _UNKNOWN
        declared = self.typeofs.get((t.repository, t.path, t.qualified_name, t.kind == "field"))
        if declared is None:
            return _TypeInfo("unknown", detail=f"{t.qualified_name} declares no type syntax can read")
        scope, encoding, block = declared
        return self._type_of(_Ctx(self.files[(t.repository, t.path)], scope, block), encoding)

    def _type_of(self, ctx: _Ctx, encoding: str) -> _TypeInfo:
        """What a type encoding (sites.py) denotes, memoised per (file, scope, encoding)."""
        key = ("type", id(ctx.file), ctx.scope, ctx.block, encoding)
        if key in self.memo:
            found = self.memo[key]
            return found if found is not None else _UNKNOWN  # type: ignore[return-value]
        self.memo[key] = None
        if self.depth > _MAX_DEPTH:
            return _UNKNOWN
        self.depth += 1
        try:
            info = self._type_of_uncached(ctx, encoding)
        finally:
            self.depth -= 1
        self.memo[key] = info
        return info

    def _type_of_uncached(self, ctx: _Ctx, encoding: str) -> _TypeInfo:
        tag, _, body = encoding.partition(":")
        if not encoding:
            return _UNKNOWN
        if tag == "ext":
            return _EXTERNAL_TYPE
        if tag == "type":
            found = self._path(ctx, body.split("::"), "type")
            if not isinstance(found, tuple):
                return _EXTERNAL_TYPE if found is EXTERNAL else _TypeInfo("unknown", detail=_detail(found))
            nominal = tuple(t for t in found if t.kind in _NOMINAL)
            if nominal:
                return _TypeInfo("nominal", nominal)
            named_traits = tuple(t for t in found if t.kind == "trait")
            if named_traits:
                return _TypeInfo("bounds", named_traits)
            aliases = [t for t in found if t.kind == "type_alias"]
            if aliases:
                return self._declared_type(aliases[0])
            return _TypeInfo("unknown", detail=f"{body} is no type")
        if tag == "bound":
            traits: list[Target] = []
            open_ = False
            for path in body.split("+"):
                found = self._path(ctx, path.split("::"), "type")
                got = [t for t in found if t.kind == "trait"] if isinstance(found, tuple) else []
                traits.extend(t for t in got if t not in traits)
                open_ = open_ or not got
            return _TypeInfo("bounds", tuple(traits), open_)
        if tag == "ret":
            found = self._path(ctx, body.split("::"), "value")
            if not isinstance(found, tuple):
                return _EXTERNAL_TYPE if found is EXTERNAL else _TypeInfo("unknown", detail=_detail(found))
            return self._single_declared(found, body)
        name, _, base = body.partition(";")
        base_info = self._type_of(ctx, base)
        if base_info.tag in ("external", "unknown"):
            return base_info
        if tag == "field":
            members = [
                m
                for t in base_info.targets
                if t.kind in _NOMINAL
                for m in self._children(t)
                if m.kind == "field" and m.name == name
            ]
            return self._single_declared(tuple(members), f"field {name}") if members else _UNKNOWN
        if tag == "method":
            found = self._member_of(ctx, base_info, name, "method")
            if not isinstance(found, tuple):
                return _EXTERNAL_TYPE if found is EXTERNAL else _UNKNOWN
            return self._single_declared(found, name)
        return _UNKNOWN

    def _single_declared(self, found: tuple[Target, ...], what: str) -> _TypeInfo:
        infos = {self._declared_type(t) for t in found}
        if len(infos) == 1:
            return infos.pop()
        return _TypeInfo("unknown", detail=f"{what} has declarations of different types")

    def _member_of(self, ctx: _Ctx, info: _TypeInfo, name: str, want: str) -> Found:
        """``name`` on a value whose type is ``info`` (a method for ``method``, a field for ``field``)."""
        if info.tag == "external":
            return EXTERNAL
        if info.tag == "nominal":
            found: list[Target] = []
            for t in info.targets:
                r = self._associated(ctx, t, name, want)
                if not isinstance(r, tuple):
                    return r
                found.extend(x for x in r if x not in found)
            return tuple(found)
        if info.tag == "bounds":
            if want == "field":
                return EXTERNAL  # a field of a type parameter: nothing declares it
            items: list[Target] = []
            for trait in info.targets:
                items.extend(x for x in self._trait_items(trait, name) if x not in items)
            if len(items) == 1:
                return (items[0],)
            if len(items) > 1:
                return _Miss("AMBIGUOUS_MEMBER", f"several bounds declare {name}: syntax cannot choose")
            if info.open or any(self._trait_is_open(t) for t in info.targets):
                return EXTERNAL
            names = ", ".join(t.qualified_name for t in info.targets)
            return _Miss("MEMBER_NOT_RESOLVED", f"the bounds {names} declare no {name}")
        return _Miss("RECEIVER_NOT_RESOLVED", "")

    # -- sites --------------------------------------------------------------------------------------

    def _site(self, f: _File, site: Site) -> None:
        kind = site.kind
        self.site_line = site.line if kind == S.MACRO else None
        if kind in (S.TYPEOF, S.DERIVE):
            return
        if kind == S.MACRO_ARG:
            self._row(
                f,
                site,
                "MACRO_NOT_EXPANDED",
                f"inside the arguments of {site.extra[0]}!(..), which kivgraph's syntax fallback does not expand",
            )
            return
        if kind == S.USE:
            self._use(f, site)
            return
        if kind in (S.IMPL, S.INHERENT):
            self._impl(f, site)
            return
        if kind == S.MOD:
            child = self._child_file(f, site)
            target = child.targets.get(child.facts.package) if child is not None else None
            if target is not None:
                self._edge(f, site, EdgeKind.REFERENCES, target)
            return
        scope, qualifier, binding, encoding, block = site.extra
        ctx = _Ctx(f, scope, block)
        if binding == S.PATH:
            segments = [*qualifier.split("::"), site.name] if qualifier else [site.name]
            ns = {S.TYPE: "type", S.QUALIFIER: "type", S.SUPERTRAIT: "type", S.MACRO: "macro"}.get(kind, "value")
            found = self._path(ctx, segments, ns)
        elif binding == S.AS:
            found = self._as(ctx, qualifier, encoding, site.name)
        else:
            info = self._type_of(ctx, encoding)
            if info.tag == "unknown":
                if kind in (S.CALL, S.FIELD):
                    what = "the value" if qualifier in ("?", "") else qualifier
                    detail = info.detail or "it is not known from syntax"
                    self._row(f, site, "RECEIVER_NOT_RESOLVED", f"the type of {what} is not known: {detail}")
                return
            found = self._member_of(
                ctx,
                info,
                site.name,
                "field"
                if kind == S.FIELD
                else "method"
                if kind == S.CALL and qualifier not in ("Self",) and not qualifier[:1].isupper()
                else "any",
            )
        if isinstance(found, tuple):
            for target in found:
                if kind == S.QUALIFIER and target.kind == "module":
                    continue
                self._edge(f, site, edge_kind(kind, target.kind), target)
        elif isinstance(found, _Miss) and kind != S.QUALIFIER:
            self._row(f, site, found.reason, found.detail, found.package)

    def _as(self, ctx: _Ctx, trait_path: str, encoding: str, name: str) -> Found:
        """``<T as Trait>::name``: the impl of that trait for T, else the trait's own item."""
        traits = self._path(ctx, trait_path.split("::"), "type")
        info = self._type_of(ctx, encoding)
        out: list[Target] = []
        for trait in (t for t in traits if t.kind == "trait") if isinstance(traits, tuple) else ():
            for t in info.targets if info.tag == "nominal" else ():
                for impl in self.impls.get(t, []):
                    if isinstance(impl.trait, tuple) and trait in impl.trait:
                        # an associated type named this way is the trait's (rustc and rust-analyzer read it so)
                        out.extend(
                            m for m in impl.members if m.name == name and m not in out and m.kind != "associated_type"
                        )
            if not out:
                out.extend(x for x in self._trait_items(trait, name) if x not in out)
        if out:
            return tuple(out)
        if info.tag in ("nominal", "bounds"):  # ``Self::helper()`` inside ``impl Display for S`` is S's own
            found = self._member_of(ctx, info, name, "any")
            if isinstance(found, tuple):
                return found
        if not isinstance(traits, tuple):
            return traits
        return _Miss("MEMBER_NOT_RESOLVED", f"{trait_path} declares no {name}")

    def _use(self, f: _File, site: Site) -> None:
        scope, path, alias, vis, block = site.extra
        mod = self._module(f.repo, scope)
        bound = alias or site.name
        use = next(
            (
                u
                for u in (mod.globs.get(block, []) if site.name == "*" else mod.uses.get((block, bound), []))
                if u.site is site
            ),
            None,
        )
        if use is None:  # ``use x as _``: bound to no name, resolved all the same
            use = _Use(f, site, tuple(path.split("::")), vis == "pub", scope, block)
        found = self._use_target(use)
        if isinstance(found, _Miss):
            self._row(f, site, found.reason, found.detail, found.package)
            return
        if not isinstance(found, tuple):
            return
        kind = EdgeKind.REEXPORTS if vis == "pub" else EdgeKind.IMPORTS_SYMBOL
        for target in found:
            self._edge(f, site, kind, target)
            self._depend(f, site, target)

    def _impl(self, f: _File, site: Site) -> None:
        scope, first, self_path, prefix, block = site.extra
        ctx = _Ctx(f, scope, block)
        members = _members(f, prefix) if self.impl_first.get((f.repo, f.facts.path, prefix)) is site else []
        type_path = first if site.kind == S.INHERENT else self_path
        types = self._path(ctx, type_path.split("::"), "type") if type_path else ()
        nominal = tuple(t for t in types if t.kind in _NOMINAL or t.kind == "trait") if isinstance(types, tuple) else ()
        if site.kind == S.INHERENT:
            if isinstance(types, _Miss):
                self._row(f, site, types.reason, types.detail, types.package)
            for t in types if isinstance(types, tuple) else ():
                self._edge(f, site, edge_kind(S.TYPE, t.kind), t)
        else:
            traits = self._path(ctx, first.split("::"), "type")
            if isinstance(traits, _Miss):
                self._row(f, site, traits.reason, traits.detail, traits.package)
            elif traits is EXTERNAL:
                for member in members:
                    if member.kind == "method":
                        self._outside_impl(f, first, member)
            for trait in traits if isinstance(traits, tuple) else ():
                if trait.kind != "trait":
                    continue
                if not nominal:  # ``impl Tr for u64``: no type to implement from, the trait is still used here
                    self._edge(f, site, EdgeKind.TYPE_USES, trait)
                for t in nominal:  # the position is read in the source's file: the type's, when it is elsewhere
                    self._edge(
                        f,
                        site,
                        EdgeKind.IMPLEMENTS,
                        trait,
                        source=t,
                        at=None if t.path == f.facts.path and t.repository == f.repo else t,
                    )
                for member in members:
                    for item in self._children(trait):
                        if item.name == member.name and item.kind in _ASSOCIATED:
                            self._edge(f, site, EdgeKind.IMPLEMENTS, item, source=member, at=member)
        for t in nominal:
            for member in members:
                self._edge(f, site, EdgeKind.METHOD_OF, t, source=member, at=member)

    def _outside_impl(self, f: _File, trait: str, member: Target) -> None:
        """An ``EXTERNAL_OVERRIDE`` row on a method of ``impl Trait for T`` whose trait is outside the graph
        (``fmt::Display``, ``Iterator``, ``ops::Add``, a crate nobody registered): the trait's own code calls it
        (``format!``, a ``for`` loop, ``a + b``, generic code bounded by the trait, ``.into()`` for ``From``), and
        no such call is a use of the method (docs/surface.md §4.8)."""
        source = self._key(member)
        decl = next((d for d in f.facts.symbols if d.qualified_name == member.qualified_name), None)
        if source is None or decl is None:
            return
        self.out.unresolved.append(
            UnresolvedFact(
                name=member.name,
                reason=EXTERNAL_OVERRIDE,
                repository=f.repo,
                path=f.facts.path,
                line=decl.start_line,
                col=decl.start_col,
                language=LANGUAGE,
                source=source,
                package=trait,
                detail=(
                    f"implements {trait}::{member.name}, a trait outside the graph: its callers there (macros, "
                    "loops, operators, conversions, generic code bounded by the trait) may call it, and those "
                    "calls are not in the graph"
                ),
            )
        )

    # -- output -------------------------------------------------------------------------------------

    def _key(self, t: Target) -> str | None:
        return self.corpus.key_of(t.repository, t.path, t.qualified_name, t.kind) if t.path else None

    def _source_key(self, f: _File, enclosing: str) -> str | None:
        qn = enclosing or f.facts.package
        kind = f.kinds.get(qn)
        return self.corpus.key_of(f.repo, f.facts.path, qn, kind) if kind else None

    def _edge(
        self,
        f: _File,
        site: Site,
        kind: EdgeKind,
        target: Target,
        source: Target | None = None,
        at: Target | None = None,
    ) -> None:
        src = self._key(source) if source is not None else self._source_key(f, site.enclosing)
        dst = self._key(target)
        if src is None or dst is None or src == dst:
            return
        line, col = site.line, site.col
        if at is not None:
            line, col = self.files[(at.repository, at.path)].positions.get((at.qualified_name, at.kind), (line, col))
        self.out.edges.append(
            EdgeFact(int(kind), src, dst, int(Confidence.CANDIDATE), int(Provenance.TREE_SITTER_SYNTAX), line, col)
        )

    def _row(self, f: _File, site: Site, reason: str, detail: str, package: str = "") -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=site.name,
                reason=reason,
                repository=f.repo,
                path=f.facts.path,
                line=site.line,
                col=site.col,
                language=LANGUAGE,
                source=self._source_key(f, site.enclosing) or "",
                package=package,
                detail=detail,
            )
        )

    def _depend(self, f: _File, site: Site, target: Target) -> None:
        """A ``use`` into another crate is a package dependency (consumer module → provider module)."""
        provider = self.files.get((target.repository, target.path))
        if provider is None or cargo.crate_of(provider.facts.package) == cargo.crate_of(f.facts.package):
            return
        key = (f.repo, f.facts.package, target.repository, provider.facts.package, f.facts.path)
        if key in self.dependencies:
            return
        self.dependencies.add(key)
        self.out.package_dependencies.append(
            PackageDependencyFact(
                consumer_repository=f.repo,
                consumer_package=f.facts.package,
                provider_repository=target.repository,
                provider_package=provider.facts.package,
                path=f.facts.path,
                line=site.line,
            )
        )


def _members(f: _File, prefix: str) -> list[Target]:
    """The members of the impl(s) whose members the file names under ``prefix`` (a struct's fields excepted)."""
    return [t for t in f.under.get(prefix, []) if t.kind in _IMPL_MEMBERS]


def _blocks(f: _File, block: str) -> list[str]:
    """The function bodies around a site, innermost first: ``block`` and each enclosing function's."""
    if not block:
        return []
    out = [block]
    depth, cut = 0, []
    for i, ch in enumerate(block):
        depth += ch == "<"
        depth -= ch == ">"
        if depth == 0 and block.startswith("::", i):
            cut.append(i)
    for i in reversed(cut):
        prefix = block[:i]
        if f.kinds.get(prefix) in _CALLABLE:
            out.append(prefix)
    return out


def _in(t: Target, ns: str) -> bool:
    if ns == "any":
        return True
    if ns == "type":  # a struct-like variant names its type in ``E::V { .. }``
        return t.kind in _TYPE_KINDS or t.kind == "enum_member"
    if ns == "value":
        return t.kind in _VALUE_KINDS
    return t.kind == "macro"


def _detail(found: Found) -> str:
    return found.detail if isinstance(found, _Miss) else ""


def edge_kind(use: str, target_kind: str) -> EdgeKind:
    """The edge a use makes: the syntax picks the class, the target's kind refines it."""
    if use == S.SUPERTRAIT:
        return EdgeKind.EXTENDS
    if use == S.MACRO:
        return EdgeKind.CALLS_DIRECT
    if target_kind == "enum_member":
        return EdgeKind.REFERENCES
    if target_kind in _TYPE_KINDS - {"module"}:
        return EdgeKind.TYPE_USES
    if use == S.CALL:
        return EdgeKind.CALLS_DIRECT if target_kind in _CALLABLE else EdgeKind.REFERENCES
    if use == S.CALLBACK:
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in _CALLABLE else EdgeKind.REFERENCES
    return EdgeKind.REFERENCES
