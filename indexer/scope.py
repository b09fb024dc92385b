"""An edit costs its own repositories (issue 24): the scope of a run started by a change set.

When ``kivgraph index --watch`` hears a change, the run rebuilds only the repositories it touches and
those linked to them, and carries every other repository's layer over from the current generation as it
is (the same file: ``indexer.publish.CarriedLayer``), with the edges and package dependencies between
carried repositories. "Linked" is read from the current generation's link layer: two repositories are
linked when an edge or a package dependency joins them; the run rebuilds the whole connected part around
the changed ones, so no edge of the generation crosses from a rebuilt repository to a carried one (their
bindings would be stale) and each rebuilt repository's analyzer sees every registered provider it uses.

A run is not scoped (it is the whole set, as before) when it cannot be sure the carried layers are still
right: no layered current generation of this build, a repository added, removed, moved or with other
languages since, a changed path no registered repository owns, or a name the change declares that a
carried repository failed to resolve (it may resolve now). Repositories the current generation leaves
``pending`` exact analysis are rebuilt too, so the run finishes them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from indexer.config import LoadedConfig
from indexer.fact_cache import FactCache
from indexer.publish import CarriedLayer, GenerationContent, LinkLayer, RepositoryLayer, split_content
from snapshot_format import languages, records
from snapshot_format.manifest import LayerEntry
from snapshot_format.reader import Generation, link_edges

PENDING = "pending"


@dataclass
class Scope:
    """What a scoped run rebuilds and what it carries over from ``previous``.

    ``front`` is what the CANDIDATE stage builds: the changed repositories and the providers they use
    (transitively, through the package map), so that their uses resolve; the consumers of a changed
    repository keep their layers and their edges into it until the exact stage, which rebuilds ``rebuilt``
    (the whole linked part: a consumer's analyzer sees the change).
    """

    rebuilt: frozenset[str]
    changed: frozenset[str]  # the repositories the change set touched (or left pending)
    order: list[str]  # registry order
    front: frozenset[str] = frozenset()
    source: Path = Path()  # the previous generation's directory
    entries: dict[str, LayerEntry] = field(default_factory=dict)
    records: dict[str, records.Repository] = field(default_factory=dict)
    edges: list[tuple[records.Edge, str, str]] = field(default_factory=list)  # with their repositories
    deps: list[records.PackageDependency] = field(default_factory=list)
    analyzers: dict[str, str] = field(default_factory=dict)
    origin: str = "watch"  # "watch": the change set a watcher heard; "index": what a whole read found changed
    read: dict[str, dict[str, str]] = field(default_factory=dict)  # "index": the rebuilt files' hashes as read

    def restrict(self, loaded: LoadedConfig, part: frozenset[str] | None = None) -> LoadedConfig:
        """The configuration of the rebuilt repositories (or of ``part``) only."""
        keep = self.rebuilt if part is None else part
        return dataclasses.replace(loaded, repositories=tuple(r for r in loaded.repositories if r.name in keep))

    def describe(self, part: frozenset[str] | None = None, what: str = "rebuilding") -> str:
        keep = self.rebuilt if part is None else part
        carried = [n for n in self.order if n not in keep]
        return f"{what} {', '.join(n for n in self.order if n in keep)}; carried over unchanged: {', '.join(carried)}"

    def layers(
        self, content: GenerationContent, part: frozenset[str] | None = None
    ) -> tuple[list[RepositoryLayer | CarriedLayer], LinkLayer] | None:
        """The layers ``content`` rebuilt (the repositories of ``part``) with every other one carried, and the
        link layer of the whole set; None when an edge carried into a rebuilt repository names a declaration
        that is gone (then this part cannot be published alone)."""
        keep = self.rebuilt if part is None else part
        built, link = split_content(content)
        link.lexicon_stats = None  # the generation's figures, from every layer (not the rebuilt ones' alone)
        rebuilt = {r.name: r for r in link.repositories}
        link.repositories = [rebuilt[n] if n in rebuilt else self.records[n] for n in self.order]
        carried = [e for e, src, dst in self.edges if not (src in keep and dst in keep)]
        if self.dangling(content, keep):
            return None
        link.edges = [*link.edges, *carried]
        link.package_dependencies = [
            *link.package_dependencies,
            *(d for d in self.deps if not (d.consumer_repository in keep and d.provider_repository in keep)),
        ]
        link.analyzers = {**self.analyzers, **link.analyzers}
        others: list[RepositoryLayer | CarriedLayer] = [
            CarriedLayer(n, self.source, self.entries[n]) for n in self.order if n not in keep
        ]
        return [*built, *others], link

    def dangling(self, content: GenerationContent, part: frozenset[str]) -> frozenset[str]:
        """The carried repositories with an edge into (or out of) ``part`` that names a declaration ``content`` no
        longer has (the change removed it): they cannot be carried alongside ``part`` as they are."""
        crossing = [(e, src, dst) for e, src, dst in self.edges if (src in part) != (dst in part)]
        if not crossing:
            return frozenset()
        present = {sym.key for sym in content.symbols}
        return frozenset(
            dst if src in part else src
            for e, src, dst in crossing
            if (e.source if src in part else e.target) not in present
        )


def config_digest(loaded: LoadedConfig, name: str) -> str:
    """What kivgraph.toml says of one repository's indexing: its own entry (root, languages, exclude, build
    outputs, SCIP index), [indexing]'s settings a run reads, and its languages' sections (``allow_network``)."""
    repo = next(r for r in loaded.repositories if r.name == name)
    idx = loaded.indexing
    sections = {
        lang: msgspec.to_builtins(getattr(loaded.raw, lang)) for lang in repo.languages if hasattr(loaded.raw, lang)
    }
    described = {
        "root": str(repo.root),
        "languages": list(repo.languages),
        "exclude": list(repo.exclude),
        "include_build_outputs": repo.include_build_outputs,
        "scip": str(repo.scip or ""),
        "indexing": [idx.max_file_bytes, idx.analyzer_timeout_seconds, idx.include_build_outputs],
        "sections": sections,
    }
    return hashlib.blake2b(json.dumps(described, sort_keys=True).encode(), digest_size=16).hexdigest()


def _config_key(name: str, root: str) -> bytes:
    return hashlib.blake2b(f"kivgraph:repository-config\0{name}\0{root}".encode(), digest_size=20).digest()


def remember_configs(cache: FactCache, loaded: LoadedConfig, names: Iterable[str]) -> None:
    """After an exact publication: the configuration each of ``names`` was indexed with (``configured_anew``)."""
    roots = {r.name: str(r.root) for r in loaded.repositories}
    for name in names:
        if name in roots:
            cache.keep(_config_key(name, roots[name]), config_digest(loaded, name).encode())


def configured_anew(cache: FactCache, loaded: LoadedConfig) -> set[str]:
    """The repositories whose configuration differs from the one their layer was indexed with (or unknown)."""
    out = set()
    for repo in loaded.repositories:
        kept = cache.peek(_config_key(repo.name, str(repo.root)))
        if kept is None or kept.decode() != config_digest(loaded, repo.name):
            out.add(repo.name)
    return out


def _owner(roots: dict[str, str], path: str) -> str | None:
    best, best_len = None, -1
    for name, root in roots.items():
        base = root.rstrip(os.sep) + os.sep
        if (path == root or path.startswith(base)) and len(root) > best_len:
            best, best_len = name, len(root)
    return best


def plan(
    loaded: LoadedConfig,
    previous: Generation | None,
    paths: Iterable[str] = (),
    repositories: Iterable[str] = (),
    *,
    origin: str = "watch",
    configured: Iterable[str] = (),
) -> Scope | None:
    """The scope of a run for a change to ``paths`` (or to the named ``repositories``), or None when the run
    must be the whole set. ``configured``: the repositories whose configuration changed since their layers
    were built (``configured_anew``): they are rebuilt too."""
    if previous is None or not previous.manifest.layers:
        return None
    names = [r.name for r in loaded.repositories]
    entries = {e.repository: e for e in previous.manifest.layers}
    if set(names) != set(entries) or len(names) != len(entries):
        return None
    previous_records: dict[str, records.Repository] = {}
    for repo in loaded.repositories:
        record = previous.repository(repo.name)
        if record is None or repo.problem or record.root != str(repo.root) or record.languages != repo.languages:
            return None
        previous_records[repo.name] = record
    roots = {r.name: str(r.root) for r in loaded.repositories}
    changed: set[str] = (set(repositories) | set(configured)) & set(names)
    for path in paths:
        owner = _owner(roots, str(Path(path)))
        if owner is None:
            return None
        changed.add(owner)
    changed |= {n for n, rec in previous_records.items() if any(a.mode == PENDING for a in rec.analyses)}
    if not changed:
        return None
    edges = list(link_edges(previous))
    linked: dict[str, set[str]] = {n: set() for n in names}
    for _edge, src, dst in edges:
        if src in linked and dst in linked:
            linked[src].add(dst)
            linked[dst].add(src)
        else:
            return None  # an edge whose end no layer holds: not a generation to carry from
    deps: list[records.PackageDependency] = []
    for name in names:
        for dep in previous.package_dependencies(name):
            deps.append(dep)
            if dep.consumer_repository in linked and dep.provider_repository in linked:
                linked[dep.consumer_repository].add(dep.provider_repository)
                linked[dep.provider_repository].add(dep.consumer_repository)
    rebuilt, todo = set(changed), list(changed)
    while todo:
        for other in linked[todo.pop()]:
            if other not in rebuilt:
                rebuilt.add(other)
                todo.append(other)
    front, todo = set(changed), list(changed)  # and the providers they use, transitively
    while todo:
        consumer = todo.pop()
        for dep in deps:
            if dep.consumer_repository == consumer and dep.provider_repository not in front:
                front.add(dep.provider_repository)
                todo.append(dep.provider_repository)
    if rebuilt >= set(names) and front >= set(names):
        return None
    return Scope(
        frozenset(rebuilt),
        frozenset(changed),
        names,
        front=frozenset(front),
        source=previous.path,
        entries=entries,
        records=previous_records,
        edges=edges,
        deps=deps,
        analyzers=dict(previous.manifest.analyzers),
        origin=origin,
    )


def newly_resolvable(scope: Scope, previous: Generation, names: Iterable[tuple[str, str]]) -> str | None:
    """A carried repository that failed to resolve one of ``names`` ((language, name) the change declares
    anew, in the same language family): why the run cannot be scoped, or None."""
    for language, name in names:
        family = languages.family(language)
        for row in previous.unresolved_by_name(name):
            theirs = languages.family(row.language) if row.language else family
            if row.repository not in scope.rebuilt and theirs == family:
                return f"{row.repository} did not resolve {name!r}, which the change declares"
    return None
