"""A consumer's uses of a registered provider through its published build, mapped to the provider's source.

When ``node_modules/<name>`` holds a provider's published build (bundled and
chunked ``.d.ts`` files such as ``build/modern/hydration-DHZNyHqg.d.ts``, no
declaration maps) and one registered repository's ``package.json`` carries
``<name>``, the checker resolves the consumer's uses to declarations in that
build. This module takes each such declaration (a file of the installed
package and a member path inside it, as the SCIP symbol names it) to the
provider's source declaration:

1. the public name: the installed package's entries (``exports`` subpaths and
   their conditions, ``types``/``typings``/``main``/``module``) are followed
   through the build's own export statements (``export { b as QueryClient }
   from './hydration-DHZNyHqg.js'``, ``export { QueryClient as b }``, stars)
   to the (subpath, exported name) pairs under which the declaration is
   public;
2. the source entry: the provider's own ``package.json`` names the same
   subpath's build file; a build file maps to the source file at the same
   place under the source root (the output directory as
   ``indexer.languages.typescript.outputs`` finds it, against the tsconfig's
   ``rootDir`` or ``src/``); a source named directly is taken as it is;
3. the exported name is followed through the provider's source exports
   (re-exports, ``export *`` barrels) to its declaration, and the member
   path (``QueryClient.getQueryCache``) is looked up inside it.

A declaration no entry exports (``Subscribable``, inherited by public classes)
maps through its own file instead when that file is a per-file build output:
``build/modern/subscribable.d.ts`` is ``src/subscribable.ts``, and the name
must be declared there.

Anything that does not map to exactly one source declaration is a
``NotMapped`` with a reason, never a guess:

    PACKAGE_EXPORT_NOT_MAPPED   no entry exports the declaration and its file mirrors no source file declaring it
    DECLARATION_SOURCE_NOT_MAPPED no installed copy holds the declaration file, and it mirrors no source either
    AMBIGUOUS_PACKAGE_EXPORT    the public names lead to more than one source declaration
    PROVIDER_SOURCE_UNAVAILABLE the provider's source does not export the name, or does not declare the member
    RESOLVER_FAILED             this module failed on the use (the use is lost, never the index)
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from indexer.discover import discover
from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages.registry import is_test_path
from indexer.languages.typescript import sites as S
from indexer.languages.typescript.extract import extract
from indexer.languages.typescript.modules import EXTENSIONS, LANGUAGE, module_name, package_for
from indexer.languages.typescript.outputs import (
    DECLARATION_SUFFIXES,
    BuildOutputs,
    is_declaration,
    leaves,
    read_jsonc,
    relative_stems,
    under,
)

Binding = tuple[str, str]  # (file, top-level name); "" = the module itself
_AMBIGUOUS: Binding = ("", "\0ambiguous")  # two ``export *`` give the name: TypeScript exports neither
_MAX_DEPTH = 64
_EXPORT_KEYWORD = re.compile(rb"\bexport\b")
# A relative specifier's file, in TypeScript's order: ``./x.js`` names x.ts or x.d.ts, and so on.
_JS_TO_TS = (
    (".js", (".ts", ".tsx", ".d.ts", ".js")),
    (".mjs", (".mts", ".d.mts", ".mjs")),
    (".cjs", (".cts", ".d.cts", ".cjs")),
    (".jsx", (".tsx", ".jsx")),
)
_PROBE = (".ts", ".tsx", ".d.ts", ".mts", ".d.mts", ".cts", ".d.cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATION_OF = (
    (".d.ts", ".d.ts"),
    (".d.mts", ".d.mts"),
    (".d.cts", ".d.cts"),
    (".mjs", ".d.mts"),
    (".cjs", ".d.cts"),
    (".js", ".d.ts"),
    (".jsx", ".d.ts"),
)
_ENTRY_FIELDS = ("types", "typings", "main", "module")
# scip-typescript's name for `{ kind: string }` (its number dropped: analyzer.canonical_symbol)
_TYPE_LITERAL = re.compile(r"(^|\.)typeLiteral\d*(\.|$)")
_RENAMED = re.compile(r"\$\d+$")  # rollup's suffix for a second declaration of one name in a chunk


@dataclass(frozen=True)
class Mapped:
    """The provider's source declaration a published declaration maps to."""

    path: str  # repository-relative, in the provider
    declaration: SymbolFact
    how: str  # "export <subpath> <name>" or "mirror <build file>"


@dataclass(frozen=True)
class NotMapped:
    reason: str
    detail: str
    # The source declarations it could be, as (repository-relative path, qualified name): the unresolved row is
    # recorded against each, so that a question about any of them knows this use may be one of its own.
    candidates: tuple[tuple[str, str], ...] = ()


# -- export graphs ----------------------------------------------------------------------------------


def resolve_relative(from_path: str, spec: str, exists: Callable[[str], bool]) -> str | None:
    """The file a relative specifier names from ``from_path`` (same path namespace), or None."""
    if not spec.startswith("."):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), spec))
    if base.startswith(".."):
        return None
    candidates: list[str] = []
    for js, tss in _JS_TO_TS:
        if base.endswith(js):
            candidates += [base[: -len(js)] + t for t in tss]
    if base.endswith(EXTENSIONS) or base.endswith(DECLARATION_SUFFIXES):
        candidates.append(base)
    candidates += [base + e for e in _PROBE] + [f"{base}/index{e}" for e in _PROBE]
    return next((c for c in candidates if exists(c)), None)


@dataclass
class ExportGraph:
    """What each file of one tree exports, by the extractor's export sites: name -> declaring (file, name).

    ``load`` gives a file's facts and bytes (None when it is not in the tree). A file's exports are its
    declarations carrying the ``export`` keyword, its ``export {a as b}`` clauses (bound in the file or
    through its imports), its re-exports, and its ``export *`` stars (a name two stars give is ambiguous
    and exported by neither, as TypeScript does; ``default`` never comes through a star).
    """

    load: Callable[[str], tuple[FileFacts, bytes] | None]
    exists: Callable[[str], bool]
    _memo: dict[str, dict[str, Binding]] = field(default_factory=dict)
    _active: set[str] = field(default_factory=set)

    def exports(self, path: str, depth: int = 0) -> dict[str, Binding]:
        if path in self._memo:
            return self._memo[path]
        if path in self._active or depth > _MAX_DEPTH:
            return {}  # a cycle adds nothing the first visit does not
        loaded = self.load(path)
        if loaded is None:
            return {}
        self._active.add(path)
        try:
            out = self._exports(path, *loaded, depth)
        finally:
            self._active.discard(path)
        self._memo[path] = out
        return out

    def _exports(self, path: str, ff: FileFacts, source: bytes, depth: int) -> dict[str, Binding]:
        out: dict[str, Binding] = {}
        top = {s.name for s in ff.symbols if s.container == "" and s.kind != "module"}
        lines = source.split(b"\n")
        for s in ff.symbols:
            if s.container or s.kind == "module" or not s.exported or s.name in out:
                continue
            prefix = lines[s.start_line - 1][: s.start_col] if s.start_line - 1 < len(lines) else b""
            if _EXPORT_KEYWORD.search(prefix):  # ``export class X``, not only named by an export clause
                out[s.name] = (path, s.name)
        imports = {site.extra[1]: site for site in ff.sites if site.kind == S.IMPORT}
        stars: list[str] = []
        for site in ff.sites:
            if site.kind == S.EXPORT:
                local = site.extra[0]
                found = (path, local) if local in top else self._imported(path, imports.get(local), depth)
                if found is not None:
                    out.setdefault(site.name, found)
            elif site.kind == S.REEXPORT:
                target = resolve_relative(path, site.extra[0], self.exists)
                if target is None:
                    continue
                if site.name == "*":
                    stars.append(target)
                elif site.extra[1] == "*":
                    out.setdefault(site.name, (target, ""))
                else:
                    found = self.exports(target, depth + 1).get(site.extra[1])
                    if found is not None:
                        out.setdefault(site.name, found)
        starred: dict[str, Binding] = {}
        for target in stars:
            for name, binding in self.exports(target, depth + 1).items():
                if name == "default" or name in out:
                    continue
                prior = starred.get(name)
                starred[name] = binding if prior is None or prior == binding else _AMBIGUOUS
        out.update(starred)
        return out

    def _imported(self, path: str, site: Site | None, depth: int) -> Binding | None:
        if site is None:
            return None
        target = resolve_relative(path, site.extra[0], self.exists)
        if target is None:
            return None
        if site.name == "*":
            return (target, "")
        return self.exports(target, depth + 1).get(site.name)


# -- package.json entries ---------------------------------------------------------------------------


def entry_targets(data: dict[str, object]) -> dict[str, list[str]]:
    """Subpath (``"."``, ``"./ajax"``, ``"./internal/*"``) -> the files its conditions name (``./`` dropped)."""
    out: dict[str, list[str]] = {}
    exports = data.get("exports")
    if isinstance(exports, dict) and any(isinstance(k, str) and k.startswith(".") for k in exports):
        for key, value in exports.items():
            if isinstance(key, str) and key.startswith("."):
                out[key] = [t.removeprefix("./") for t in leaves(value)]
    elif exports is not None:
        out["."] = [t.removeprefix("./") for t in leaves(exports)]
    legacy = [v.removeprefix("./") for f in _ENTRY_FIELDS if isinstance(v := data.get(f), str) and v]
    out["."] = [*out.get(".", []), *legacy]
    return out


def declaration_of(target: str) -> list[str]:
    """The declaration files a build target stands for (``x.js`` -> ``x.d.ts``; extension-less -> both forms)."""
    for ext, decl in _DECLARATION_OF:
        if target.endswith(ext):
            return [target[: -len(ext)] + decl]
    return [target + ".d.ts", f"{target}/index.d.ts"] if target else ["index.d.ts"]


def _pattern(target: str) -> re.Pattern[str]:
    head, _, tail = target.partition("*")
    return re.compile(re.escape(head) + "(.+)" + re.escape(tail) + r"\Z")


class InstalledPackage:
    """A package as installed (files relative to its ``package.json``): under which public names each of its
    declarations is exported."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._files: dict[str, tuple[FileFacts, bytes] | None] = {}
        self.graph = ExportGraph(self._load, self._exists)
        data = read_jsonc(directory / "package.json") or {}
        self.entries = entry_targets(data)
        self._public: dict[Binding, list[tuple[str, str]]] | None = None
        self._names: dict[Binding, list[tuple[str, str]]] = {}

    def _exists(self, rel: str) -> bool:
        return (self.directory / rel).is_file()

    def _load(self, rel: str) -> tuple[FileFacts, bytes] | None:
        if rel not in self._files:
            self._files[rel] = None
            if rel.endswith(DECLARATION_SUFFIXES) or rel.endswith(EXTENSIONS):
                try:
                    data = (self.directory / rel).read_bytes()
                except OSError:
                    return None
                self._files[rel] = (extract(rel, data, package_for(rel, frozenset())), data)
        return self._files[rel]

    def kinds(self, file: str, name: str) -> frozenset[str]:
        """The kinds ``name`` is declared with at the top of ``file`` (a class and an interface may merge)."""
        loaded = self._load(file)
        symbols = loaded[0].symbols if loaded is not None else ()
        return frozenset(s.kind for s in symbols if s.name == name and not s.container and s.kind != "module")

    def twins(self, file: str, name: str) -> set[str]:
        """The top-level names of ``file`` that are ``name`` or the bundler's renaming of it (``name$1``)."""
        loaded = self._load(file)
        symbols = loaded[0].symbols if loaded is not None else ()
        return {
            s.name for s in symbols if not s.container and s.kind != "module" and _original_names(s.name)[-1] == name
        }

    def entry_files(self) -> Iterator[tuple[str, str]]:
        """(subpath, declaration file) of every entry that is no pattern and exists."""
        for subpath, targets in self.entries.items():
            if "*" in subpath:
                continue
            seen: set[str] = set()
            for t in targets:
                for decl in declaration_of(posixpath.normpath(t)):
                    if decl not in seen and self._exists(decl):
                        seen.add(decl)
                        yield subpath, decl

    def public_names(self, file: str, top: str) -> list[tuple[str, str]]:
        """(subpath, exported name) under which ``top`` declared in ``file`` is public (``""``: the module)."""
        if (file, top) not in self._names:
            self._names[(file, top)] = self._public_names(file, top)
        return self._names[(file, top)]

    def _public_names(self, file: str, top: str) -> list[tuple[str, str]]:
        if self._public is None:
            self._public = {}
            for subpath, entry in self.entry_files():
                self._public.setdefault((entry, ""), []).append((subpath, ""))
                for name, binding in self.graph.exports(entry).items():
                    if binding != _AMBIGUOUS:
                        self._public.setdefault(binding, []).append((subpath, name))
        found = list(dict.fromkeys(self._public.get((file, top), [])))
        for subpath, targets in self.entries.items():  # "./internal/*": the file is its own entry
            if "*" not in subpath or subpath.count("*") != 1:
                continue
            for t in targets:
                for decl in declaration_of(t) if not t.endswith("*") else [t]:
                    if decl.count("*") != 1:
                        continue
                    m = _pattern(decl).match(file)
                    if m is None:
                        continue
                    sub = subpath.replace("*", m.group(1))
                    if not top:
                        found.append((sub, ""))
                    found += [(sub, n) for n, b in self.graph.exports(file).items() if b == (file, top)]
        return list(dict.fromkeys(found))


def _compatible(kinds: frozenset[str]) -> frozenset[str]:
    """The source kinds a declaration-file kind may stand for: ``declare const f: () => void`` is written
    ``export const f = () => ...``, a function to the extractor."""
    return kinds | {"function"} if "variable" in kinds else kinds


def _original_names(name: str) -> list[str]:
    """A declaration's name in a chunk, then its name in the source when the bundler renamed it to keep two
    apart (``Action$1``)."""
    original = _RENAMED.sub("", name)
    return [name, original] if original and original != name else [name]


# -- the provider's source side -----------------------------------------------------------------------


class ProviderSource:
    """A registered provider's source: its entries mapped from build files to sources, and its export graph."""

    def __init__(self, repository: str, root: str, directory: str, files: Callable[[str], FileFacts | None]) -> None:
        self.repository = repository
        self.root = Path(root)
        self.directory = directory
        self._files = files
        self._disk: dict[str, FileFacts | None] = {}
        self.graph = ExportGraph(self._load, self._exists)
        self.manifest = read_jsonc(self.root / directory / "package.json") or {}
        self._outputs: BuildOutputs | None = None
        self._by_name: dict[str, dict[tuple[str, str], SymbolFact]] | None = None
        self._entries: dict[str, list[str]] = {}

    def _path(self, rel: str) -> str:
        return posixpath.normpath(posixpath.join(self.directory, rel)) if self.directory else posixpath.normpath(rel)

    def facts(self, path: str) -> FileFacts | None:
        """Facts of a provider file: the corpus's, or (the other language) extracted from disk."""
        found = self._files(path)
        if found is not None:
            return found
        if path not in self._disk:
            self._disk[path] = None
            full = self.root / path
            if path.endswith(EXTENSIONS) and not is_declaration(path) and not self.in_output(path) and full.is_file():
                self._disk[path] = extract(path, full.read_bytes(), package_for(path, frozenset()))
        return self._disk[path]

    def _exists(self, path: str) -> bool:
        return self.facts(path) is not None

    def _load(self, path: str) -> tuple[FileFacts, bytes] | None:
        ff = self.facts(path)
        if ff is None:
            return None
        try:
            return ff, (self.root / path).read_bytes()
        except OSError:
            return None

    @property
    def outputs(self) -> BuildOutputs:
        """The provider's build outputs, as indexing found them (its sources are what they are not)."""
        if self._outputs is None:
            found = discover(self.root, dict.fromkeys(EXTENSIONS, "typescript"))
            self._outputs = BuildOutputs(self.root, [c.path for c in found.files if not c.skip_reason])
        return self._outputs

    def in_output(self, path: str) -> bool:
        """Whether a repository-relative path is a build output (a built ``.js`` is no source)."""
        return bool(self.outputs.reason(path))

    def mirror(self, build_file: str) -> list[str]:
        """The provider's source files a build file (repository-relative) is the output of: the file its path
        mirrors, else the same place under the source root, a bundler chunk's hash dropped
        (``build/modern/subscribable-D2lAzdDi.d.ts`` is ``src/subscribable.ts``)."""
        strong = self.outputs.mirror(build_file)
        if strong is not None and self.facts(strong[0]) is not None:
            return [strong[0]]
        for o in self.outputs.directories:  # longest first within each kind of evidence
            if not under(build_file, o.path):
                continue
            for rel in relative_stems(build_file[len(o.path) + 1 :], formats=False):
                base = f"{o.sources}/{rel}" if o.sources else rel
                found = [c for c in (base + e for e in EXTENSIONS) if self.facts(c) is not None]
                if found:
                    return found
        return []

    def declared(self, name: str, kinds: frozenset[str]) -> list[tuple[str, SymbolFact]]:
        """Every top-level declaration of ``name`` with one of ``kinds`` in the provider's sources (its package's
        directory, tests and build outputs left out): (path, declaration), one per qualified name."""
        if self._by_name is None:
            self._by_name = {}
            for path in self.outputs.sources:
                if not under(path, self.directory) or is_test_path(LANGUAGE, path):
                    continue
                ff = self.facts(path)
                for s in ff.symbols if ff is not None else ():
                    if not s.container and s.kind != "module":
                        self._by_name.setdefault(s.name, {}).setdefault((path, s.qualified_name), s)
        found = self._by_name.get(name, {})
        return [(path, s) for (path, _qn), s in sorted(found.items()) if s.kind in kinds]

    def entry(self, subpath: str) -> list[str]:
        """The source files of a public subpath: a source its targets name directly, else their mirror."""
        if subpath not in self._entries:
            self._entries[subpath] = self._entry(subpath)
        return self._entries[subpath]

    def _entry(self, subpath: str) -> list[str]:
        targets = entry_targets(self.manifest)
        names = targets.get(subpath)
        if names is None:  # a subpath a pattern of ours provides ("./internal/*")
            for key, values in targets.items():
                if key.count("*") == 1:
                    m = _pattern(key).match(subpath)
                    if m is not None:
                        names = [v.replace("*", m.group(1)) for v in values]
                        break
        if subpath == "." and isinstance(self.manifest.get("source"), str):
            names = [str(self.manifest["source"]).removeprefix("./"), *(names or [])]
        found: list[str] = []
        for t in names or []:
            path = self._path(t)
            if (
                path.endswith(EXTENSIONS)
                and not is_declaration(path)
                and self.facts(path) is not None
                and not self.in_output(path)
            ):
                found.append(path)
                continue
            for decl in declaration_of(path):
                found += self.mirror(decl)
            found += self.mirror(path)
        return list(dict.fromkeys(found))

    def declaration(self, path: str, qualified_name: str, kinds: frozenset[str] | None = None) -> SymbolFact | None:
        """The declaration of ``qualified_name`` in a provider file (of one of ``kinds``, when they are given)."""
        ff = self.facts(path)
        symbols = ff.symbols if ff is not None else ()
        return next((s for s in symbols if s.qualified_name == qualified_name and (not kinds or s.kind in kinds)), None)


# -- mapping one use --------------------------------------------------------------------------------


def _declared_once(
    source: ProviderSource,
    installed: InstalledPackage,
    package: str,
    file: str,
    top: str,
    rest: str,
    kinds: frozenset[str],
) -> tuple[str, SymbolFact] | NotMapped | None:
    """The one source declaration a chunk's ``top`` stands for, by its name (the bundler's ``$1`` dropped) and
    kind; None when no source declares it. Several sources declaring it, or the chunk declaring the name twice
    (``Action`` and ``Action$1``: which one is the source's cannot be told), is ambiguous, never a pick."""
    names = _original_names(top)
    declared = next((found for name in names if (found := source.declared(name, kinds))), [])
    twins = installed.twins(file, names[-1])
    if not declared or (len(declared) == 1 and len(twins) <= 1):
        return declared[0] if declared else None
    why = (
        f"{len(declared)} sources of {source.repository} declare it"
        if len(declared) > 1
        else (f"the file declares {', '.join(sorted(twins))} and one source of {source.repository} declares it")
    )
    return NotMapped(
        "AMBIGUOUS_PACKAGE_DECLARATION",
        f"{package} {file} declares {top} ({'/'.join(sorted(installed.kinds(file, top)))}), exported by no entry "
        f"of the package, in a file that mirrors no source declaring it; {why}: "
        + ", ".join(f"{p} {d.qualified_name}" for p, d in declared),
        tuple((p, f"{d.qualified_name}.{rest}" if rest else d.qualified_name) for p, d in declared),
    )


class PublishedBuilds:
    """Maps declarations in registered providers' published builds to their source declarations."""

    def __init__(self, roots: dict[str, str], files: Callable[[str, str], FileFacts | None]) -> None:
        self._roots = roots  # repository -> root
        self._files = files  # (repository, path) -> the corpus's facts
        self._installed: dict[Path, InstalledPackage] = {}
        self._providers: dict[tuple[str, str], ProviderSource] = {}
        self._where: dict[tuple[str, ...], InstalledPackage | None] = {}

    def installed(
        self, consumer: str, consumer_path: str, package: str, file: str, provider: tuple[str, str]
    ) -> InstalledPackage | None:
        """The installed copy holding ``file``: ``node_modules/<package>`` from the consumer file's directory
        up to its repository root, else the provider's own tree (a workspace link)."""
        key = (consumer, posixpath.dirname(consumer_path), package, file, *provider)
        if key not in self._where:
            self._where[key] = self._installed_copy(consumer, consumer_path, package, file, provider)
        return self._where[key]

    def _installed_copy(
        self, consumer: str, consumer_path: str, package: str, file: str, provider: tuple[str, str]
    ) -> InstalledPackage | None:
        root = Path(self._roots[consumer])
        parent = posixpath.dirname(consumer_path)
        dirs: list[Path] = []
        while True:
            dirs.append(root / parent / "node_modules" / package if parent else root / "node_modules" / package)
            if not parent:
                break
            parent = posixpath.dirname(parent)
        dirs.append(Path(self._roots[provider[0]], provider[1]))
        for d in dirs:
            if (d / file).is_file() and (d / "package.json").is_file():
                if d not in self._installed:
                    self._installed[d] = InstalledPackage(d)
                return self._installed[d]
        return None

    def provider(self, repository: str, directory: str) -> ProviderSource:
        key = (repository, directory)
        if key not in self._providers:
            self._providers[key] = ProviderSource(
                repository, self._roots[repository], directory, lambda p, r=repository: self._files(r, p)
            )
        return self._providers[key]

    def map(
        self,
        consumer: str,
        consumer_path: str,
        package: str,
        file: str,
        member: str,
        use: str,
        provider: tuple[str, str],
    ) -> Mapped | NotMapped:
        """The source declaration of ``member`` (``""``: the module) declared in ``file`` of the package.

        A failure of this code (a file that vanished, a tree too deep) costs the use, never the index.
        """
        try:
            return self._map(consumer, consumer_path, package, file, member, use, provider)
        except (OSError, RecursionError, LookupError, ValueError, TypeError, AttributeError) as exc:
            return NotMapped(
                "RESOLVER_FAILED",
                f"mapping {package} {file} {member or '(module)'} to "
                f"{provider[0]}'s source failed: {type(exc).__name__}: {str(exc)[:200]}",
            )

    def _map(
        self,
        consumer: str,
        consumer_path: str,
        package: str,
        file: str,
        member: str,
        use: str,
        provider: tuple[str, str],
    ) -> Mapped | NotMapped:
        source = self.provider(*provider)
        installed = self.installed(consumer, consumer_path, package, file, provider)
        top, _, rest = member.partition(".")
        if use == "call" and rest.rsplit(".", 1)[-1] == "constructor":
            rest = rest.rpartition(".")[0]  # ``new C()`` names the class, as everywhere else
        targets: dict[tuple[str, str], str] = {}  # (path, top-level qualified name) -> how
        names = installed.public_names(file, top) if installed is not None else []
        missing: list[str] = []
        for subpath, name in names:
            entries = source.entry(subpath)
            if not entries:
                missing.append(f"no source entry for {package}{subpath[1:]}")
            for entry in entries:
                binding = (entry, "") if not name else source.graph.exports(entry).get(name)
                if binding is None or binding == _AMBIGUOUS:
                    missing.append(f"{entry} exports no {name!r}")
                    continue
                path, local = binding
                targets[(path, module_name(path) + (f".{local}" if local else ""))] = f"export {subpath} {name}"
        kinds = _compatible(installed.kinds(file, top)) if installed is not None and top else None
        if not names:
            for path in source.mirror(source._path(file)):
                qn = module_name(path) + (f".{top}" if top else "")
                if source.declaration(path, qn, kinds) is not None:
                    targets[(path, qn)] = f"mirror {file}"
        if not names and not targets and kinds and installed is not None:  # a shared chunk: by name and kind
            found = _declared_once(source, installed, package, file, top, rest, kinds)
            if isinstance(found, NotMapped):
                return found
            if found is not None:
                targets[(found[0], found[1].qualified_name)] = f"declared once {file}"
        if len(targets) > 1:
            shown = ", ".join(f"{p} {qn}" for p, qn in sorted(targets))
            return NotMapped(
                "AMBIGUOUS_PACKAGE_EXPORT",
                f"{package} {file} {member or '(module)'} maps to {shown}",
                tuple((p, f"{qn}.{rest}" if rest else qn) for p, qn in sorted(targets)),
            )
        if not targets:
            if names:
                return NotMapped(
                    "PROVIDER_SOURCE_UNAVAILABLE",
                    f"{package} exports {top} as "
                    + ", ".join(f"{s} {n}" for s, n in names)
                    + ": "
                    + "; ".join(missing),
                )
            if installed is None:  # the declaration file itself cannot be read: nothing to follow
                return NotMapped(
                    "DECLARATION_SOURCE_NOT_MAPPED",
                    f"no installed copy of {package} holds {file}, "
                    f"and the file mirrors no source of {provider[0]} declaring {top or 'the module'}",
                )
            return NotMapped(
                "PACKAGE_EXPORT_NOT_MAPPED",
                f"{package} {file} declares {top or 'the module'}, "
                f"exported by no entry of the package, and the file mirrors no source of "
                f"{provider[0]} declaring it" + (", nor does any other source of it" if kinds else ""),
            )
        (((path, qn), how),) = targets.items()
        if rest:
            qn = f"{qn}.{rest}"
        decl = source.declaration(path, qn)
        if decl is None:
            why = (
                " (a member of an anonymous type literal, which declares nothing the graph keeps)"
                if _TYPE_LITERAL.search(rest)
                else ""
            )
            return NotMapped(
                "PROVIDER_SOURCE_UNAVAILABLE",
                f"{provider[0]} has no declaration {qn} in {path} ({package} {file} {member}){why}",
                ((path, qn),),
            )
        return Mapped(path, decl, how)
