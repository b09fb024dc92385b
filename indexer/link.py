"""``kivgraph publish --bundle``: link bundles built elsewhere with the current generation, publish one generation.

Each bundle is verified first (``indexer.bundle.read_bundle``: header, versions, length, digest, that its
facts are the named repository's), and, where the repository is registered here with a git checkout, its
commit must be the checkout's (``--allow-commit-mismatch`` publishes it anyway; the repository's record
then carries the bundle's commit, which ``graph_status`` shows against the checkout's HEAD). A bad bundle
refuses the whole publication: nothing is written.

Linking is the pipeline's own second half run over every repository at once: each repository's extracted
files get their stable keys, every language's CANDIDATE resolver runs over the whole corpus, and each
repository's exact analyzer run is bound against it, the bundle's run taken as it was built (never run
again here: the analyzer need not be installed on this machine). A consumer's uses of another
repository's packages were recorded by package identity, so binding them against the provider's
declarations gives the edges ``kivgraph index`` of both repositories finds.

The current generation's other repositories stay: each from the bundle it was last published from (kept
in ``<state>/bundles/``), else from its registered checkout here, read as ``kivgraph index`` reads it.
The lock and the publication are ``kivgraph index``'s (``indexer.publish``).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from indexer import __version__
from indexer.bundle import Bundle, BundleError, default_bundle_name, materialize, read_bundle
from indexer.config import LoadedConfig, Repository
from indexer.discover import Candidate, Discovery
from indexer.fact_cache import FactCache
from indexer.gitstate import GitState, read_git_state
from indexer.pipeline import (
    Build,
    RepoWork,
    Timer,
    discover_repository,
    extract_phase,
    key_phase,
    link_phase,
    records_phase,
    resolve_phase,
)
from indexer.progress import Progress, ProgressFn
from indexer.publish import PublishLock, PublishResult, publish
from indexer.scratch import scratch_directory
from snapshot_format.atomic import write_atomically
from snapshot_format.errors import SnapshotError
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current

KEPT_INDEX = "kept.json"


@dataclass
class LinkedRepository:
    """Where one repository of the published generation came from."""

    name: str
    source: str  # "bundle" | "kept bundle" | "checkout"
    commit: str = ""
    checkout_commit: str = ""  # the registered checkout's commit, when it differs (--allow-commit-mismatch)
    path: str = ""  # the bundle file


@dataclass
class LinkReport:
    result: PublishResult
    repositories: list[LinkedRepository] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def bundles_dir(layout: StateLayout) -> Path:
    """Where the bundles a generation was published from are kept (the next publication carries them)."""
    return layout.state_dir / "bundles"


def verify_bundles(
    paths: Sequence[Path], loaded: LoadedConfig, *, allow_commit_mismatch: bool
) -> tuple[list[Bundle], dict[str, str]]:
    """Every bundle read and verified, and the checkout commit of each one published at another commit.

    BundleError names the first bad bundle: two bundles of one repository, or a bundle at another commit than its
    registered checkout (unless ``allow_commit_mismatch``) are refused like a damaged one.
    """
    bundles: list[Bundle] = []
    seen: dict[str, Path] = {}
    mismatched: dict[str, str] = {}
    registered = {r.name: r for r in loaded.repositories}
    for path in paths:
        bundle = read_bundle(path)
        name = bundle.manifest.repository
        if name in seen:
            raise BundleError(f"{path}: a second bundle of repository {name!r} (the first: {seen[name]})")
        seen[name] = path
        repo = registered.get(name)
        if repo is not None and not repo.problem:
            here = read_git_state(repo.root).commit
            there = bundle.manifest.commit
            if here and there != here:
                if not allow_commit_mismatch:
                    raise BundleError(
                        f"{path}: field 'commit': the bundle of {name} was built at commit {there or '(none)'}, "
                        f"its checkout {repo.root} is at commit {here}; check out {there or 'the same commit'} "
                        "or pass --allow-commit-mismatch"
                    )
                mismatched[name] = here
        bundles.append(bundle)
    return bundles, mismatched


def _kept(layout: StateLayout, previous: Generation | None) -> dict[str, Bundle]:
    """The bundles ``previous`` was published from (those still intact), by repository."""
    if previous is None:
        return {}
    try:
        index = json.loads((bundles_dir(layout) / KEPT_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict) or index.get("generation") != previous.name:
        return {}
    out: dict[str, Bundle] = {}
    for name, file in (index.get("bundles") or {}).items():
        try:
            bundle = read_bundle(bundles_dir(layout) / str(file))
        except BundleError:
            continue  # damaged since: the repository then needs its checkout, or a new bundle
        if bundle.manifest.repository == name:
            out[name] = bundle
    return out


def _bundle_work(bundle: Bundle, root: Path) -> RepoWork:
    p = bundle.payload
    found = Discovery(files=[Candidate(f.path, f.language, f.size, f.skip_reason) for f in p.files])
    w = RepoWork(p.repository, root, p.languages, found)
    for ff in p.facts:
        w.facts.setdefault(ff.language, []).append(ff)
    w.hashes = {f.path: f.content_hash for f in p.files if f.content_hash}
    return w


def publish_bundles(
    loaded: LoadedConfig,
    layout: StateLayout,
    paths: Sequence[Path],
    *,
    allow_commit_mismatch: bool = False,
    progress: ProgressFn | None = None,
    fact_cache_mode: str | None = None,
) -> LinkReport:
    """Verify, link and publish (see the module doc); BundleError or ValueError and nothing published on a refusal."""
    emit = progress or (lambda _p: None)
    timer = Timer()
    started = time.perf_counter()
    emit(Progress("verify", "*", f"{len(paths)} bundles", 0, len(paths)))
    bundles, mismatched = verify_bundles(paths, loaded, allow_commit_mismatch=allow_commit_mismatch)
    emit(Progress("verify", "*", ", ".join(b.manifest.repository for b in bundles), len(paths), len(paths)))
    timer.add("verify", started)
    registered = {r.name: r for r in loaded.repositories}
    with PublishLock(layout):
        try:
            previous: Generation | None = open_current(layout)
        except SnapshotError:
            previous = None
        try:
            kept = _kept(layout, previous)
            new = {b.manifest.repository: b for b in bundles}
            carried = [r.name for r in previous.repositories()] if previous is not None else []
            names = list(dict.fromkeys([*new, *carried]))
            # kivgraph.toml's order, then the current generation's, then the new bundles' in the order given
            order = list(dict.fromkeys([*(r.name for r in loaded.repositories if r.name in names), *carried, *new]))
            sources: dict[str, Bundle | Repository] = {}
            for name in order:
                if name in new:
                    sources[name] = new[name]
                elif name in kept:
                    sources[name] = kept[name]
                elif name in registered and not registered[name].problem:
                    sources[name] = registered[name]
                else:
                    why = registered[name].problem if name in registered else "it is not registered here"
                    raise BundleError(
                        f"repository {name} of the current generation {previous.name if previous else ''} cannot be "
                        f"carried over: no bundle of it is kept in {bundles_dir(layout)} and {why}; pass its bundle "
                        "with --bundle too"
                    )
        finally:
            if previous is not None:
                previous.close()
        report = _link_and_publish(loaded, layout, order, sources, new, kept, mismatched, emit, timer, fact_cache_mode)
    report.timings = {k: round(v, 4) for k, v in timer.timings.items()}
    report.timings["total"] = round(time.perf_counter() - started, 4)
    return report


def _link_and_publish(
    loaded: LoadedConfig,
    layout: StateLayout,
    order: list[str],
    sources: dict[str, Bundle | Repository],
    new: dict[str, Bundle],
    kept: dict[str, Bundle],
    mismatched: dict[str, str],
    emit: ProgressFn,
    timer: Timer,
    fact_cache_mode: str | None,
) -> LinkReport:
    registered = {r.name: r for r in loaded.repositories}
    mode = fact_cache_mode or loaded.indexing.fact_cache
    linked: list[LinkedRepository] = []
    with scratch_directory(layout) as scratch, FactCache(layout.fact_cache_dir, mode) as cache:
        b = Build(loaded, cache, emit, timer)
        for i, name in enumerate(order):
            source = sources[name]
            t = time.perf_counter()
            if isinstance(source, Bundle):
                m = source.manifest
                # Linking reads the files the bundle carries, never a checkout here (it may be at another commit)
                w = _bundle_work(source, materialize(source, scratch / "sources" / name))
                for terms in source.payload.terms:
                    b.lexicon.add(name, terms.path, terms.language, terms.counts)
                b.git[name] = GitState(m.commit, m.branch, m.dirty)
                runs = {r.language: (r.failure if r.failure else r.facts) for r in source.payload.runs}
                for language, run in runs.items():
                    b.given.setdefault(language, {})[name] = run
                b.work.append(w)
                how = "bundle" if name in new else "kept bundle"
                linked.append(LinkedRepository(name, how, m.commit, mismatched.get(name, ""), str(source.path)))
                emit(Progress("discover", name, f"{len(w.discovery.indexable)} files ({how})", i + 1, len(order)))
            else:
                found = discover_repository(source, loaded.indexing.max_file_bytes)
                w = RepoWork(source.name, source.root, source.languages, found)
                one = copy.copy(b)
                one.work = [w]
                extract_phase(one)  # the lexicon and the counters are shared with ``b``
                b.git[name] = read_git_state(source.root)
                b.work.append(w)
                linked.append(LinkedRepository(name, "checkout", b.git[name].commit))
                emit(Progress("discover", name, f"{len(found.indexable)} files (checkout)", i + 1, len(order)))
            timer.add("load", t)
        key_phase(b)
        resolve_phase(b)
        link_phase(b)
        records_phase(b)
        cache.prune()
    content = b.content()
    # get_source reads a bundle's repository from its registered checkout here; without one the root stays ""
    # (every answer but the source: paths are repository-relative)
    checkouts = {n: "" if r.problem else str(r.root) for n, r in registered.items()}
    content.repositories = [
        msgspec.structs.replace(r, root=checkouts.get(r.name, "")) if isinstance(sources[r.name], Bundle) else r
        for r in content.repositories
    ]
    keep = _keep_bundles(layout, {**{n: kept[n] for n in order if n in kept and n not in new}, **new})
    t = time.perf_counter()
    emit(Progress("publish", "*", "writing the generation", 0, 1))
    result = publish(layout, content, indexer_version=__version__, retain=loaded.indexing.retain_generations)
    timer.add("publish", t)
    write_atomically(
        bundles_dir(layout) / KEPT_INDEX,
        json.dumps({"generation": result.name, "bundles": keep}, indent=2, sort_keys=True).encode() + b"\n",
    )
    _forget_others(layout, keep)
    emit(Progress("publish", "*", result.name, 1, 1))
    return LinkReport(result, linked)


def _keep_bundles(layout: StateLayout, bundles: dict[str, Bundle]) -> dict[str, str]:
    """Copy each bundle into the state directory (named by its digest, never overwritten); repository -> file name."""
    out: dict[str, str] = {}
    where = bundles_dir(layout)
    where.mkdir(parents=True, exist_ok=True)
    for name, bundle in sorted(bundles.items()):
        m = bundle.manifest
        file = f"{default_bundle_name(name, m.commit)[: -len('.kgbundle')]}-{m.digest[:16]}.kgbundle"
        target = where / file
        if not target.exists():
            write_atomically(target, bundle.path.read_bytes())
        out[name] = file
    return out


def _forget_others(layout: StateLayout, kept: dict[str, str]) -> None:
    """Delete kept bundles the generation just published was not built from (after it is published)."""
    wanted = set(kept.values())
    for old in bundles_dir(layout).glob("*.kgbundle"):
        if old.name not in wanted:
            old.unlink(missing_ok=True)
