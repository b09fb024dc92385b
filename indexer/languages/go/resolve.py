"""The Go CANDIDATE resolver: binds the extractor's sites on syntax alone.

What syntax can tell: a bare name is a package-level declaration of the same
package (any file of the directory) unless bound locally; ``pkg.Name`` goes
through the file's imports to a registered repository's package; ``x.M`` is
bound only when the syntax gives ``x`` a type (the receiver, a typed
parameter, ``var x T``, ``x := T{}``), looking through embedded fields for
promoted members. Everything else is an UNRESOLVED row with a reason. None of
this is proof: every edge is CANDIDATE / TREE_SITTER_SYNTAX, and the go/types
pass replaces it where it runs.

A file's package is its import path (``package_for_root``: module path of
the go.mod + directory), so packages are keyed by import path; an import path
is provided by the one registered repository whose module path is its longest
prefix. Standard-library imports (no dot in the
first path element) are nobody's and produce no rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus, Resolution
from indexer.facts import EdgeFact, FileFacts, PackageDependencyFact, Site, UnresolvedFact
from indexer.languages.go import sites as S
from indexer.languages.go.modules import LANGUAGE, module_qualified_name
from snapshot_format.vocab import Confidence, EdgeKind, Provenance

_CALLABLE = frozenset({"func", "method"})
_TYPES = frozenset({"type", "alias"})
_MAX_PROMOTION_DEPTH = 4


def read_module_path(root: str | Path) -> str:
    """The ``module`` line of a repository's root go.mod, or "" when there is none."""
    try:
        text = (Path(root) / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        parts = line.split("//", 1)[0].split()
        if len(parts) >= 2 and parts[0] == "module":
            return parts[1].strip('"`')
    return ""


def _owning_modules(root: Path, paths: Iterable[str]) -> set[str]:
    """Module paths of the go.mod files that govern ``paths`` (the nearest one at or under ``root``)."""
    owner: dict[Path, str] = {}
    found: set[str] = set()
    for path in paths:
        directory = (root / path).parent
        chain: list[Path] = []
        module = ""
        while True:
            if directory in owner:
                module = owner[directory]
                break
            chain.append(directory)
            module = read_module_path(directory)
            if module or directory == root or root not in directory.parents:
                break
            directory = directory.parent
        for d in chain:
            owner[d] = module
        if module:
            found.add(module)
    return found


def is_standard(import_path: str) -> bool:
    """Standard-library import paths have no dot in their first element."""
    return "." not in import_path.split("/", 1)[0]


def default_package_name(import_path: str) -> str:
    """The name an import binds without an alias: the last element, a ``/vN`` or ``.vN`` suffix dropped."""
    parts = import_path.split("/")
    last = parts[-1]
    if len(parts) > 1 and last[:1] == "v" and last[1:].isdigit():
        last = parts[-2]
    if ".v" in last and last.rsplit(".v", 1)[1].isdigit():
        last = last.rsplit(".v", 1)[0]
    return last.replace("-", "_")


@dataclass(frozen=True)
class Target:
    repository: str
    path: str
    qualified_name: str
    kind: str


@dataclass
class _Package:
    repository: str
    directory: str
    top: dict[str, Target] = field(default_factory=dict)  # package-level names
    members: dict[str, Target] = field(default_factory=dict)  # "T.M" / "T.f"
    embeds: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # T -> (repo, dir, E)


class ModuleRegistry:
    """Registered Go repositories by module path: who provides an import path."""

    def __init__(self, corpus: Corpus) -> None:
        self.module_of: dict[str, str] = {}  # repository -> the module path of its root go.mod
        self.providers: dict[str, list[str]] = {}  # module path -> repositories (nested modules included)
        for repo in corpus.repositories:
            if not repo.files:
                continue
            mod = read_module_path(repo.root)
            if mod:
                self.module_of[repo.name] = mod
            for module in sorted(_owning_modules(Path(repo.root), (ff.path for ff in repo.files))):
                self.providers.setdefault(module, []).append(repo.name)

    def import_path(self, repository: str, directory: str) -> str:
        """The import path of a package directory of a repository ("" without go.mod)."""
        mod = self.module_of.get(repository, "")
        if not mod:
            return ""
        return mod if directory in (".", "") else f"{mod}/{directory}"

    def provider(self, import_path: str) -> tuple[str, list[str], str]:
        """(module path, providing repositories, package directory) for an import path."""
        best = ""
        for mod in self.providers:
            if (import_path == mod or import_path.startswith(mod + "/")) and len(mod) > len(best):
                best = mod
        if not best:
            return "", [], ""
        rest = import_path[len(best) + 1 :] if import_path != best else "."
        return best, self.providers[best], rest


def resolve(corpus: Corpus) -> Resolution:
    """CANDIDATE edges and UNRESOLVED rows for every site of the corpus."""
    return _Resolver(corpus).run()


class _Resolver:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.registry = ModuleRegistry(corpus)
        self.packages: dict[tuple[str, str], _Package] = {}
        self.imports: dict[tuple[str, str], dict[str, str]] = {}  # (repo, path) -> name -> import path
        self.kinds: dict[tuple[str, str], dict[str, str]] = {}  # (repo, path) -> qn -> kind
        self.out = Resolution()

    def run(self) -> Resolution:
        for repo in self.corpus.repositories:
            for ff in repo.files:
                if ff.parsed:
                    self._index(repo.name, ff)
        for repo in self.corpus.repositories:
            for ff in repo.files:
                if ff.parsed:
                    self._embeds(repo.name, ff)
        for repo in self.corpus.repositories:
            for ff in repo.files:
                if ff.parsed:
                    self.out.guarded(
                        repo.name, ff, "go", lambda repo=repo, ff=ff: [self._site(repo.name, ff, s) for s in ff.sites]
                    )
        return self.out

    # -- tables -----------------------------------------------------------------------------------

    def _package(self, repo: str, directory: str) -> _Package:
        key = (repo, directory)
        if key not in self.packages:
            self.packages[key] = _Package(repo, directory)
        return self.packages[key]

    def _index(self, repo: str, ff: FileFacts) -> None:
        pkg = self._package(repo, ff.package)
        kinds: dict[str, str] = {}
        for s in ff.symbols:
            kinds.setdefault(s.qualified_name, s.kind)
            t = Target(repo, ff.path, s.qualified_name, s.kind)
            if s.kind == "module":
                continue
            if "." in s.qualified_name:
                pkg.members.setdefault(s.qualified_name, t)
            else:
                pkg.top.setdefault(s.qualified_name, t)
        self.kinds[(repo, ff.path)] = kinds
        names: dict[str, str] = {}
        for site in ff.sites:
            if site.kind == S.IMPORT:
                alias = site.extra[0] if site.extra else ""
                if alias not in ("_", "."):
                    names[alias or default_package_name(site.name)] = site.name
        self.imports[(repo, ff.path)] = names

    def _embeds(self, repo: str, ff: FileFacts) -> None:
        pkg = self._package(repo, ff.package)
        for site in ff.sites:
            if site.kind != S.EMBED or "." in site.enclosing:
                continue
            qualifier = site.extra[0] if site.extra else ""
            if not qualifier:
                pkg.embeds.setdefault(site.enclosing, []).append((repo, ff.package, site.name))
                continue
            ipath = self.imports[(repo, ff.path)].get(qualifier)
            if ipath is None:
                continue
            _, providers, _ = self.registry.provider(ipath)
            if len(providers) == 1:
                pkg.embeds.setdefault(site.enclosing, []).append((providers[0], ipath, site.name))

    def _member(self, repo: str, package: str, type_name: str, name: str, depth: int = 0) -> Target | None:
        """``T.name`` declared on T or promoted from an embedded type (breadth by declaration order)."""
        pkg = self.packages.get((repo, package))
        if pkg is None or depth > _MAX_PROMOTION_DEPTH:
            return None
        found = pkg.members.get(f"{type_name}.{name}")
        if found is not None:
            return found
        for e_repo, e_dir, e_name in pkg.embeds.get(type_name, []):
            found = self._member(e_repo, e_dir, e_name, name, depth + 1)
            if found is not None:
                return found
        return None

    # -- sites ------------------------------------------------------------------------------------

    def _source_key(self, repo: str, ff: FileFacts, enclosing: str) -> str | None:
        qn = enclosing or module_qualified_name(ff.path)
        kind = self.kinds[(repo, ff.path)].get(qn)
        return self.corpus.key_of(repo, ff.path, qn, kind) if kind else None

    def _site(self, repo: str, ff: FileFacts, site: Site) -> None:
        if site.kind == S.IMPORT:
            self._import(repo, ff, site)
            return
        qualifier, binding, qtype = (*site.extra, "", "", "")[:3]
        if not qualifier:
            pkg = self.packages[(repo, ff.package)]
            target = pkg.top.get(site.name)
            if target is None:
                self._unresolved(
                    repo,
                    ff,
                    site,
                    "NAME_NOT_RESOLVED",
                    detail=f"{site.name} is declared nowhere in package {ff.package} of {repo}",
                )
            else:
                self._edge(repo, ff, site, target)
            return
        if binding == S.OUTER and qualifier in self.imports[(repo, ff.path)]:
            self._qualified(repo, ff, site, self.imports[(repo, ff.path)][qualifier])
            return
        if binding == S.OUTER and qualifier not in self.imports[(repo, ff.path)]:
            owner = self.packages[(repo, ff.package)].top.get(qualifier)
            if owner is not None and owner.kind == "type":
                qtype = qualifier  # a method expression T.M
        if (binding == S.LOCAL or qtype == qualifier) and qtype:
            type_qualifier, _, type_name = qtype.rpartition(".")
            t_repo, t_dir = repo, ff.package
            if type_qualifier:
                ipath = self.imports[(repo, ff.path)].get(type_qualifier, "")
                if not ipath or is_standard(ipath):
                    return  # a member of a standard-library type: nobody's declaration
                _, providers, _ = self.registry.provider(ipath)
                t_dir = ipath
                if len(providers) != 1:
                    self._unresolved(
                        repo, ff, site, "RECEIVER_NOT_RESOLVED", detail=f"type {qtype} has no single provider"
                    )
                    return
                t_repo = providers[0]
            target = self._member(t_repo, t_dir, type_name, site.name)
            if target is not None:
                self._edge(repo, ff, site, target)
            else:
                self._unresolved(
                    repo,
                    ff,
                    site,
                    "DECLARATION_NOT_RESOLVED",
                    detail=f"no member {site.name} on {qtype} or its embedded types",
                )
            return
        self._unresolved(
            repo, ff, site, "RECEIVER_NOT_RESOLVED", detail=f"the type of {qualifier} is not known from syntax"
        )

    def _qualified(self, repo: str, ff: FileFacts, site: Site, import_path: str) -> None:
        if is_standard(import_path):
            return
        module, providers, _ = self.registry.provider(import_path)
        if not providers:
            self._unresolved(
                repo,
                ff,
                site,
                "MODULE_PROVIDER_NOT_FOUND",
                package=import_path,
                detail=f"no registered repository provides {import_path}",
            )
            return
        if len(providers) > 1:
            self._unresolved(
                repo,
                ff,
                site,
                "AMBIGUOUS_MODULE_PROVIDER",
                package=import_path,
                detail=f"{module} is provided by " + ", ".join(sorted(providers)),
            )
            return
        pkg = self.packages.get((providers[0], import_path))
        target = pkg.top.get(site.name) if pkg is not None else None
        if target is None:
            reason = "PACKAGE_PROVIDER_NOT_FOUND" if pkg is None else "DECLARATION_NOT_RESOLVED"
            self._unresolved(
                repo,
                ff,
                site,
                reason,
                package=import_path,
                detail=f"{providers[0]} declares no {site.name} in {import_path}",
            )
            return
        self._edge(repo, ff, site, target)

    def _import(self, repo: str, ff: FileFacts, site: Site) -> None:
        if is_standard(site.name):
            return
        module, providers, _ = self.registry.provider(site.name)
        if not providers:
            return  # an unregistered module: its uses carry the MODULE_PROVIDER_NOT_FOUND rows
        if len(providers) > 1:
            self._unresolved(
                repo,
                ff,
                site,
                "AMBIGUOUS_MODULE_PROVIDER",
                package=site.name,
                detail=f"{module} is provided by " + ", ".join(sorted(providers)),
            )
            return
        if providers[0] == repo and site.name == ff.package:
            return
        self.out.package_dependencies.append(
            PackageDependencyFact(
                consumer_repository=repo,
                consumer_package=ff.package,
                provider_repository=providers[0],
                provider_package=site.name,
                path=ff.path,
                line=site.line,
            )
        )

    def _edge(self, repo: str, ff: FileFacts, site: Site, target: Target) -> None:
        source = self._source_key(repo, ff, site.enclosing)
        key = self.corpus.key_of(target.repository, target.path, target.qualified_name, target.kind)
        if source is None or key is None:
            return
        self.out.edges.append(
            EdgeFact(
                int(edge_kind(site.kind, target.kind)),
                source,
                key,
                int(Confidence.CANDIDATE),
                int(Provenance.TREE_SITTER_SYNTAX),
                site.line,
                site.col,
            )
        )

    def _unresolved(
        self, repo: str, ff: FileFacts, site: Site, reason: str, package: str = "", detail: str = ""
    ) -> None:
        self.out.unresolved.append(
            UnresolvedFact(
                name=site.name,
                reason=reason,
                repository=repo,
                path=ff.path,
                line=site.line,
                col=site.col,
                language=LANGUAGE,
                source=self._source_key(repo, ff, site.enclosing) or "",
                package=package,
                detail=detail,
            )
        )


def edge_kind(use: str, target_kind: str) -> EdgeKind:
    """The edge a use makes: the syntax picks the class, the target's kind refines it."""
    if use == S.EMBED:
        return EdgeKind.EMBEDS
    if target_kind in _TYPES:
        return EdgeKind.TYPE_USES
    if use == S.CALL:
        return EdgeKind.CALLS_DIRECT if target_kind in _CALLABLE else EdgeKind.REFERENCES
    if use == S.CALLBACK:
        return EdgeKind.PASSES_AS_CALLBACK if target_kind in _CALLABLE else EdgeKind.REFERENCES
    return EdgeKind.REFERENCES
