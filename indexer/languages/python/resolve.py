"""Python resolution over a whole corpus: binds the extractor's sites to declarations, CANDIDATE only.

The extractor already decided, per site, where the head name is bound (see
``sites.py``); this module follows it across files: module tables per
repository, imports (absolute, relative, star, re-exports through
``__init__``), class members through base classes, and the values of locals
and attributes the extractor could type (``x = Foo()``, ``def f(x: Foo)``,
``self.x = Foo()``). A name is only ever bound through such a path, never
because a declaration of that name exists somewhere.

Every lookup is a dict access, memoised per (file, scope, chain), so the cost
grows with the number of distinct chains, not with the corpus squared.
Cycles (import loops, class hierarchies, ``x = x.next``) are cut by marking a
lookup in progress: a lookup that meets itself finds nothing.

Members: ``self.m()`` looks in the class, then its bases depth-first; a
member a class lacks but exactly one of its subclasses provides (a mixin
calling ``self.assertEqual``) binds to that provider.

Outcomes that are not edges (unresolved rows, one per occurrence):
    IMPORT_NOT_RESOLVED        a relative import, or a module or name of an indexed package, that does not exist
    AMBIGUOUS_PACKAGE_PROVIDER two or more other repositories provide the imported module
    NAME_NOT_RESOLVED          a name bound nowhere in its file (nor builtin), or missing from an indexed module
    RECEIVER_NOT_RESOLVED      a call on a receiver whose value is unknown (``obj.run()`` with ``obj`` untyped)
    MEMBER_NOT_RESOLVED        a call of a member that a class whose bases are all indexed, and its
                               subclasses, do not declare
    TARGET_NOT_INDEXED         the target module failed to parse, or parsed only in part and the name
                               may be on its unparsed lines
Silent (no edge, no row), because the answer lies outside what is indexed:
imports of packages nobody registered (stdlib, third party) and everything
reached through them; builtins; uses of a name whose import already has a
row; members of classes with a builtin or unindexed base, a metaclass, or
``__getattr__``; unknown names of modules with ``__getattr__``, a star import
from an unreadable module, or a ``globals()``/``exec()`` call; a member that
several subclasses provide (dispatch we cannot decide).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, UnresolvedFact
from indexer.languages.python import sites as S
from indexer.languages.python.modules import LANGUAGE, absolute_module, is_package_init
from snapshot_format.vocab import IMPLICIT_CALL, Confidence, EdgeKind, Provenance

_CALLABLE = frozenset({"function", "method"})
# Plain ints: enum member lookups are measurable on the per-site path.
_CANDIDATE = int(Confidence.CANDIDATE)
_CALLS, _REFERENCES, _IMPORTS = (int(EdgeKind.CALLS_DIRECT), int(EdgeKind.REFERENCES), int(EdgeKind.IMPORTS_SYMBOL))
_CALLBACK, _TYPE_USES, _EXTENDS = (int(EdgeKind.PASSES_AS_CALLBACK), int(EdgeKind.TYPE_USES), int(EdgeKind.EXTENDS))
_SYNTAX_CALL, _SYNTAX = int(Provenance.PYTHON_SYNTAX_CALL), int(Provenance.TREE_SITTER_SYNTAX)
_STANDS_FOR, _CERTAIN = int(EdgeKind.STANDS_FOR), int(Confidence.STRUCTURAL_CERTAIN)
_IMPORT_SYSTEM = int(Provenance.PYTHON_IMPORT_SYSTEM)
# Sites that only inform other lookups; they are never edges themselves.
_HINT_KINDS = frozenset({S.BIND, S.ATTR, S.RETURNS, S.FIXTURE, S.METACLASS, S.DYNAMIC, S.ALT})
_IN_PROGRESS = object()  # a lookup under way: meeting it again means a cycle
_MISSING = object()
_CYCLE = object()  # what a lookup that met itself returns
# Lookups nest (a chain through re-exports, bases, typed values); deeper than this is cut like a cycle,
# so a pathological corpus (a thousand-class inheritance chain) cannot exhaust the Python stack.
_MAX_DEPTH = 120


@dataclass(eq=False)
class _File:
    """One indexed file with its sites indexed by what the resolver looks up."""

    repo: str
    facts: FileFacts
    module: str
    is_init: bool
    failed: bool
    symbols: dict[str, str] = field(default_factory=dict)  # qualified name -> kind (first wins)
    imports: dict[tuple[str, str], Site] = field(default_factory=dict)  # (scope, bound name) -> import/from site
    binds: dict[tuple[str, str], Site] = field(default_factory=dict)  # (scope, name) -> bind site
    attrs: dict[tuple[str, str], Site] = field(default_factory=dict)  # (class qn, attribute) -> attr site
    bases: dict[str, list[Site]] = field(default_factory=dict)  # class qn -> base sites in order
    returns: dict[str, Site] = field(default_factory=dict)  # function qn -> returns site
    fixtures: dict[tuple[str, str], Site] = field(default_factory=dict)  # (scope qn, requested name) -> fixture site
    stars: list[Site] = field(default_factory=list)  # module-level star imports
    metaclasses: set[str] = field(default_factory=set)  # classes declared with metaclass=
    dynamic: bool = False  # calls globals()/exec(): names may exist that no statement binds
    alternatives: list[Site] = field(default_factory=list)  # ``alt`` sites: imports an ImportError fallback pairs
    top: dict[str, tuple[str, object]] | None = None  # module namespace, built on first use

    @property
    def path(self) -> str:
        return self.facts.path


def _not_indexed(target: _T) -> str:
    f = target.file
    if f is not None and f.facts.status == "partial":
        return f"{target.name} parsed only in part ({f.facts.reason})"
    return f"{target.name} failed to parse"


class _T(NamedTuple):
    """What a name or chain evaluates to."""

    tag: str  # "mod" | "sym" | "inst" | "super" | "ext" | "unk" | "failed"
    repo: str = ""
    file: _File | None = None
    name: str = ""  # module name, or the symbol's / class's qualified name
    kind: str = ""  # symbol kind


_EXT = _T("ext")
_UNK = _T("unk")


class _Walk(NamedTuple):
    """The outcome of following a chain."""

    target: _T | None  # None: the chain failed (see ``fail``)
    fail: str  # "" | "name" | "member" | "receiver"
    failed_at: str  # the segment that could not be followed
    package: str  # the module the failed segment was looked up in, when known
    passed: tuple[_T, ...]  # module-level variables the chain went through


def _stubbed_module(module: str) -> str | None:
    """The module a stub-only package's module stands for (``foo-stubs.m`` -> ``foo.m``: PEP 561), else None."""
    parts = module.split(".")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i].endswith("-stubs") and len(parts[i]) > len("-stubs"):
            return ".".join([parts[i][: -len("-stubs")], *parts[i + 1 :]])
    return None


def resolve(corpus: Corpus) -> Resolution:
    """Bind every site of every indexed file in the corpus; CANDIDATE edges and unresolved rows."""
    return _Resolver(corpus).run()


class _Resolver:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.files: list[_File] = []
        self.modules: dict[str, dict[str, _File]] = {}  # repo -> module name -> file
        self.stubs: dict[tuple[str, str], _File] = {}  # (repo, module) -> its .pyi beside a .py
        self.prefixes: dict[str, set[str]] = {}  # repo -> every module name and package prefix
        self.providers: dict[str, list[str]] = {}  # module name or prefix -> repos providing it
        self.keys: dict[tuple[int, str], str | None] = {}
        self.source_keys: dict[tuple[int, str], str | None] = {}
        self.outcomes: dict[
            tuple[object, ...], tuple[tuple[tuple[int, str, str], ...], tuple[str, str, str, str] | None]
        ] = {}
        self.memo_module: dict[tuple[str, str], tuple[str, str]] = {}
        self.memo: dict[tuple[object, ...], object] = {}
        self.cycles = 0
        self.subclass_index: dict[tuple[int, str], list[_T]] | None = None
        self.depth = 0
        self.out = Resolution()
        self.dependencies: set[tuple[str, str, str, str]] = set()
        self.positions: dict[int, dict[str, tuple[int, int]]] = {}  # id(file) -> qualified name -> (line, col)
        self.conftests: dict[tuple[str, str], _File] = {}  # (repo, directory) -> its conftest.py

    # -- tables ------------------------------------------------------------------------------------

    def run(self) -> Resolution:
        for repo in self.corpus.repositories:
            table = self.modules.setdefault(repo.name, {})
            prefixes = self.prefixes.setdefault(repo.name, set())
            for facts in repo.files:
                f = self._index(repo.name, facts)
                self.files.append(f)
                directory, _, base = f.path.rpartition("/")
                if base == "conftest.py":
                    self.conftests[(repo.name, directory)] = f
                current = table.get(f.module)
                # A module's implementation wins over its stub; the stub is still searched for names.
                if current is None:
                    table[f.module] = f
                elif current.path.endswith(".pyi") and f.path.endswith(".py"):
                    table[f.module] = f
                    self.stubs[(repo.name, f.module)] = current
                elif f.path.endswith(".pyi"):
                    self.stubs[(repo.name, f.module)] = f
                parts = f.module.split(".")
                for i in range(1, len(parts) + 1):
                    prefixes.add(".".join(parts[:i]))
            for name in prefixes:
                self.providers.setdefault(name, []).append(repo.name)
        for f in self.files:
            if not f.failed:
                self.out.guarded(f.repo, f.facts, LANGUAGE, lambda f=f: self._resolve_file(f))
        self._stand_ins()
        self._implicit_calls()
        return self.out

    # -- special methods: what syntax and the built-ins call ------------------------------------------------

    def _implicit_calls(self) -> None:
        """An ``IMPLICIT_CALL`` row on each special method a class declares (``__setitem__``, ``__eq__``,
        ``__init__``): Python calls it through syntax (``x[k] = v``, ``a == b``, ``C()``) and the built-ins
        (``len``, ``repr``, ``iter``), and no analyzer records those calls as uses of the method, so its
        callers are never all in the graph. Readers make the row a blind spot of that method alone
        (docs/surface.md §4.8)."""
        for f in self.files:
            if f.failed:
                continue
            for s in f.facts.symbols:
                if s.kind != "method" or not S.is_special_method(s.name):
                    continue
                source = self._key(f, s.qualified_name)
                if source is None:
                    continue
                self.out.unresolved.append(
                    UnresolvedFact(
                        name=s.name,
                        reason=IMPLICIT_CALL,
                        repository=f.repo,
                        path=f.path,
                        line=s.start_line,
                        col=s.start_col,
                        language=LANGUAGE,
                        source=source,
                        package=f.module,
                        detail=S.implicit_call_detail(s.name),
                    )
                )

    # -- stubs and fallbacks: STANDS_FOR ------------------------------------------------------------------

    def _stand_ins(self) -> None:
        """STANDS_FOR edges: what a checker binds a use to, towards what the run time may run instead.

        A stub stands for the implementation of its module (``m.pyi`` beside ``m.py``; ``foo-stubs/m.pyi`` for
        ``foo.m`` of any registered repository), declaration by declaration of the same qualified name; the
        first import a ``try`` body binds a name with stands for each import its ImportError handler binds the
        same name with (``alt`` sites), and two classes or modules paired so pair their members of the same
        name. The uses of either are the uses of both (docs/surface.md §4.6).
        """
        seen: set[tuple[str, str]] = set()
        for f in self.files:
            if f.failed:
                continue
            if f.path.endswith(".pyi"):
                self.out.guarded(f.repo, f.facts, LANGUAGE, lambda f=f: self._stub_file(f, seen))
            if f.alternatives:
                self.out.guarded(f.repo, f.facts, LANGUAGE, lambda f=f: self._fallbacks(f, seen))

    def _stub_file(self, f: _File, seen: set[tuple[str, str]]) -> None:
        """Pair a stub file with the implementation of its module: beside it, or the one a ``-stubs`` package
        names in any registered repository."""
        impl = self.modules[f.repo].get(f.module) if self.stubs.get((f.repo, f.module)) is f else None
        if impl is not None and impl is not f:
            self._pair(_T("mod", f.repo, f, f.module), _T("mod", f.repo, impl, f.module), seen)
        real = _stubbed_module(f.module)
        if real is None:
            return
        for repo in sorted(self.modules):
            other = self.modules[repo].get(real)
            if other is not None and other is not f:
                self._pair(_T("mod", f.repo, f, f.module), _T("mod", repo, other, real), seen)

    def _fallbacks(self, f: _File, seen: set[tuple[str, str]]) -> None:
        """Pair the names one file's try statements bind with what their ImportError handlers bind instead."""
        at = {(s.line, s.col): s for s in f.facts.sites if s.kind in (S.IMPORT, S.FROM)}
        first: dict[tuple[str, str], _T | None] = {}
        for alt in f.alternatives:
            site = at.get((alt.line, alt.col))
            value = self._import_value(f, site) if site is not None else None
            target = value if isinstance(value, _T) and value.tag in ("sym", "mod") and value.file else None
            group = (alt.extra[0], alt.name)
            if alt.extra[1] == "try":
                first[group] = target
            elif target is not None and first.get(group) is not None:
                self._pair(first[group], target, seen)  # type: ignore[arg-type]

    def _pair(self, stub: _T, impl: _T, seen: set[tuple[str, str]]) -> None:
        """STANDS_FOR from ``stub`` to ``impl``, and between their members of the same relative name."""
        a, b = stub.file, impl.file
        if a is None or b is None or a.failed or b.failed:
            return
        src, dst = self._target_key(stub), self._target_key(impl)
        if src is None or dst is None or src == dst:
            return
        self._stands_for(a, stub.name, src, dst, seen)
        if stub.tag == "sym" and (stub.kind != "class" or impl.kind != "class"):
            return  # only a module or a class has members to pair
        prefix = stub.name + "."
        for qn, kind in a.symbols.items():
            if qn.startswith(prefix) and kind != "module":
                other = impl.name + qn[len(stub.name) :]
                src, dst = self._key(a, qn, kind), self._key(b, other)
                if src is not None and dst is not None and src != dst:
                    self._stands_for(a, qn, src, dst, seen)

    def _stands_for(self, f: _File, qn: str, src: str, dst: str, seen: set[tuple[str, str]]) -> None:
        if (src, dst) in seen:
            return
        seen.add((src, dst))
        where = self.positions.get(id(f))
        if where is None:
            where = self.positions[id(f)] = {}
            for d in f.facts.symbols:
                where.setdefault(d.qualified_name, (d.start_line, d.start_col))
        line, col = where.get(qn, (1, 0))
        self.out.edges.append(EdgeFact(_STANDS_FOR, src, dst, _CERTAIN, _IMPORT_SYSTEM, line, col))

    def _index(self, repo: str, facts: FileFacts) -> _File:
        f = _File(
            repo=repo, facts=facts, module=facts.package, is_init=is_package_init(facts.path), failed=not facts.parsed
        )
        for sym in facts.symbols:
            f.symbols.setdefault(sym.qualified_name, sym.kind)
        for site in facts.sites:
            k = site.kind
            if k == S.IMPORT:
                bound = site.extra[0] if site.extra and site.extra[0] else site.name.split(".")[0]
                f.imports.setdefault((site.enclosing, bound), site)
            elif k == S.FROM:
                f.imports.setdefault((site.enclosing, site.extra[1]), site)
            elif k == S.STAR:
                if site.enclosing == "":
                    f.stars.append(site)
            elif k == S.BIND:
                f.binds.setdefault((site.enclosing, site.name), site)
            elif k == S.ATTR:
                f.attrs.setdefault((site.enclosing, site.name), site)
            elif k == S.BASE:
                f.bases.setdefault(site.enclosing, []).append(site)
            elif k == S.RETURNS:
                f.returns.setdefault(site.enclosing, site)
            elif k == S.FIXTURE:
                # the scope the fixture is declared in (its module or class); a later one of a name wins, as the
                # later ``def`` rebinds it
                f.fixtures[(site.enclosing.rpartition(".")[0], site.name)] = site
            elif k == S.METACLASS:
                f.metaclasses.add(site.enclosing)
            elif k == S.DYNAMIC:
                f.dynamic = True
            elif k == S.ALT:
                f.alternatives.append(site)
        return f

    def _top(self, f: _File) -> dict[str, tuple[str, object]]:
        """The module namespace of a file: first binding in source order wins."""
        if f.top is not None:
            return f.top
        entries: list[tuple[int, int, int, str, tuple[str, object]]] = []
        for sym in f.facts.symbols:
            if sym.container == f.module and sym.kind != "module" and "#" not in sym.qualified_name:
                entries.append((sym.start_line, sym.start_col, 0, sym.name, ("sym", sym)))
        for (scope, bound), site in f.imports.items():
            if scope == "":
                entries.append((site.line, site.col, 1, bound, ("imp", site)))
        for (scope, name), site in f.binds.items():
            if scope == "":
                entries.append((site.line, site.col, 2, name, ("bind", site)))
        entries.sort(key=lambda e: (e[0], e[1], e[2]))
        top: dict[str, tuple[str, object]] = {}
        for _, _, _, name, entry in entries:
            top.setdefault(name, entry)
        f.top = top
        return top

    def _memo(self, key: tuple[object, ...], compute: Callable[..., object], *args: object) -> object:
        """Memoised ``compute(*args)``; returns _CYCLE on re-entry. Results that met a cycle are not kept,
        since they were computed with part of the graph cut off."""
        hit = self.memo.get(key, _MISSING)
        if hit is _IN_PROGRESS:
            self.cycles += 1
            return _CYCLE
        if hit is not _MISSING:
            return hit
        if self.depth >= _MAX_DEPTH:
            return _CYCLE  # not counted as a cycle: what was found above the cut is kept
        self.memo[key] = _IN_PROGRESS
        before = self.cycles
        self.depth += 1
        try:
            value = compute(*args)
        finally:
            self.depth -= 1
        if self.cycles == before:
            self.memo[key] = value
        else:
            del self.memo[key]
        return value

    # -- keys ----------------------------------------------------------------------------------------

    def _key(self, f: _File, qn: str, kind: str | None = None) -> str | None:
        cache = (id(f), qn)
        key = self.keys.get(cache, _MISSING)
        if key is _MISSING:
            if kind is None:
                kind = f.symbols.get(qn)
            key = self.keys[cache] = self.corpus.key_of(f.repo, f.path, qn, kind) if kind else None
        return key  # type: ignore[return-value]

    def _target_key(self, t: _T) -> str | None:
        if t.file is None:
            return None
        if t.tag == "mod":
            return self._key(t.file, t.file.module, "module")
        if t.tag == "sym":
            return self._key(t.file, t.name, t.kind)
        return None

    def _source_key(self, f: _File, enclosing: str) -> str | None:
        cache = (id(f), enclosing)
        key = self.source_keys.get(cache, _MISSING)
        if key is _MISSING:
            if enclosing and enclosing in f.symbols:
                key = self._key(f, enclosing)
            else:
                key = self._key(f, f.module, "module")
            self.source_keys[cache] = key
        return key  # type: ignore[return-value]

    # -- modules -------------------------------------------------------------------------------------

    def _find_module(self, repo: str, name: str) -> tuple[str, str]:
        """(status, provider repo) of an absolute module: own | cross | ambiguous | missing | external."""
        memo = (repo, name)
        hit = self.memo_module.get(memo)
        if hit is not None:
            return hit
        if name in self.prefixes.get(repo, ()):
            result = ("own", repo)
        else:
            others = [r for r in self.providers.get(name, ()) if r != repo]
            top = name.split(".")[0]
            if len(others) == 1:
                result = ("cross", others[0])
            elif others:
                result = ("ambiguous", "")
            elif top in self.prefixes.get(repo, ()) or top in self.providers:
                result = ("missing", "")
            else:
                result = ("external", "")
        self.memo_module[memo] = result
        return result

    def _module_target(self, repo: str, name: str) -> _T:
        f = self.modules.get(repo, {}).get(name)
        if f is not None and f.failed:
            return _T("failed", repo, f, name)
        return _T("mod", repo, f, name)

    def _spec_module(self, f: _File, spec: str) -> tuple[str, str, str]:
        """(status, provider repo, absolute name) of a ``from`` module spec, relative or absolute."""
        if spec.startswith("."):
            name = absolute_module(f.module, f.is_init, spec)
            if name is None:
                return "missing", "", spec
            if name in self.prefixes.get(f.repo, ()):
                return "own", f.repo, name
            return "missing", "", name
        status, repo = self._find_module(f.repo, spec)
        return status, repo, spec

    def _import_value(self, f: _File, site: Site) -> object:
        """What an import binds its name to: a target, None when it cannot be resolved, or _CYCLE."""
        return self._memo(("import", id(site)), self._import_value_uncached, f, site)

    def _import_value_uncached(self, f: _File, site: Site) -> _T | None:
        if site.kind == S.IMPORT:
            name = site.name if site.extra and site.extra[0] else site.name.split(".")[0]
            status, repo = self._find_module(f.repo, name)
            if status in ("own", "cross"):
                return self._module_target(repo, name)
            return _EXT if status == "external" else None
        status, repo, module = self._spec_module(f, site.extra[0])
        if status in ("own", "cross"):
            return self._member_of_module(self._module_target(repo, module), site.name)
        return _EXT if status == "external" else None

    def _member_of_module(self, mod: _T, name: str) -> _T | None:
        """``name`` looked up in a module: its namespace, then star imports, then a submodule."""
        if mod.tag == "failed":
            return mod
        if mod.file is not None:
            found = self._module_name(mod.file, name)
            if found is not None and found.tag != "ext":
                return found
            # A stub beside the implementation declares what compiled or dynamic code provides.
            stub = self.stubs.get((mod.repo, mod.name))
            declared = self._module_name(stub, name) if stub is not None and not stub.failed else None
            if declared is not None and declared.tag != "ext":
                return declared
            if found is not None or declared is not None:
                return found or declared
        sub = f"{mod.name}.{name}"
        if sub in self.prefixes.get(mod.repo, ()):
            return self._module_target(mod.repo, sub)
        if mod.file is not None and mod.file.facts.status == "partial":
            return _T("failed", mod.repo, mod.file, mod.name)  # it may be declared on the lines that did not parse
        return None

    def _module_name(self, f: _File, name: str) -> _T | None:
        """A name in a file's module namespace (re-exports followed, cycles cut)."""
        key = ("name", id(f), name)
        found = self.memo.get(key)
        if found is not None and found is not _IN_PROGRESS:
            return found  # type: ignore[return-value]
        found = self._memo(key, self._module_name_uncached, f, name)
        return None if found is _CYCLE else found  # type: ignore[return-value]

    def _module_name_uncached(self, f: _File, name: str) -> _T | None:
        top = self._top(f)
        entry = top.get(name)
        if entry is not None:
            tag, item = entry
            if tag == "sym":
                return _T("sym", f.repo, f, item.qualified_name, item.kind)  # type: ignore[attr-defined]
            if tag == "bind":
                return self._bind_value(f, item)  # type: ignore[arg-type]
            before = self.cycles
            value = self._import_value(f, item)  # type: ignore[arg-type]
            if value is None and self.cycles == before:
                return _EXT  # bound by an import that failed: that import has its own row
            if value is not _CYCLE and value is not None:
                return value  # type: ignore[return-value]
            # A lookup that meets its own import (``from . import sub`` in ``__init__``) falls through.
        for star in f.stars:
            status, repo, module = self._spec_module(f, star.name)
            if status in ("external", "missing"):
                return _EXT  # anything may come from a module we cannot read (third party, compiled)
            if status not in ("own", "cross") or name.startswith("_"):
                continue
            mod = self._module_target(repo, module)
            if mod.tag == "failed":
                return mod
            if mod.file is not None:
                found = self._module_name(mod.file, name)
                if found is not None:
                    return found
        if "__getattr__" in top or f.dynamic:
            return _EXT  # a module-level __getattr__, globals() or exec() may supply any name at run time
        return None

    # -- values ------------------------------------------------------------------------------------

    def _bind_value(self, f: _File, site: Site) -> _T:
        """The value of a ``bind``/``attr`` site: an instance for annotations, the chain's value otherwise."""
        value = self._memo(("bind", id(site)), self._bind_value_uncached, f, site)
        return _UNK if value is _CYCLE else value  # type: ignore[return-value]

    def _bind_value_uncached(self, f: _File, site: Site) -> _T:
        chain, binding, scope, mode = site.extra[:4]
        if not chain:
            return _UNK
        if mode == S.FIXTURE:
            found = self._fixture(f, site.enclosing, chain)
            return _UNK if found is None else self._bind_value(*found)
        target = self._walk(f, binding, scope, chain).target
        if target is None:
            return _UNK
        return self._instance(target) if mode == S.ANNOTATION else target

    def _fixture(self, f: _File, requester: str, name: str) -> tuple[_File, Site] | None:
        """The fixture pytest gives ``requester`` (a test or a fixture) for the parameter ``name``: one declared in
        an enclosing class, then in the module, then in the ``conftest.py`` of the file's directory and of each
        directory above it in the repository. A fixture that requests its own name gets the one it overrides.
        None when the repository declares none (pytest's own and plugins' fixtures are not indexed)."""
        scope = requester.rpartition(".")[0]
        while scope:
            site = f.fixtures.get((scope, name))
            if site is not None and site.enclosing != requester:
                return f, site
            scope = scope.rpartition(".")[0]
        directory = f.path.rpartition("/")[0]
        while True:
            conftest = self.conftests.get((f.repo, directory))
            if conftest is not None and conftest is not f:
                for (owner, fixture_name), site in conftest.fixtures.items():
                    if fixture_name == name and conftest.symbols.get(owner) != "class" and site.enclosing != requester:
                        return conftest, site
            if not directory:
                return None
            directory = directory.rpartition("/")[0]

    def _instance(self, t: _T) -> _T:
        """What an annotation ``x: T`` makes ``x``: an instance of T when T is a class."""
        if t.tag == "sym" and t.kind == "class":
            return _T("inst", t.repo, t.file, t.name, "class")
        if t.tag in ("ext", "failed"):
            return _EXT
        return _UNK

    def _call_result(self, t: _T) -> _T:
        if t.tag == "sym":
            if t.kind == "class":
                return _T("inst", t.repo, t.file, t.name, "class")
            if t.kind in _CALLABLE and t.file is not None:
                ret = t.file.returns.get(t.name)
                if ret is not None:
                    walk = self._walk(t.file, ret.extra[0], ret.extra[1], ret.name)
                    return self._instance(walk.target) if walk.target is not None else _UNK
            return _UNK
        if t.tag in ("ext", "failed"):
            return _EXT
        return _UNK

    def _local(self, f: _File, scope: str, name: str) -> _T:
        """A name bound in a function or class scope: nested declaration, local import, followable value."""
        qn = f"{scope}.{name}"
        kind = f.symbols.get(qn)
        if kind is not None:
            return _T("sym", f.repo, f, qn, kind)
        site = f.imports.get((scope, name))
        if site is not None:
            value = self._import_value(f, site)
            return _EXT if value is None else (_UNK if value is _CYCLE else value)  # type: ignore[return-value]
        bind = f.binds.get((scope, name))
        if bind is not None:
            return self._bind_value(f, bind)
        return _UNK

    # -- classes -----------------------------------------------------------------------------------

    def _mro(self, f: _File, qn: str) -> tuple[list[_T], bool]:
        """Classes to search for members, depth-first from ``qn``; True if some base is not indexed."""
        found = self._memo(("mro", id(f), qn), self._mro_uncached, f, qn)
        return ([], False) if found is _CYCLE else found  # type: ignore[return-value]

    def _mro_uncached(self, f: _File, qn: str) -> tuple[list[_T], bool]:
        order = [_T("sym", f.repo, f, qn, "class")]
        seen = {(id(f), qn)}
        # Members we cannot list: a metaclass, or attribute hooks, may supply any name.
        uncertain = qn in f.metaclasses or f"{qn}.__getattr__" in f.symbols or f"{qn}.__getattribute__" in f.symbols
        for base_site in f.bases.get(qn, ()):
            base = self._walk(f, base_site.extra[0], base_site.extra[1], base_site.name).target
            if base is None or base.tag != "sym" or base.kind != "class" or base.file is None:
                uncertain = True
                continue
            sub_order, sub_uncertain = self._mro(base.file, base.name)
            uncertain = uncertain or sub_uncertain
            for cls in sub_order:
                if (id(cls.file), cls.name) not in seen:
                    seen.add((id(cls.file), cls.name))
                    order.append(cls)
        return order, uncertain

    def _member(self, f: _File, qn: str, name: str, skip_self: bool = False) -> tuple[_T | None, bool]:
        """A member declared by a class or its bases; (found, whether a base was not indexed)."""
        found = self._memo(("member", id(f), qn, name, skip_self), self._member_uncached, f, qn, name, skip_self)
        return (None, False) if found is _CYCLE else found  # type: ignore[return-value]

    def _member_uncached(self, f: _File, qn: str, name: str, skip_self: bool) -> tuple[_T | None, bool]:
        order, uncertain = self._mro(f, qn)
        classes = order[1:] if skip_self else order
        for cls in classes:
            assert cls.file is not None
            mqn = f"{cls.name}.{name}"
            kind = cls.file.symbols.get(mqn)
            if kind is not None:
                return _T("sym", cls.repo, cls.file, mqn, kind), uncertain
        for cls in classes:
            assert cls.file is not None
            site = cls.file.attrs.get((cls.name, name))
            if site is not None:
                return self._bind_value(cls.file, site), uncertain
        return None, uncertain

    def _subclasses(self) -> dict[tuple[int, str], list[_T]]:
        """Direct subclasses of every indexed class, in corpus order (built on first use)."""
        if self.subclass_index is None:
            index: dict[tuple[int, str], list[_T]] = {}
            self.subclass_index = index
            for f in self.files:
                for qn, base_sites in f.bases.items():
                    sub = _T("sym", f.repo, f, qn, "class")
                    for site in base_sites:
                        base = self._walk(f, site.extra[0], site.extra[1], site.name).target
                        if base is not None and base.tag == "sym" and base.kind == "class" and base.file is not None:
                            index.setdefault((id(base.file), base.name), []).append(sub)
        return self.subclass_index

    def _member_of_subclasses(self, f: _File, qn: str, name: str) -> _T | None:
        """A member a mixin uses but only its subclasses provide: the one provider, _EXT if unknowable."""
        found = self._memo(("sub", id(f), qn, name), self._member_of_subclasses_uncached, f, qn, name)
        return _EXT if found is _CYCLE else found  # type: ignore[return-value]

    def _member_of_subclasses_uncached(self, f: _File, qn: str, name: str) -> _T | None:
        index = self._subclasses()
        queue = list(index.get((id(f), qn), ()))
        seen: set[tuple[int, str]] = set()
        providers: dict[tuple[int, str], _T] = {}
        open_ended = False
        while queue:
            sub = queue.pop(0)
            key = (id(sub.file), sub.name)
            if key in seen or sub.file is None:
                continue
            seen.add(key)
            member, uncertain = self._member(sub.file, sub.name, name)
            if member is not None:
                providers.setdefault((id(member.file), member.name), member)
                continue  # deeper subclasses inherit it
            open_ended = open_ended or uncertain
            queue.extend(index.get(key, ()))
        if len(providers) == 1:
            return next(iter(providers.values()))
        # Several providers is dispatch we cannot decide; a subclass with unindexed bases may provide it.
        return _EXT if providers or open_ended else None

    # -- chains ------------------------------------------------------------------------------------

    def _walk(self, f: _File, binding: str, scope: str, chain: str) -> _Walk:
        key = ("walk", id(f), binding, scope, chain)
        found = self.memo.get(key)
        if found is not None and found is not _IN_PROGRESS:
            return found  # type: ignore[return-value]
        found = self._memo(key, self._walk_uncached, f, binding, scope, chain)
        return _Walk(_UNK, "", "", "", ()) if found is _CYCLE else found  # type: ignore[return-value]

    def _walk_uncached(self, f: _File, binding: str, scope: str, chain: str) -> _Walk:
        parts = chain.split(".")
        head, calls = S.segment(parts[0])
        passed: list[_T] = []
        t: _T | None
        if binding == S.MODULE:
            t = self._module_name(f, head)
            if t is None:
                if head in S.IMPLICIT_NAMES or head in self._top(f):
                    # Builtins are not indexed; an import that failed already has its own row.
                    return _Walk(_EXT, "", "", "", ())
                return _Walk(None, "name", head, f.module, ())
        elif binding == S.LOCAL:
            t = self._local(f, scope, head)
        elif binding == S.SELF:
            t = _T("inst", f.repo, f, scope, "class")
        elif binding == S.CLS:
            t = _T("sym", f.repo, f, scope, "class")
        elif binding == S.SUPER:
            t = _T("super", f.repo, f, scope, "class")
            calls = 0
        else:
            t = _UNK
        for _ in range(calls):
            t = self._call_result(self._through_variable(t, passed))
        for seg in parts[1:]:
            name, calls = S.segment(seg)
            t = self._through_variable(t, passed)
            step = self._attribute(t, name)
            if step.target is None:
                return step._replace(passed=tuple(passed))
            t = step.target
            for _ in range(calls):
                t = self._call_result(self._through_variable(t, passed))
        return _Walk(t, "", "", "", tuple(passed))

    def _through_variable(self, t: _T, passed: list[_T]) -> _T:
        """Before using a module-level variable as a receiver, note it and use its value."""
        if t.tag == "sym" and t.kind == "variable" and t.file is not None:
            passed.append(t)
            bind = t.file.binds.get(("", t.name.rsplit(".", 1)[-1]))
            return self._bind_value(t.file, bind) if bind is not None else _UNK
        return t

    def _attribute(self, t: _T, name: str) -> _Walk:
        """One attribute step of a chain."""
        tag = t.tag
        if tag in ("ext", "failed"):
            return _Walk(t, "", "", "", ())
        if tag == "mod":
            found = self._member_of_module(t, name)
            if found is None and name in S.IMPLICIT_NAMES:
                return _Walk(_EXT, "", "", "", ())  # mod.__name__, mod.__file__
            if found is None:
                return _Walk(None, "name", name, t.name, ())
            return _Walk(found, "", "", "", ())
        if tag in ("sym", "inst", "super") and t.kind == "class" and t.file is not None:
            found, uncertain = self._member(t.file, t.name, name, skip_self=tag == "super")
            if found is None and not uncertain and tag != "super":
                found = self._member_of_subclasses(t.file, t.name, name)
            if found is not None:
                return _Walk(found, "", "", "", ())
            if uncertain or name in S.OBJECT_MEMBERS:
                return _Walk(_EXT, "", "", "", ())
            return _Walk(None, "member", name, t.file.module, ())
        return _Walk(_UNK, "", "", "", ())

    # -- emission ----------------------------------------------------------------------------------

    def _resolve_file(self, f: _File) -> None:
        emit_reference = self._emit_reference
        for site in f.facts.sites:
            k = site.kind
            if k in _HINT_KINDS:
                continue
            if k == S.IMPORT:
                self._emit_import(f, site)
            elif k == S.FROM or k == S.STAR:
                self._emit_from(f, site)
            else:
                emit_reference(f, site)

    def _edge(self, kind: int, source: str | None, target: str | None, site: Site) -> None:
        if source is None or target is None:
            return
        provenance = _SYNTAX_CALL if kind == _CALLS else _SYNTAX
        self.out.edges.append(EdgeFact(kind, source, target, _CANDIDATE, provenance, site.line, site.col))

    def _unresolved(self, f: _File, site: Site, name: str, reason: str, package: str = "", detail: str = "") -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=name,
                reason=reason,
                repository=f.repo,
                path=f.path,
                line=site.line,
                col=site.col,
                language=LANGUAGE,
                source=self._source_key(f, site.enclosing) or "",
                package=package,
                detail=detail,
            )
        )

    def _depend(self, f: _File, provider: str, module: str, site: Site) -> None:
        dep = (f.repo, f.module.split(".")[0], provider, module.split(".")[0])
        if dep not in self.dependencies:
            self.dependencies.add(dep)
            self.out.package_dependencies.append(PackageDependencyFact(*dep, path=f.path, line=site.line))

    def _import_status_rows(self, f: _File, site: Site, status: str, module: str, name: str, detail: str) -> bool:
        """Rows for an import whose module is not usable; True when the module resolved."""
        if status == "ambiguous":
            self._unresolved(f, site, name, "AMBIGUOUS_PACKAGE_PROVIDER", module, detail)
        elif status == "missing":
            self._unresolved(f, site, name, "IMPORT_NOT_RESOLVED", module, detail)
        return status in ("own", "cross")

    def _emit_import(self, f: _File, site: Site) -> None:
        module = site.name
        status, repo = self._find_module(f.repo, module)
        if not self._import_status_rows(f, site, status, module, module, f"import {module}"):
            return
        if status == "cross":
            self._depend(f, repo, module, site)
        target = self._module_target(repo, module)
        if target.tag == "failed":
            self._unresolved(f, site, module, "TARGET_NOT_INDEXED", module, f"{module} failed to parse")
            return
        self._edge(_IMPORTS, self._key(f, f.module, "module"), self._target_key(target), site)

    def _emit_from(self, f: _File, site: Site) -> None:
        spec = site.extra[0] if site.kind == S.FROM else site.name
        name = site.name if site.kind == S.FROM else "*"
        status, repo, module = self._spec_module(f, spec)
        detail = f"from {spec} import {name}"
        if not self._import_status_rows(f, site, status, module, name, detail):
            return
        if status == "cross":
            self._depend(f, repo, module, site)
        mod = self._module_target(repo, module)
        target = mod if site.kind == S.STAR else self._import_value(f, site)
        source = self._key(f, f.module, "module")
        if target is None or target is _CYCLE:
            self._unresolved(f, site, name, "IMPORT_NOT_RESOLVED", module, detail)
        elif target.tag == "failed":  # type: ignore[union-attr]
            self._unresolved(f, site, name, "TARGET_NOT_INDEXED", module, _not_indexed(target))  # type: ignore[arg-type]
        elif target.tag in ("mod", "sym"):  # type: ignore[union-attr]
            self._edge(_IMPORTS, source, self._target_key(target), site)  # type: ignore[arg-type]

    def _emit_reference(self, f: _File, site: Site) -> None:
        extra = site.extra
        memo = (id(f), site.kind, site.name, site.enclosing, *extra)
        outcome = self.outcomes.get(memo)
        if outcome is None:
            outcome = self.outcomes[memo] = self._reference_outcome(f, site)
        edges, row = outcome
        line, col = site.line, site.col
        append = self.out.edges.append
        for kind, source, target in edges:
            append(EdgeFact(kind, source, target, _CANDIDATE, _SYNTAX_CALL if kind == _CALLS else _SYNTAX, line, col))
        if row is not None:
            name, reason, package, detail = row
            self._unresolved(f, site, name, reason, package, detail)

    def _reference_outcome(
        self, f: _File, site: Site
    ) -> tuple[tuple[tuple[int, str, str], ...], tuple[str, str, str, str] | None]:
        """What a reference site yields, position aside: (kind, source, target) edges and at most one row."""
        binding, scope = site.extra[0], site.extra[1]
        walk = self._walk(f, binding, scope, site.name)
        source = self._source_key(f, site.enclosing)
        if source is None:
            return (), None
        edges: list[tuple[int, str, str]] = []
        for var in walk.passed:
            var_key = self._target_key(var)
            if var_key is not None:
                edges.append((_REFERENCES, source, var_key))
        k = site.kind
        is_call = k in (S.CALL, S.DECORATOR)
        target = walk.target
        if target is None:
            if walk.fail == "name":
                return tuple(edges), (walk.failed_at, "NAME_NOT_RESOLVED", walk.package, site.name)
            if walk.fail == "member" and is_call:
                return tuple(edges), (walk.failed_at, "MEMBER_NOT_RESOLVED", walk.package, site.name)
            return tuple(edges), None
        tag = target.tag
        if tag == "failed":
            return tuple(edges), (
                site.name.rsplit(".", 1)[-1],
                "TARGET_NOT_INDEXED",
                target.name,
                f"{target.name} failed to parse",
            )
        if tag == "unk":
            if is_call and ("." in site.name or site.name.endswith(S.CALLED)):
                detail = site.extra[2] if len(site.extra) > 2 else site.name
                name = S.segment(site.name.rsplit(".", 1)[-1])[0]
                return tuple(edges), (name, "RECEIVER_NOT_RESOLVED", "", detail)
            return tuple(edges), None
        target_key = self._target_key(target) if tag in ("sym", "mod") else None
        if target_key is None:
            return tuple(edges), None
        kind = target.kind if tag == "sym" else "module"
        if is_call:
            edge = _CALLS if kind in _CALLABLE or kind == "class" else _REFERENCES
        elif k == S.ARG:
            edge = _CALLBACK if kind in _CALLABLE else _REFERENCES
        elif k == S.TYPE:
            edge = _TYPE_USES if tag == "sym" else _REFERENCES
        elif k == S.BASE:
            edge = _EXTENDS if kind == "class" else _REFERENCES
        else:
            edge = _REFERENCES
        edges.append((edge, source, target_key))
        return tuple(edges), None
