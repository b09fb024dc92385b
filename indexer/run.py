"""One index run, above the phases it calls: the lock, the reads of the tree, the stages and their publications.

The order of modules (``pyproject.toml``'s layers contract): ``cli`` -> ``run`` -> ``incremental`` (the
stages' parts: the change set, the CANDIDATE stage, the exact route) -> ``staleness`` -> ``fingerprint`` ->
``pipeline`` (the phases) -> what the phases use. Nothing below imports this module.

Fresh after every edit: the stages of one run.

1. **Nothing changed, nothing published.** Every registered file is read and hashed (content decides,
   never mtimes), then the run's inputs are fingerprinted (``indexer.fingerprint``): configuration, each repository's files and
   hashes, git commit/branch/dirty, extractor versions and each exact analyzer's own cache key (its
   inputs: go.mod, tsconfig, providers' files, the analyzer's identity). When CURRENT is the intact
   generation a complete run published from the same fingerprint, nothing is published and the run says
   so. A revert or a branch switch back is just another set of hashes: the fact cache still holds their
   facts and analyzer runs, so it publishes at once without re-running an analyzer.
2. **A CANDIDATE generation first** for a small change set whose analyzer run would miss the cache: the
   changed files are re-extracted and re-resolved by the CANDIDATE resolver, the files that depend on
   them (they reference a name the change declared, removed or altered) are too, and every other file
   keeps what the previous generation holds for it: its EXACT edges, its candidates, its unresolved rows.
   Those files are ``pending`` (``File.analysis``; the repository's language analysis says how many and
   which), so answers in between are labelled.
3. **Then the exact pass** (through ``IncrementalAnalyzer``: only the affected part where the analyzer
   allows it) and a second publication. A failing analyzer degrades that repository to its fallback,
   as in any run; a stop in between leaves the CANDIDATE generation serving, complete and labelled, and
   the next run finishes it.

Neither publication is made for a tree that changed since the run read it: the tree is read again before
an analyzer's facts are kept and before CURRENT names a generation, and a stale result is dropped for a
new read at once (``indexer.staleness``). A watch's newer edit stops the exact stage's analyzer
(``indexer.supersede``): the CANDIDATE generation serves and the next run goes on.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from indexer import __version__, interface, relink, staleness, supersede
from indexer.config import LoadedConfig
from indexer.fact_cache import FactCache
from indexer.fingerprint import Inputs, remember, run_inputs, unchanged
from indexer.incremental import MAX_PROVISIONAL_FILES, ExactRoute, change_set, declared, provisional
from indexer.languages import registry
from indexer.pipeline import (
    Build,
    LanguageCounters,
    Timer,
    corpus_for,
    discover_phase,
    extract_phase,
    git_state_of,
    key_phase,
    link_phase,
    records_phase,
    resolve_phase,
)
from indexer.progress import Progress, ProgressFn
from indexer.publish import GenerationContent, PublishLock, PublishResult, holding, publish, publish_layers
from indexer.scope import Scope, configured_anew, newly_resolvable, plan, remember_configs
from indexer.scratch import scratch_directory
from snapshot_format.errors import SnapshotError
from snapshot_format.layout import StateLayout
from snapshot_format.manifest import Manifest
from snapshot_format.reader import Generation, open_current
from snapshot_format.versions import FEATURE_VERSION


@dataclass
class IndexReport:
    passed: bool
    generation_id: int | None = None
    generation: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    index: dict[str, dict[str, object]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    cache: dict[str, int | str] = field(default_factory=dict)  # mode, then the counts
    error: str | None = None
    published: bool = True  # False: nothing changed, CURRENT still serves (``note`` says so)
    stages: list[dict[str, object]] = field(default_factory=list)  # each publication: CANDIDATE, then exact
    note: str = ""
    stale: list[dict[str, object]] = field(default_factory=list)  # results dropped: the tree changed under them


@dataclass(frozen=True)
class Stage:
    """One publication of a run: the CANDIDATE one in front, or the final one."""

    name: str  # "candidate" | "exact"
    result: PublishResult
    pending_files: int = 0
    seconds: float = 0.0

    def summary(self) -> dict[str, object]:
        return {
            "stage": self.name,
            "generation_id": self.result.generation_id,
            "generation": self.result.name,
            "pending_files": self.pending_files,
            "seconds": round(self.seconds, 3),
        }


PublishedFn = Callable[[Stage], None]


@dataclass
class StagedRun:
    """What one run did: the generation that serves after it, and each publication on the way."""

    manifest: Manifest
    name: str
    counters: dict[str, LanguageCounters]
    stages: list[Stage] = field(default_factory=list)
    note: str = ""  # why nothing was published
    stale: list[dict[str, object]] = field(default_factory=list)  # results dropped: the tree changed under them

    @property
    def published(self) -> bool:
        return bool(self.stages)

    @property
    def result(self) -> PublishResult | None:
        return self.stages[-1].result if self.stages else None


def run_index(
    loaded: LoadedConfig,
    layout: StateLayout,
    *,
    progress: ProgressFn | None = None,
    fact_cache_mode: str | None = None,
    only: frozenset[str] | None = None,
    on_published: Callable[[Stage], None] | None = None,
    scope_paths: frozenset[str] | None = None,
    lock: PublishLock | None = None,
) -> tuple[IndexReport, PublishResult | None]:
    """Index every registered repository and publish what changed (raises on failure).

    ``lock``: the indexer lock, when the caller holds it (the CLI, for a whole ``--watch``); else the run takes
    it, once, for all of it (discovery through publication: see ``PublishLock``).

    ``scope_paths`` (``--watch``): the files whose change started the run; the run rebuilds only the
    repositories they concern and those linked to them, carrying every other layer (``indexer.scope``).

    ``only`` names the repositories to re-read from disk; the others are carried over
    from the current generation (every registered repository is always published).
    Nothing is published when nothing changed (the result is None); a small change is
    published twice, CANDIDATE first (``on_published`` hears of each publication).
    """
    emit = progress or (lambda _p: None)
    mode = fact_cache_mode or loaded.indexing.fact_cache
    names = {r.name for r in loaded.repositories}
    if only is not None and not only <= names:
        raise ValueError(f"--repository: not registered: {', '.join(sorted(only - names))}")
    with holding(layout, lock) as held:  # the whole run, not only publication: see PublishLock
        return _locked_run_index(loaded, layout, held, emit, mode, only, on_published, scope_paths)


def _locked_run_index(
    loaded: LoadedConfig,
    layout: StateLayout,
    lock: PublishLock,
    emit: ProgressFn,
    mode: str,
    only: frozenset[str] | None,
    on_published: Callable[[Stage], None] | None,
    scope_paths: frozenset[str] | None = None,
) -> tuple[IndexReport, PublishResult | None]:
    timer = Timer()
    started = time.perf_counter()
    with scratch_directory(layout), FactCache(layout.fact_cache_dir, mode) as cache:
        run = index_in_stages(
            loaded,
            layout,
            cache,
            emit,
            timer,
            mode=mode,
            only=only,
            on_published=on_published,
            scope_paths=scope_paths,
            lock=lock,
        )
        cache.prune()
        stats = cache.stats
    timer.timings["total"] = time.perf_counter() - started
    counts = run.manifest.counts
    report = IndexReport(
        passed=True,
        generation_id=run.manifest.id,
        generation=run.name,
        counts={
            "repositories": counts.repositories,
            "files": counts.files,
            "symbols": counts.symbols,
            "edges": counts.edges,
            "unresolved": counts.unresolved,
            "package_dependencies": counts.package_dependencies,
            "failed_files": counts.failed_files,
            "skipped_files": counts.skipped_files,
        },
        index={lang: vars(c) for lang, c in sorted(run.counters.items())},
        timings={k: round(v, 4) for k, v in timer.timings.items()},
        cache={
            "mode": mode,
            "hits": stats.hits,
            "misses": stats.misses,
            "writes": stats.writes,
            "verified": stats.verified,
            "pruned": stats.pruned,
        },
        published=run.published,
        stages=[st.summary() for st in run.stages],
        note=run.note,
        stale=run.stale,
    )
    return report, run.result


# --- the run -----------------------------------------------------------------------------------------


def _open_current(layout: StateLayout) -> Generation | None:
    try:
        return open_current(layout)
    except SnapshotError:
        return None  # no valid pointer, or CURRENT cannot be opened: a full run republishes


def _compatible(previous: Generation) -> bool:
    """A generation this build wrote under the same record rules: its answers can be carried over."""
    m = previous.manifest
    return m.indexer_version == __version__ and m.feature_version == FEATURE_VERSION


def _publish(
    layout: StateLayout,
    lock: PublishLock,
    content: GenerationContent,
    b: Build,
    stage: str,
    check: staleness.ReadCheck,
    scope: Scope | None = None,
    part: frozenset[str] | None = None,
) -> PublishResult | None:
    """Publish ``content``; with a scope, its layers with every other one carried (None: that cannot be)."""
    t = time.perf_counter()
    split = scope.layers(content, part) if scope is not None else None
    if scope is not None and split is None:
        return None
    b.progress(Progress("publish", "*", f"writing the {stage} generation", 0, 1))

    def on_step(step: str) -> None:
        if step == "validated":
            check(stage)  # last, before CURRENT names it

    reuse = b.fact_cache.mode == "on"  # --full (refresh) and verify write every layer afresh
    if split is not None:  # the rebuilt repositories' layers, every other one carried as it is
        layers, link = split
        result = publish_layers(
            layout,
            layers,
            link,
            indexer_version=__version__,
            retain=b.loaded.indexing.retain_generations,
            on_step=on_step,
            reuse=reuse,
            lock=lock,
        )
    else:
        result = publish(
            layout,
            content,
            indexer_version=__version__,
            retain=b.loaded.indexing.retain_generations,
            on_step=on_step,
            reuse=reuse,
            lock=lock,
        )
    b.timer.add("publish", t)
    b.progress(Progress("publish", "*", f"{result.name} ({stage})", 1, 1))
    return result


def index_in_stages(
    loaded: LoadedConfig,
    layout: StateLayout,
    cache: FactCache,
    emit: ProgressFn,
    timer: Timer,
    *,
    mode: str,
    only: frozenset[str] | None,
    on_published: PublishedFn | None = None,
    scope_paths: frozenset[str] | None = None,
    lock: PublishLock,
) -> StagedRun:
    """One index run (under ``lock``, the indexer lock the caller holds): nothing, or a CANDIDATE then an exact generation,
    or one exact generation; read again at once when the tree changed under a result (``indexer.staleness``)."""
    stages: list[Stage] = []  # every publication of the run, whichever read made it

    def published(stage: Stage) -> None:
        stages.append(stage)
        if on_published is not None:
            on_published(stage)

    dropped: list[staleness.Stale] = []
    for read in range(1, staleness.MAX_READS + 1):
        if read > 1:
            supersede.begin_run()  # a new read of the tree: the edits heard so far are its own
        try:
            try:
                run = _read_and_publish(
                    loaded,
                    layout,
                    cache,
                    emit,
                    timer,
                    mode=mode,
                    only=only,
                    published=published,
                    paths=scope_paths,
                    lock=lock,
                )
            except _Widen as widen:
                emit(Progress("scope", "*", f"{widen}: indexing the whole set", 1, 1))
                scope_paths = None
                run = _read_and_publish(
                    loaded, layout, cache, emit, timer, mode=mode, only=only, published=published, lock=lock
                )
        except staleness.Stale as stale:
            dropped.append(stale)
            again = "reading the tree again" if read < staleness.MAX_READS else "giving up"
            emit(Progress("stale", "*", f"{stale}; {again}", read, staleness.MAX_READS))
            continue
        run.stages, run.stale = stages, [d.as_json() for d in dropped]
        return run
    raise staleness.TreeKeptChanging(dropped, stages[-1].result.name if stages else "")


def _read_and_publish(
    loaded: LoadedConfig,
    layout: StateLayout,
    cache: FactCache,
    emit: ProgressFn,
    timer: Timer,
    *,
    mode: str,
    only: frozenset[str] | None,
    published: PublishedFn,
    lock: PublishLock,
    paths: frozenset[str] | None = None,
    planned: Scope | None = None,
    whole: Inputs | None = None,
    rerun: frozenset[str] | None = None,
    read: dict[str, dict[str, str]] | None = None,
) -> StagedRun:
    """One read of the tree and what it publishes (``Stale`` when the tree changed under a result).

    ``paths``: the change that started the run (``--watch``): the run is scoped to the repositories it
    concerns when it can be (``indexer.scope``), every other layer carried over as it is.
    """
    previous = _open_current(layout)
    try:
        scope = planned
        if rerun is not None and previous is not None:  # the following stage: the consumers left pending
            scope = plan(loaded, previous, repositories=rerun, origin="index")
            if scope is not None and read is not None:
                scope.read = {n: h for n, h in read.items() if n in scope.rebuilt}
        if paths is not None and only is None and mode == "on" and previous is not None and _compatible(previous):
            scope = plan(loaded, previous, paths, configured=configured_anew(cache, loaded))
        front = None
        if scope is not None and scope.origin == "watch" and scope.front != scope.rebuilt:
            assert previous is not None
            front = _front_stage(loaded, layout, lock, cache, emit, timer, previous, scope)
            if front is not None:
                published(front)
        # The exact stage runs the changed repositories and their providers alone; each consumer keeps its layer
        # while the interfaces it sees are the same (indexer.relink)
        part = scope.front if scope is not None and scope.front != scope.rebuilt else None
        b = Build(scope.restrict(loaded, part) if scope else loaded, cache, emit, timer, only, previous)
        if scope is not None:
            emit(Progress("scope", "*", scope.describe(part), 1, 1))
        discover_phase(b)
        extract_phase(b)
        if whole is not None and scope is not None and any(scope.read.get(w.name) != w.hashes for w in b.work):
            whole = None  # the rebuilt part changed since the whole read: its fingerprint is not this content's
        t = time.perf_counter()
        b.git = {w.name: git_state_of(w) for w in b.work}
        inputs = run_inputs(b)
        check = staleness.ReadCheck(b, run_inputs(b, tree_only=True), functools.partial(run_inputs, tree_only=True))
        timer.add("inputs", t)
        if scope is None and mode == "on" and previous is not None and unchanged(cache, previous, inputs):
            remember(cache, _current_result(previous), inputs)  # refresh its day: the record is not pruned
            note = f"nothing changed since {previous.name}: not published again"
            emit(Progress("unchanged", "*", note, 1, 1))
            return StagedRun(previous.manifest, previous.name, _served_counters(b, previous), note=note)
        if scope is None and paths is None and only is None and mode == "on" and previous is not None:
            # A whole read found what changed: when it is not everything, only that part is rebuilt.
            narrowed = _narrowed(b, previous, inputs) if _compatible(previous) else None
            if narrowed is not None:
                previous.close()
                previous = None
                return _read_and_publish(
                    loaded,
                    layout,
                    cache,
                    emit,
                    timer,
                    mode=mode,
                    only=only,
                    published=published,
                    lock=lock,
                    planned=narrowed,
                    whole=inputs,  # what the whole set was read as: the run publishes what a whole run would
                )
        key_phase(b)
        stages: list[Stage] = [front] if front is not None else []
        declared_names: set[tuple[str, str]] = set()
        if scope is not None:
            assert previous is not None
            scoped = change_set(b, previous)
            if scope.origin == "watch" and not scoped.edited and not any(scoped.pending.values()):
                note = (
                    f"nothing changed in {', '.join(sorted(scope.changed))} since {previous.name}: not published again"
                )
                emit(Progress("unchanged", "*", note, 1, 1))
                return StagedRun(previous.manifest, previous.name, _served_counters(b, previous), note=note)
            declared_names = declared(b, previous, scoped)
            if why := newly_resolvable(scope, previous, declared_names):
                raise _Widen(why)
        if front is None and mode == "on" and previous is not None and _compatible(previous):
            changes = change_set(b, previous)
            if 0 < changes.edited <= MAX_PROVISIONAL_FILES:
                t = time.perf_counter()
                built = provisional(b, previous, changes)
                if built is not None:
                    content, pending = built
                    result = _publish(layout, lock, content, b, "candidate", check, scope, part)
                    if result is not None:  # None: a consumer's kept edge names a removed declaration
                        stage = Stage("candidate", result, pending, time.perf_counter() - t)
                        timer.add("candidate_stage", t)
                        stages.append(stage)
                        published(stage)
        t = time.perf_counter()
        route = b.analyze = ExactRoute(b, mode, check)
        before = relink.recalled(b) if part is not None else {}
        try:
            with supersede.exact_stage(bool(stages)):
                resolve_phase(b)
        except supersede.Superseded:
            note = "a newer edit arrived while the analyzer ran: the CANDIDATE generation serves, the next run goes on"
            emit(Progress("superseded", "*", note, 1, 1))
            return StagedRun(stages[-1].result.manifest, stages[-1].result.name, dict(b.counters), stages, note=note)
        for (language, _repo), how in route.routes.items():
            b.counters[language].analyzer_incremental += int(how == "incremental")
        follow = relink.Following()
        if part is not None:
            assert scope is not None and previous is not None
            follow = relink.following(b, previous, scope, part, before, declared_names)
        emit(Progress("analyzers", "*", _analyzers_ran(route) + follow.describe(), 1, 1))
        if follow.relink:  # bound again against the new interfaces, without their analyzers (indexer.relink)
            assert scope is not None and part is not None
            part = part | frozenset(follow.relink)
            b, check = _relinked(loaded, cache, emit, timer, previous, scope, part, follow, mode)
        else:
            link_phase(b)
            records_phase(b)
        result = _publish(layout, lock, b.content(), b, "exact", check, scope, part)
        if result is None:  # a kept edge names a declaration that is gone: the whole linked part is rebuilt
            assert scope is not None
            return _read_and_publish(
                loaded,
                layout,
                cache,
                emit,
                timer,
                mode=mode,
                only=only,
                published=published,
                lock=lock,
                planned=dataclasses.replace(scope, front=scope.rebuilt),
                whole=whole,
            )
        relink.remember(b, corpus_for, skip=follow.rerun)
        remember_configs(cache, loaded, [w.name for w in b.work])
        if (scope is None or whole is not None) and not follow.rerun:  # a watch's scoped run did not read it all
            remember(cache, result, whole or inputs)
        stage = Stage("exact", result, 0, time.perf_counter() - t)
        stages.append(stage)
        published(stage)
        if follow.rerun:  # their analyzers, in the stage that follows
            if previous is not None:
                previous.close()
                previous = None
            return _read_and_publish(
                loaded,
                layout,
                cache,
                emit,
                timer,
                mode=mode,
                only=only,
                published=published,
                lock=lock,
                rerun=frozenset(follow.rerun),
                whole=whole,
                read=scope.read if scope is not None else None,
            )
        return StagedRun(result.manifest, result.name, dict(b.counters), stages)
    finally:
        if previous is not None:
            previous.close()


def _relinked(
    loaded: LoadedConfig,
    cache: FactCache,
    emit: ProgressFn,
    timer: Timer,
    previous: Generation | None,
    scope: Scope,
    part: frozenset[str],
    follow: relink.Following,
    mode: str,
) -> tuple[Build, staleness.ReadCheck]:
    """The exact stage's build again, with the consumers to bind again carried (their files and facts as the
    previous generation has them), each bound with its last run's facts (``relink.old_runs``) and left pending."""
    r = Build(scope.restrict(loaded, part), cache, emit, timer, part - frozenset(follow.relink), previous)
    emit(Progress("scope", "*", scope.describe(part, "binding again"), 1, 1))
    discover_phase(r)
    extract_phase(r)
    r.git = {w.name: git_state_of(w) for w in r.work}
    check = staleness.ReadCheck(r, run_inputs(r, tree_only=True), functools.partial(run_inputs, tree_only=True))
    key_phase(r)
    relink.old_runs(r, follow.rerun)
    r.analyze = ExactRoute(r, mode, check)
    resolve_phase(r)
    relink.mark_pending(r, follow)
    link_phase(r)
    records_phase(r)
    return r, check


def _front_stage(
    loaded: LoadedConfig,
    layout: StateLayout,
    lock: PublishLock,
    cache: FactCache,
    emit: ProgressFn,
    timer: Timer,
    previous: Generation,
    scope: Scope,
) -> Stage | None:
    """The CANDIDATE generation of a watch's scoped run, built from the changed repositories and the providers
    they use alone: each consumer keeps its layer and its edges into them until the exact stage rebuilds it
    (None when there is no CANDIDATE stage to publish, or a kept edge names a declaration the change removed)."""
    t = time.perf_counter()
    part = scope.front
    for _attempt in range(2):
        # a consumer whose kept edges name a declaration the change removed is built too (its files as the
        # previous generation has them; the files using the removed names pending, resolved again)
        f = Build(
            scope.restrict(loaded, part), cache, emit, timer, scope.front if part != scope.front else None, previous
        )
        emit(Progress("scope", "*", scope.describe(part, "first"), 1, 1))
        discover_phase(f)
        extract_phase(f)
        f.git = {w.name: git_state_of(w) for w in f.work}
        check = staleness.ReadCheck(f, run_inputs(f, tree_only=True), functools.partial(run_inputs, tree_only=True))
        key_phase(f)
        changes = change_set(f, previous)
        if not 0 < changes.edited <= MAX_PROVISIONAL_FILES:
            return None
        if why := newly_resolvable(scope, previous, declared(f, previous, changes)):
            raise _Widen(why)
        built = provisional(f, previous, changes)
        if built is None:
            return None
        content, pending = built
        extra = scope.dangling(content, part)
        if extra:
            part = part | extra
            continue
        result = _publish(layout, lock, content, f, "candidate", check, scope, part)
        if result is None:
            return None
        timer.add("candidate_stage", t)
        return Stage("candidate", result, pending, time.perf_counter() - t)
    return None


def _narrowed(b: Build, previous: Generation, inputs: Inputs) -> Scope | None:
    """The scope of a whole read's changes (``kivgraph index``): the repositories whose files, git state or
    analyzer inputs differ from what the current generation was built from, with those linked to them."""
    changes = change_set(b, previous)
    changed = {r for part in (changes.changed, changes.removed, changes.pending) for r, paths in part.items() if paths}
    own_keys = relink.own_keys(b, corpus_for)
    changed |= configured_anew(b.fact_cache, b.loaded)  # an exclude, [indexing], a language's section
    for w in b.work:
        record = previous.repository(w.name)
        git = b.git[w.name]
        if record is None or (record.commit, record.branch, record.dirty) != (git.commit, git.branch, git.dirty):
            changed.add(w.name)
            continue
        modes = {a.language: a.mode for a in record.analyses}
        for language in w.facts:
            key = inputs.analyzer_keys.get((language, w.name), b"-")
            if key == b"-":
                continue  # no analyzer for the language
            if key is None:  # the analyzer is missing now: a change unless it was then too
                if modes.get(language) != "fallback":
                    changed.add(w.name)
                continue
            # its analyzer's inputs of its own (a provider's edit is the provider's change, not this one's)
            own = own_keys.get((language, w.name))
            kept = interface.recall(b.fact_cache, language, w.name, str(w.root))
            if own is None or kept is None or own != kept.own:
                changed.add(w.name)
    if not changed:
        return None
    scope = plan(b.loaded, previous, repositories=changed, origin="index")
    if scope is not None:
        scope.read = {w.name: dict(w.hashes) for w in b.work if w.name in scope.rebuilt}
    return scope


class _Widen(Exception):
    """A scoped run found it cannot be scoped after all (the message says why): the whole set is indexed."""


def _analyzers_ran(route: ExactRoute) -> str:
    """Which analyzers this run started, on which repositories (the progress event of the exact stage)."""
    ran = []
    for (language, repo), how in sorted(route.routes.items()):
        adapter = registry.adapter_for(language)
        ran.append(f"{adapter.analyzer if adapter else language} on {repo} ({how})")
    return "ran " + ", ".join(ran) if ran else "none ran: every analyzer run came from the fact cache"


def _served_counters(b: Build, previous: Generation) -> dict[str, LanguageCounters]:
    """This run's cache figures with what the generation still serving holds per language."""
    counters = b.counters
    for repo in previous.repositories():
        for f in previous.files(repo.name):
            c = counters[f.language]
            if f.status == "skipped":
                c.skipped += 1
                continue
            c.files += 1
            c.symbols += f.symbols
            c.parse_failed += int(f.status == "parse_failed")
            c.partial += int(f.status == "partial")
        for a in repo.analyses:
            c = counters[a.language]
            c.mode = a.mode if c.mode in ("", a.mode) else "mixed"
    return dict(counters)


def _current_result(previous: Generation) -> PublishResult:
    return PublishResult(
        generation_id=previous.id,
        name=previous.name,
        path=previous.path,
        manifest=previous.manifest,
        removed=(),
        seconds=0.0,
    )
