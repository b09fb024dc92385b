"""TypeScript/JavaScript resolution on syntax alone: binds the extractor's sites, CANDIDATE only.

Module specifiers resolve the way Node and TypeScript look files up
(relative paths with every extension, ``./x.js`` naming ``x.ts``, ``index``
files); a bare specifier names a registered repository whose ``package.json``
carries that name, and binds only when exactly one does. Imported names
follow the target's exports: export modifiers, ``export {a as b}``,
``export default``, re-exports and ``export *`` barrels, to any depth (cycles
cut). A chain's head is bound in the file (nested and top-level declarations,
imports); ``this.m`` looks ``m`` up in the enclosing class and its bases.
A file of the other language (a ``.ts`` importing a ``.js``) is read from disk.

Outcomes that are not edges:
    MODULE_NOT_RESOLVED        a relative specifier, or a registered package's subpath, names no file
    EXPORT_NOT_FOUND           the module resolved but does not export the name
    AMBIGUOUS_PACKAGE_PROVIDER two or more registered repositories are named like the package
    NAME_NOT_RESOLVED          a called name bound nowhere in its file and not a JavaScript global
    MEMBER_NOT_RESOLVED        a member a fully indexed class (bases included) does not declare
    RECEIVER_NOT_RESOLVED      a call on a receiver whose value syntax cannot know (``obj.run()``)
Packages nobody registered (``react``, Node built-ins) are silent.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, UnresolvedFact
from indexer.languages.typescript import sites as S
from indexer.languages.typescript.extract import extract
from indexer.languages.typescript.modules import EXTENSIONS, JS_EXTENSIONS, language_of, package_for
from indexer.languages.typescript.packages import entry_points, manifest, package_dirs, split_specifier
from snapshot_format.vocab import IMPLICIT_CALL, Confidence, EdgeKind, Provenance

_CANDIDATE = int(Confidence.CANDIDATE)
_SYNTAX = int(Provenance.TREE_SITTER_SYNTAX)
_CALLABLE = frozenset({"function", "method"})
_TYPES = frozenset({"class", "interface", "enum", "namespace", "type"})
_MAX_DEPTH = 60
GLOBALS = frozenset(
    {
        "console",
        "Math",
        "JSON",
        "Object",
        "Array",
        "String",
        "Number",
        "Boolean",
        "Symbol",
        "BigInt",
        "Promise",
        "Date",
        "RegExp",
        "Error",
        "TypeError",
        "RangeError",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "WeakRef",
        "Reflect",
        "Proxy",
        "Intl",
        "parseInt",
        "parseFloat",
        "isNaN",
        "isFinite",
        "setTimeout",
        "clearTimeout",
        "setInterval",
        "clearInterval",
        "queueMicrotask",
        "structuredClone",
        "require",
        "module",
        "exports",
        "process",
        "globalThis",
        "window",
        "document",
        "fetch",
        "URL",
        "URLSearchParams",
        "AbortController",
        "Buffer",
        "encodeURIComponent",
        "decodeURIComponent",
        "encodeURI",
        "decodeURI",
        "atob",
        "btoa",
        "alert",
        "describe",
        "it",
        "test",
        "expect",
        "beforeEach",
        "afterEach",
        "beforeAll",
        "afterAll",
        "jest",
        "vi",
        "Function",
        "undefined",
        "super",
        "requestAnimationFrame",
        "cancelAnimationFrame",
        "performance",
        "navigator",
        "location",
        "history",
        "localStorage",
        "sessionStorage",
        "addEventListener",
        "removeEventListener",
        "dispatchEvent",
        "Event",
        "CustomEvent",
        "TextEncoder",
        "TextDecoder",
        "Uint8Array",
        "ArrayBuffer",
        "DataView",
        "Int32Array",
        "Float64Array",
        "AggregateError",
        "Atomics",
        "SharedArrayBuffer",
        "eval",
        "import",
    }
)

Target = tuple[str, str, str, str]  # (repository, path, qualified name, kind)


@dataclass(eq=False)
class _File:
    repo: str
    facts: FileFacts
    top: dict[str, tuple[str, str]] = field(default_factory=dict)  # top-level name -> (qn, kind)
    qns: dict[str, str] = field(default_factory=dict)  # qn -> kind (first wins)
    imports: dict[str, Site] = field(default_factory=dict)  # local name -> import site
    exports: dict[str, list[Site]] = field(default_factory=dict)  # exported name -> export/reexport sites
    stars: list[Site] = field(default_factory=list)
    bases: dict[str, list[Site]] = field(default_factory=dict)  # class qn -> extends sites

    @property
    def path(self) -> str:
        return self.facts.path

    @property
    def module(self) -> str:
        return self.facts.symbols[0].qualified_name if self.facts.symbols else ""


def _index(repo: str, facts: FileFacts) -> _File:
    f = _File(repo, facts)
    module = f.module
    for s in facts.symbols:
        f.qns.setdefault(s.qualified_name, s.kind)
        if s.container == "" and s.kind != "module":
            f.top.setdefault(s.name, (s.qualified_name, s.kind))
    for site in facts.sites:
        if site.kind == S.IMPORT:
            f.imports[site.extra[1]] = site
        elif site.kind in (S.EXPORT, S.REEXPORT):
            if site.kind == S.REEXPORT and site.name == "*":
                f.stars.append(site)
            else:
                f.exports.setdefault(site.name, []).append(site)
        elif site.kind == S.EXTENDS:
            f.bases.setdefault(site.enclosing or module, []).append(site)
    return f


class _Resolver:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.files: dict[tuple[str, str], _File] = {}
        self.roots: dict[str, str] = {}
        self.providers: dict[str, list[tuple[str, str]]] = {}  # package name -> [(repo, package dir)]
        self.out = Resolution()
        self._disk: dict[tuple[str, str], _File | None] = {}
        for repo in corpus.repositories:
            self.roots[repo.name] = repo.root
            for ff in repo.files:
                self.files[(repo.name, ff.path)] = _index(repo.name, ff)
            for d, name in package_dirs(repo.root, [ff.path for ff in repo.files]).items():
                self.providers.setdefault(name, []).append((repo.name, d))

    # -- files and modules -------------------------------------------------------------------------

    def file(self, repo: str, path: str) -> _File | None:
        found = self.files.get((repo, path))
        if found is not None:
            return found
        if (repo, path) not in self._disk:  # the other language's file: extracted here, never cached
            self._disk[(repo, path)] = None
            full = Path(self.roots[repo], path)
            if path.endswith(EXTENSIONS) and not path.endswith(".d.ts") and full.is_file():
                ff = extract(path, full.read_bytes(), package_for(path, frozenset()))
                self._disk[(repo, path)] = _index(repo, ff)
        return self._disk[(repo, path)]

    def _lookup(self, repo: str, base: str) -> _File | None:
        base = posixpath.normpath(base)
        if base.startswith(".."):
            return None
        stems = [base]
        if base.endswith(JS_EXTENSIONS):  # `./x.js` in TypeScript ESM names x.ts
            stems.append(base.rsplit(".", 1)[0])
        for stem in stems:
            if stem.endswith(EXTENSIONS):
                f = self.file(repo, stem.removeprefix("./"))
                if f is not None:
                    return f
            for ext in EXTENSIONS:
                for cand in (stem + ext, posixpath.join(stem, "index" + ext)):
                    f = self.file(repo, cand.removeprefix("./"))
                    if f is not None:
                        return f
        return None

    def module(self, f: _File, spec: str, site: Site | None) -> _File | None:
        """The file a specifier names from ``f``; records why not when a registered module is missing."""
        if spec.startswith("."):
            target = self._lookup(f.repo, posixpath.join(posixpath.dirname(f.path), spec))
            if target is None and site is not None:
                self.unresolved(f, site, "MODULE_NOT_RESOLVED", spec, f"no file for {spec!r}")
            return target
        name, sub = split_specifier(spec)
        providers = self.providers.get(name, [])
        if not providers:
            return None
        if len(providers) > 1:
            if site is not None:
                self.unresolved(
                    f,
                    site,
                    "AMBIGUOUS_PACKAGE_PROVIDER",
                    name,
                    "provided by " + ", ".join(sorted(r for r, _ in providers)),
                )
            return None
        repo, directory = providers[0]
        stems = [sub] if sub else entry_points(manifest(self.roots[repo], directory))
        for stem in stems:
            for variant in (stem, stem.replace("dist/", "src/").replace("lib/", "src/").removesuffix(".d.ts")):
                target = self._lookup(repo, posixpath.join(directory, variant) if directory else variant)
                if target is not None:
                    if repo != f.repo:
                        self.out.package_dependencies.append(
                            PackageDependencyFact(f.repo, f.facts.package, repo, name, f.path, site.line if site else 0)
                        )
                    return target
        if site is not None:
            self.unresolved(f, site, "MODULE_NOT_RESOLVED", name, f"{spec!r} names no file of {repo}")
        return None

    def export(
        self, f: _File, name: str, depth: int = 0, seen: frozenset[tuple[str, str, str]] = frozenset()
    ) -> Target | None:
        """The declaration ``f`` exports as ``name`` (``*`` = the module itself), following barrels."""
        key = (f.repo, f.path, name)
        if depth > _MAX_DEPTH or key in seen:
            return None
        seen = seen | {key}
        if name == "*":
            return (f.repo, f.path, f.module, "module")
        for site in f.exports.get(name, ()):
            if site.kind == S.EXPORT:
                found = self.binding(f, site.extra[0], depth + 1, seen)
            else:
                target = self.module(f, site.extra[0], None)
                found = self.export(target, site.extra[1], depth + 1, seen) if target is not None else None
            if found is not None:
                return found
        if name != "default":
            for s in f.facts.symbols:
                if s.container == "" and s.exported and s.name == name and s.kind != "module":
                    return (f.repo, f.path, s.qualified_name, s.kind)
            for star in f.stars:
                target = self.module(f, star.extra[0], None)
                found = self.export(target, name, depth + 1, seen) if target is not None else None
                if found is not None:
                    return found
        return None

    def binding(
        self, f: _File, name: str, depth: int = 0, seen: frozenset[tuple[str, str, str]] = frozenset(), scope: str = ""
    ) -> Target | None:
        """What ``name`` is bound to in ``f`` at ``scope``: a nested or top-level declaration, or an import."""
        parts = scope.split(".") if scope else []
        module_parts = len(f.module.split("."))
        while len(parts) > module_parts:
            prefix = ".".join(parts)
            if f.qns.get(prefix) not in ("class", "interface"):
                kind = f.qns.get(f"{prefix}.{name}")
                if kind is not None:
                    return (f.repo, f.path, f"{prefix}.{name}", kind)
            parts.pop()
        top = f.top.get(name)
        if top is not None:
            return (f.repo, f.path, *top)
        site = f.imports.get(name)
        if site is not None:
            target = self.module(f, site.extra[0], None)
            return self.export(target, site.name, depth + 1, seen) if target is not None else None
        return None

    # -- members -----------------------------------------------------------------------------------

    def member(self, owner: Target, name: str, depth: int = 0) -> Target | None:
        """``name`` declared in ``owner`` or inherited from its bases; ``depth`` bounds base chains that loop
        (``interface A extends A.Doc`` inside a namespace A reaches A again)."""
        repo, path, qn, kind = owner
        f = self.file(repo, path)
        if f is None or depth > _MAX_DEPTH:
            return None
        if kind == "module":
            return self.export(f, name)
        found = f.qns.get(f"{qn}.{name}")
        if found is not None:
            return (repo, path, f"{qn}.{name}", found)
        for base in f.bases.get(qn, ()):
            b = self.chain(f, base.extra[0], base.enclosing or f.module, depth + 1)
            if b is not None:
                m = self.member(b, name, depth + 1)
                if m is not None:
                    return m
        return None

    def _complete(self, owner: Target) -> bool:
        """Whether every base of a class resolved (only then is a missing member really missing)."""
        f = self.file(owner[0], owner[1])
        if f is None:
            return False
        return all(self.chain(f, b.extra[0], b.enclosing or f.module) is not None for b in f.bases.get(owner[2], ()))

    def chain(self, f: _File, chain: str, scope: str, depth: int = 0) -> Target | None:
        head, *rest = chain.split(".")
        if head in ("this", "?", "super") or not head or depth > _MAX_DEPTH:
            return None
        cur = self.binding(f, head, scope=scope)
        for seg in rest:
            if cur is None or cur[3] not in _TYPES | {"module"}:
                return None
            cur = self.member(cur, seg, depth)
        return cur

    def _enclosing_class(self, f: _File, scope: str) -> Target | None:
        parts = scope.split(".")
        while parts:
            qn = ".".join(parts)
            if f.qns.get(qn) == "class":
                return (f.repo, f.path, qn, "class")
            parts.pop()
        return None

    # -- sites -------------------------------------------------------------------------------------

    def unresolved(self, f: _File, site: Site, reason: str, package: str, detail: str) -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=site.extra[-1] if site.kind in S.CHAIN_KINDS else site.name,
                reason=reason,
                repository=f.repo,
                path=f.path,
                line=site.line,
                col=site.col,
                language=language_of(f.path),
                source=self.corpus.key_of(f.repo, f.path, site.enclosing or f.module, self._source_kind(f, site)) or "",
                package=package,
                detail=detail,
            )
        )

    def _source_kind(self, f: _File, site: Site) -> str:
        return f.qns.get(site.enclosing, "module") if site.enclosing else "module"

    def edge(self, f: _File, site: Site, kind: EdgeKind, target: Target) -> None:
        source = self.corpus.key_of(f.repo, f.path, site.enclosing or f.module, self._source_kind(f, site))
        dest = self.corpus.key_of(*target)
        if source is None or dest is None:
            return
        self.out.edges.append(EdgeFact(int(kind), source, dest, _CANDIDATE, _SYNTAX, site.line, site.col))

    def site(self, f: _File, site: Site) -> None:
        k = site.kind
        scope = site.enclosing or f.module
        if k == S.IMPORT:
            target_file = self.module(f, site.extra[0], site)
            if target_file is None:
                return
            found = self.export(target_file, site.name)
            if found is None:
                if not target_file.stars or all(self.module(target_file, s.extra[0], None) for s in target_file.stars):
                    self.unresolved(
                        f, site, "EXPORT_NOT_FOUND", site.extra[0], f"{target_file.path} exports no {site.name!r}"
                    )
                return
            self.edge(f, site, EdgeKind.IMPORTS_SYMBOL, found)
            return
        if k == S.REEXPORT:
            target_file = self.module(f, site.extra[0], site)
            found = self.export(target_file, site.extra[1]) if target_file is not None else None
            if found is not None:
                self.edge(f, site, EdgeKind.REEXPORTS, found)
            elif target_file is not None:
                self.unresolved(
                    f, site, "EXPORT_NOT_FOUND", site.extra[0], f"{target_file.path} exports no {site.extra[1]!r}"
                )
            return
        if k == S.EXPORT:
            found = self.binding(f, site.extra[0])
            if found is not None:
                self.edge(f, site, EdgeKind.EXPORTS, found)
            return
        chain = site.extra[0]
        head, *rest = chain.split(".")
        if head == "this" and rest:
            cls = self._enclosing_class(f, scope)
            target = self.member(cls, rest[0]) if cls is not None and len(rest) == 1 else None
            if target is None and cls is not None and len(rest) == 1 and k == S.CALL and self._complete(cls):
                self.unresolved(f, site, "MEMBER_NOT_RESOLVED", f.facts.package, f"{cls[2]} declares no {rest[0]!r}")
        else:
            target = self.chain(f, chain, scope)
            if target is None and k in (S.CALL, S.NEW) and head not in GLOBALS and head not in ("?", "super"):
                self._explain(f, site, head, rest, scope)
        if target is None:
            return
        tk = target[3]
        if k in (S.CALL, S.NEW):
            kind = EdgeKind.CALLS_DIRECT if tk in _CALLABLE or tk == "class" else EdgeKind.REFERENCES
        elif k == S.ARG:
            kind = EdgeKind.PASSES_AS_CALLBACK if tk in _CALLABLE else EdgeKind.REFERENCES
        elif k == S.TYPE:
            kind = EdgeKind.TYPE_USES
        elif k == S.EXTENDS:
            kind = EdgeKind.EXTENDS
        else:
            kind = EdgeKind.IMPLEMENTS
        self.edge(f, site, kind, target)

    def _explain(self, f: _File, site: Site, head: str, rest: list[str], scope: str) -> None:
        bound = self.binding(f, head, scope=scope)
        if bound is None:
            if head in f.imports:
                return  # the import itself carries the reason (or names an unregistered package)
            if not rest:
                self.unresolved(f, site, "NAME_NOT_RESOLVED", f.facts.package, f"{head!r} is bound nowhere in the file")
            else:
                self.unresolved(
                    f, site, "RECEIVER_NOT_RESOLVED", f.facts.package, f"the value of {head!r} is unknown to syntax"
                )
        elif rest and bound[3] in ("class", "enum", "namespace", "interface", "module"):
            self.unresolved(f, site, "MEMBER_NOT_RESOLVED", f.facts.package, f"{bound[2]} has no {'.'.join(rest)!r}")
        elif rest:
            self.unresolved(
                f,
                site,
                "RECEIVER_NOT_RESOLVED",
                f.facts.package,
                f"{bound[2]} is a {bound[3]}: its value is unknown to syntax",
            )


def resolve(corpus: Corpus) -> Resolution:
    """Bind every site of the corpus to declarations, CANDIDATE at best."""
    r = _Resolver(corpus)
    for repo in corpus.repositories:
        for ff in repo.files:
            f = r.files[(repo.name, ff.path)]
            r.out.guarded(repo.name, ff, corpus.language, lambda f=f, ff=ff: [r.site(f, s) for s in ff.sites])
            _implicit_calls(r.out, corpus, repo.name, ff)
    return r.out


# Members the language calls without naming them: what calls each, for the blind spot's text.
_IMPLICIT_BY = {
    "toString": "string conversion (`${x}`, 'a' + x, String(x))",
    "valueOf": "arithmetic, comparisons and other conversions to a primitive",
    "toJSON": "JSON.stringify",
    "toLocaleString": "the Intl formatting of arrays and dates",
    "then": "await and Promise resolution (a thenable)",
    "[Symbol.iterator]": "for..of, spread, destructuring and Array.from",
    "[Symbol.asyncIterator]": "for await..of",
    "[Symbol.toPrimitive]": "every conversion to a primitive",
    "[Symbol.hasInstance]": "instanceof",
    "[Symbol.dispose]": "a using declaration",
    "[Symbol.asyncDispose]": "an await using declaration",
    "constructor": "new C(...) (find_references on the class lists the constructions)",
}


def _implicit_calls(out: Resolution, corpus: Corpus, repo: str, ff: FileFacts) -> None:
    """An ``IMPLICIT_CALL`` row on each member the language calls without naming it (``toString`` for string
    conversion, ``[Symbol.iterator]`` for ``for..of``, ``then`` for ``await``): no analyzer records those calls
    as uses of the member, so its callers are never all in the graph (docs/surface.md §4.8)."""
    if not ff.parsed:
        return
    for d in ff.symbols:
        if d.kind not in ("method", "property", "constructor") or not d.container:
            continue
        by = _IMPLICIT_BY.get(d.name) or (
            "the language's protocols for that well-known symbol" if d.name.startswith("[Symbol.") else ""
        )
        if not by:
            continue
        source = corpus.key_of(repo, ff.path, d.qualified_name, d.kind)
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
                language=language_of(ff.path),
                source=source,
                package=ff.package,
                detail=f"JavaScript calls {d.name} through {by}; the analyzer records no such call as a use of it",
            )
        )
