"""Fresh after every edit: the stages of one index run.

1. **Nothing changed, nothing published.** Every registered file is read and hashed (content decides,
   never mtimes), then the run's inputs are fingerprinted: configuration, each repository's files and
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
new read at once (``indexer.staleness``).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from indexer import __version__, interface, relink, staleness, supersede
from indexer.code_identity import code_digest
from indexer.config import LoadedConfig
from indexer.corpus import Corpus, RepositoryFacts, Resolution
from indexer.exact_pass import merge, run_exact
from indexer.fact_cache import FactCache, FactCacheDisagreement, cache_key
from indexer.facts import EdgeFact, FileFacts, UnresolvedFact
from indexer.interface import providers_of
from indexer.languages import registry
from indexer.languages.spec import AnalyzerFailed, ExactAdapter
from indexer.pipeline import (
    Build,
    LanguageCounters,
    _Timer,
    candidate_resolution,
    corpus_for,
    discover_phase,
    extract_phase,
    git_state_of,
    key_phase,
    link_phase,
    records_phase,
    resolve_phase,
)
from indexer.progress import Heartbeat, Progress, ProgressFn
from indexer.publish import GenerationContent, PublishResult, publish, publish_layers
from indexer.scope import Scope, configured_anew, newly_resolvable, plan, remember_configs
from snapshot_format import records
from snapshot_format.errors import SnapshotError
from snapshot_format.layout import StateLayout
from snapshot_format.manifest import Manifest
from snapshot_format.reader import Generation, open_current
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION

# A change set larger than this is a rebuild, not an edit: no CANDIDATE stage in front of it.
MAX_PROVISIONAL_FILES = 64
PENDING = "pending"  # File.analysis and LanguageAnalysis.mode of a file whose exact analysis is pending

_PUBLISHED_KEY = hashlib.blake2b(b"kivgraph:published-inputs", digest_size=20).digest()


class PublishedInputs(msgspec.Struct, frozen=True):
    """What the last complete (exact) publication was built from: a fact-cache bookkeeping record."""

    generation: str
    digest: str
    inputs: str


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


# --- 1. the inputs of a run ----------------------------------------------------------------------


@dataclass
class Inputs:
    fingerprint: str
    # (language, repository) -> the exact analyzer's cache key for this run (None: no analyzer available)
    analyzer_keys: dict[tuple[str, str], bytes | None]


def run_inputs(b: Build, *, tree_only: bool = False) -> Inputs:
    """Everything the generation is a function of, after discovery and extraction (see the module doc).

    ``tree_only``: each analyzer's part without the caches a run fills itself (``LanguageAdapter.tree_key``),
    what the stale-read check compares: a dependency the run fetched is not a change of the tree.
    """
    h = hashlib.blake2b(digest_size=20)

    def add(*parts: object) -> None:
        for part in parts:
            h.update(str(part).encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        h.update(b"\n")

    idx = b.loaded.indexing
    add("kivgraph", __version__, FORMAT_VERSION, FEATURE_VERSION, idx.max_file_bytes, idx.analyzer_timeout_seconds)
    add("code", code_digest())
    for w in b.work:
        git = b.git[w.name]
        add(
            "repository",
            w.name,
            w.root,
            ",".join(w.languages),
            w.problem,
            git.commit,
            git.branch,
            git.dirty,
            bool(w.carried),
        )
        for cand in [*w.discovery.files, *w.external_files]:
            add(cand.path, cand.language, cand.size, cand.skip_reason, w.hashes.get(cand.path, ""))
        for name in sorted(k for k in w.hashes if k.startswith("\0scip:")):  # a named SCIP index's content
            add(name, w.hashes[name], w.external_problem)
        for language in sorted(w.facts):
            module = registry.module_for(language)
            add("extractor", language, module.EXTRACTOR_VERSION if module else "")
    keys: dict[tuple[str, str], bytes | None] = {}
    for language in sorted({lang for w in b.work for lang in w.facts}):
        adapter = registry.adapter_for(language)
        if adapter is None:
            continue
        corpus = corpus_for(b, language)
        hashes = _language_hashes(b, language)
        try:
            identity = adapter.identity()
        except AnalyzerFailed as exc:
            add("analyzer", language, "missing", exc)
            keys.update({(language, r.name): None for r in corpus.repositories if r.files})
            continue
        for repo in corpus.repositories:
            if repo.files:
                key = (adapter.tree_key if tree_only else adapter.cache_key)(repo, hashes, identity, corpus)
                keys[(language, repo.name)] = key
                add("analyzer", language, repo.name, key.hex())
    return Inputs(h.hexdigest(), keys)


def _language_hashes(b: Build, language: str) -> dict[str, dict[str, str]]:
    return {w.name: {ff.path: w.hashes[ff.path] for ff in w.facts.get(language, [])} for w in b.work}


def unchanged(cache: FactCache, previous: Generation | None, inputs: Inputs) -> bool:
    """CURRENT is the intact generation a complete run published from exactly these inputs."""
    if previous is None:
        return False
    raw = cache.peek(_PUBLISHED_KEY)
    if raw is None:
        return False
    try:
        record = msgspec.msgpack.decode(raw, type=PublishedInputs)
    except msgspec.DecodeError:
        return False
    if (record.generation, record.digest, record.inputs) != (
        previous.name,
        previous.manifest.digest,
        inputs.fingerprint,
    ):
        return False
    try:
        previous.verify_digest()  # a damaged CURRENT is republished, never kept for being "unchanged"
    except SnapshotError:
        return False
    return True


def remember(cache: FactCache, result: PublishResult, inputs: Inputs) -> None:
    cache.keep(
        _PUBLISHED_KEY, msgspec.msgpack.encode(PublishedInputs(result.name, result.manifest.digest, inputs.fingerprint))
    )


# --- 2. what changed since the previous generation ----------------------------------------------------


@dataclass
class ChangeSet:
    """Per repository: files whose content differs from the previous generation's, files gone, and files
    the previous generation left pending exact analysis."""

    changed: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    removed: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    pending: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    # (repository, path) -> the previous generation's record
    before: dict[tuple[str, str], records.File] = field(default_factory=dict)

    @property
    def edited(self) -> int:
        return sum(len(v) for v in self.changed.values()) + sum(len(v) for v in self.removed.values())


def change_set(b: Build, previous: Generation) -> ChangeSet:
    out = ChangeSet()
    for w in b.work:
        before = {f.path: f for f in previous.files(w.name)}
        out.before.update(((w.name, p), f) for p, f in before.items())
        now = {ff.path for files in w.facts.values() for ff in files}
        for path in now:
            old = before.get(path)
            if old is None or old.content_hash != w.hashes.get(path) or old.status not in records.PARSED_STATUSES:
                out.changed[w.name].add(path)
            elif old.analysis == PENDING:
                out.pending[w.name].add(path)
        out.removed[w.name] |= {p for p, f in before.items() if p not in now and f.status in records.PARSED_STATUSES}
    return out


def _same_for_others(old: FileFacts, new: FileFacts) -> bool:
    """Whether a file's edit can change nothing outside it: the same declarations and uses, only moved
    (a comment, blank lines, a docstring)."""
    if old.status != new.status:
        return False

    def decls(ff: FileFacts) -> list[tuple[object, ...]]:
        return [(s.name, s.qualified_name, s.kind, s.signature, s.exported, s.container) for s in ff.symbols]

    def uses(ff: FileFacts) -> list[tuple[object, ...]]:
        return [(s.kind, s.name, s.enclosing, s.extra) for s in ff.sites]

    return decls(old) == decls(new) and uses(old) == uses(new)


def changed_names(b: Build, previous: Generation, changes: ChangeSet) -> set[str]:
    """Names the change declared, removed or altered (a file only moved inside contributes none)."""
    names: set[str] = set()
    facts = {(w.name, ff.path): ff for w in b.work for files in w.facts.values() for ff in files}
    for repo, paths in [*changes.changed.items(), *changes.removed.items()]:
        for path in paths:
            new = facts.get((repo, path))
            old_record = changes.before.get((repo, path))
            old = None
            if new is not None and old_record is not None and old_record.content_hash:
                module = registry.module_for(new.language)
                if module is not None:
                    old = b.fact_cache.peek_facts(
                        cache_key(new.language, module.EXTRACTOR_VERSION, path, new.package, old_record.content_hash)
                    )
                if old is not None and _same_for_others(old, new):
                    continue
            names |= {s.name for s in previous.declarations(repo, path)}
            if old is not None:
                names |= {s.name for s in old.symbols}
            if new is not None:
                names |= {s.name for s in new.symbols}
    names.discard("")
    return names


def dependents(previous: Generation, names: Iterable[str]) -> set[tuple[str, str]]:
    """Files whose resolution may change with those names: they reference a symbol of that name (an edge
    in the previous generation) or failed to (an unresolved row naming it)."""
    out: set[tuple[str, str]] = set()
    for name in names:
        for sym in previous.symbols_by_name(name):
            for edge in previous.edges_in(sym.key):
                src = previous.symbol(edge.source)
                if src is not None:
                    out.add((src.repository, src.path))
        for u in previous.unresolved_by_name(name):
            if u.path:
                out.add((u.repository, u.path))
    return out


# --- 3. the CANDIDATE stage -------------------------------------------------------------------------


class _Deferred(AnalyzerFailed):
    """Stage 1 does not run analyzers: a repository whose analysis would miss the cache waits for stage 2."""


@dataclass
class _Carry:
    """Per (language, repository) left for stage 2: which files are pending, and whether the others can
    keep the previous generation's answers."""

    pending: set[str]
    files: set[str]
    carried: bool  # the previous generation analysed it exactly: its other files keep its answers
    previous: records.LanguageAnalysis | None


def _stage_copy(b: Build) -> Build:
    """A Build sharing the extracted inputs, with its own outputs (stage 2 goes on with ``b``)."""
    s = copy.copy(b)
    s.counters = copy.deepcopy(b.counters)
    s.symbols = list(b.symbols)
    s.key_index = dict(b.key_index)
    s.unresolved = list(b.unresolved)
    s.per_file_symbols = collections.Counter(b.per_file_symbols)
    s.resolutions, s.exact_passes, s.edges, s.deps, s.language_of = [], {}, [], {}, {}
    s.file_records, s.repositories = [], []
    return s


def provisional(b: Build, previous: Generation, changes: ChangeSet) -> tuple[GenerationContent, int] | None:
    """The CANDIDATE generation in front of the exact pass, and how many files it leaves pending; None when
    every analyzer run would come from the cache (the exact generation is then just as quick)."""
    s = _stage_copy(b)
    s.languages = sorted({lang for w in s.work for lang in w.facts})
    deferred: set[tuple[str, str]] = set()
    pending_of: dict[tuple[str, str], set[str]] = {}
    names: set[str] | None = None
    depending: set[tuple[str, str]] = set()
    for language in s.languages:
        if registry.module_for(language) is None:
            continue

        def defer(
            _adapter: object, repo: RepositoryFacts, _corpus: object, _key: bytes, _timeout: float, lang: str = language
        ) -> object:
            deferred.add((lang, repo.name))
            raise _Deferred("deferred to the exact stage")

        corpus = corpus_for(s, language)
        candidates = candidate_resolution(s, language, corpus)
        exact = run_exact(
            language,
            corpus,
            _language_hashes(s, language),
            s.fact_cache,
            timeout=s.loaded.indexing.analyzer_timeout_seconds,
            analyze=defer,
            providers=providers_of(candidates.package_dependencies),
        )
        if exact is None:
            s.resolutions.append(candidates)
            continue
        s.exact_passes[language] = exact
        waiting = {repo for lang, repo in deferred if lang == language}
        if not waiting:
            s.resolutions.append(merge(candidates, exact))
            continue
        if names is None:
            names = changed_names(s, previous, changes)
            depending = dependents(previous, names)
        carries: dict[str, _Carry] = {}
        for repo in corpus.repositories:
            if repo.name not in waiting:
                continue
            files = {ff.path for ff in repo.files}
            before = previous.repository(repo.name)
            analysis = next((a for a in before.analyses if a.language == language), None) if before else None
            carried = analysis is not None and analysis.mode in ("exact", PENDING)
            if carried:
                pending = (
                    changes.changed.get(repo.name, set())
                    | changes.pending.get(repo.name, set())
                    | {p for r, p in depending if r == repo.name}
                ) & files
            else:
                pending = set(files)
            carry = carries[repo.name] = _Carry(pending, files, carried, analysis)
            exact.analyses[repo.name] = _pending_analysis(language, carry)
            pending_of[(language, repo.name)] = pending
        s.resolutions.append(_carried_resolution(s, previous, language, merge(candidates, exact), carries))
    if not deferred:
        return None
    link_phase(s)
    records_phase(s)
    _label_files(s, changes, pending_of)
    return s.content(), sum(len(p) for p in pending_of.values())


def _pending_analysis(language: str, carry: _Carry) -> records.LanguageAnalysis:
    adapter = registry.adapter_for(language)
    analyzer = adapter.analyzer if adapter is not None else "the analyzer"
    prev = carry.previous
    shown = sorted(carry.pending)
    listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
    rest = (
        "; the other files keep the edges of the previous exact run"
        if carry.carried
        else "; there is no exact run of it to carry over yet"
    )
    return records.LanguageAnalysis(
        language=language,
        mode=PENDING,
        analyzer=prev.analyzer if prev and prev.analyzer else analyzer,
        analyzer_version=prev.analyzer_version if prev else "",
        reason=(
            f"exact analysis pending for {len(shown)} of {len(carry.files)} files"
            + (f" ({listed})" if shown else "")
            + f": their edges are CANDIDATE until {analyzer} finishes{rest}"
        ),
        files=len(carry.files),
    )


def _carried_resolution(
    s: Build, previous: Generation, language: str, fresh: Resolution, carries: dict[str, _Carry]
) -> Resolution:
    """``fresh`` (candidates merged with cached exact runs) for pending files and other repositories; the
    previous generation's edges and rows for the other files of a carried repository."""
    kept = {(repo, path) for repo, c in carries.items() if c.carried for path in c.files - c.pending}
    carried_repos = {repo for repo, c in carries.items() if c.carried}
    where = {sym.key: (sym.repository, sym.path) for sym in s.symbols}
    out = Resolution(package_dependencies=list(fresh.package_dependencies), callable=set(fresh.callable))
    out.edges = [e for e in fresh.edges if where.get(e.source) not in kept]
    out.unresolved = [
        u
        for u in fresh.unresolved
        if (u.repository, u.path) not in kept and not (not u.path and u.repository in carried_repos)
    ]
    for repo in sorted(carried_repos):
        c = carries[repo]
        for path in sorted(c.files - c.pending):
            record = previous.file(repo, path)
            for sym in previous.declarations(repo, path):
                if sym.callable:
                    out.callable.add(sym.key)
                if sym.key not in where and record is not None and record.status == "partial":
                    _declare_carried(s, sym)  # an analyzer's declaration on a line tree-sitter cannot parse
                    where[sym.key] = (repo, path)
                for e in previous.edges_out(sym.key):
                    # one fact per occurrence, so link folds them back into the same counted edge
                    out.edges.extend(
                        [EdgeFact(e.kind, e.source, e.target, e.confidence, e.provenance, e.line, e.col)] * e.count
                    )
        for u in previous.unresolved_in(repo):
            if u.reason == "PARSE_ERROR":
                continue  # key_phase writes every parse failure afresh
            if (u.path and (repo, u.path) in kept) or (not u.path and u.language == language):
                out.unresolved.append(
                    UnresolvedFact(
                        name=u.name,
                        reason=u.reason,
                        repository=u.repository,
                        path=u.path,
                        line=u.line,
                        col=u.col,
                        language=u.language,
                        source=u.source,
                        package=u.package,
                        detail=u.detail,
                    )
                )
    return out


def _declare_carried(s: Build, sym: records.Symbol) -> None:
    s.symbols.append(sym)
    s.key_index[(sym.repository, sym.path, sym.qualified_name, sym.kind)] = sym.key
    s.per_file_symbols[(sym.repository, sym.path)] += 1


def _label_files(s: Build, changes: ChangeSet, pending_of: dict[tuple[str, str], set[str]]) -> None:
    """Each file of a repository waiting for its analyzer: pending, or the mode the previous run gave it."""
    for i, f in enumerate(s.file_records):
        pending = pending_of.get((f.language, f.repository))
        if pending is None or f.analysis != PENDING or f.path in pending:
            continue
        before = changes.before.get((f.repository, f.path))
        s.file_records[i] = msgspec.structs.replace(
            f, analysis=before.analysis if before and before.analysis else "exact"
        )


# --- 4. the exact pass -------------------------------------------------------------------------------


RECONCILE_EVERY = 8  # incremental exact passes of a repository before a whole run reconciles it


class LastRun(msgspec.Struct, frozen=True):
    """Bookkeeping of the last analyzer run over one repository: the facts it left (their cache key), what
    they depend on besides the repository's own files (``env``), those files' hashes, and how many
    incremental updates were chained since the last whole run."""

    facts_key: bytes
    env: bytes
    hashes: dict[str, str]
    updates: int = 0


def _last_run_key(language: str, repository: str, root: str) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for part in ("kivgraph:last-run", language, repository, root):
        h.update(part.encode() + b"\0")
    return h.digest()


class ExactRoute:
    """How stage 2 analyses a repository whose analyzer run misses the cache (``Build.analyze``).

    When the adapter has an incremental route (``ExactAdapter.update``) and the last run's facts are still
    in the fact cache with the same non-file inputs, only what the changed files can affect is analysed;
    every ``RECONCILE_EVERY``-th run is whole again, and in verify mode the whole run is made too and must
    agree. A heartbeat reports the run while it lasts, and its end with the analyzer's time. ``check`` reads
    the tree again before facts are kept (``indexer.staleness``).
    """

    def __init__(self, b: Build, mode: str, check: staleness.ReadCheck | None = None) -> None:
        self.b = b
        self.mode = mode
        self.check = check
        self.routes: dict[tuple[str, str], str] = {}  # (language, repository) -> "whole" | "incremental"

    def __call__(
        self, adapter: ExactAdapter[Any], repo: RepositoryFacts, corpus: Corpus, key: bytes, timeout: float
    ) -> Any:
        phase = f"analyze.{corpus.language}"
        started = time.perf_counter()
        if self.check is not None:
            if why := self.check.carried(repo.name):
                raise AnalyzerFailed(why)
            self.check.analyzer_starts()
        with (
            supersede.analyzer_running(),
            Heartbeat(self.b.progress, Progress(phase, repo.name, adapter.analyzer, 0, 1)),
        ):
            facts, route = self._analyze(adapter, repo, corpus, key, timeout)
        self.routes[(corpus.language, repo.name)] = route
        self.b.progress(
            Progress(phase, repo.name, f"{adapter.analyzer} ({route}): {time.perf_counter() - started:.1f}s", 1, 1)
        )
        return facts

    def _analyze(
        self, adapter: ExactAdapter[Any], repo: RepositoryFacts, corpus: Corpus, key: bytes, timeout: float
    ) -> tuple[Any, str]:
        cache = self.b.fact_cache
        hashes = _language_hashes(self.b, corpus.language)
        own = hashes.get(repo.name, {})
        base = corpus.key_hashes.get(repo.name, hashes)  # its providers' interfaces, as its key read them
        env = adapter.cache_key(repo, {**base, repo.name: {}}, adapter.identity(), corpus)
        record_key = _last_run_key(corpus.language, repo.name, repo.root)
        last = _decode(cache.peek(record_key), LastRun)
        facts, route = None, "whole"
        incremental = type(adapter).update is not ExactAdapter.update
        if (
            incremental
            and last is not None
            and last.env == env
            and last.updates < RECONCILE_EVERY - 1
            and self.mode in ("on", "verify")
        ):
            raw = cache.peek(last.facts_key)
            previous = _decode_facts(adapter, raw)
            changed = {p for p in own.keys() | last.hashes.keys() if own.get(p) != last.hashes.get(p)}
            if previous is not None and not adapter.failure_of(previous) and changed:
                facts = adapter.update(previous, changed, repo, corpus, timeout=timeout)
                if facts is not None:
                    route = "incremental"
                    if self.mode == "verify":
                        whole = adapter.analyze(repo, corpus, timeout=timeout)
                        if adapter.encode(whole) != adapter.encode(facts):
                            raise FactCacheDisagreement(
                                f"the incremental {adapter.analyzer} run of {repo.name} disagrees with a whole "
                                f"run after changes to {', '.join(sorted(changed)[:5])}"
                            )
                        facts = whole
        if facts is None:
            facts = adapter.analyze(repo, corpus, timeout=timeout)
        if self.check is not None:  # facts of a tree that changed while the analyzer read it are never kept
            if why := self.check.carried(repo.name):
                raise AnalyzerFailed(why)
            self.check("analyzer")
        updates = last.updates + 1 if route == "incremental" and last is not None else 0
        cache.keep(record_key, msgspec.msgpack.encode(LastRun(key, env, dict(own), updates)))
        return facts, route


def _decode(raw: bytes | None, kind: type[Any]) -> Any:
    if raw is None:
        return None
    try:
        return msgspec.msgpack.decode(raw, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _decode_facts(adapter: ExactAdapter[Any], raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return adapter.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


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
        )
    else:
        result = publish(
            layout,
            content,
            indexer_version=__version__,
            retain=b.loaded.indexing.retain_generations,
            on_step=on_step,
            reuse=reuse,
        )
    b.timer.add("publish", t)
    b.progress(Progress("publish", "*", f"{result.name} ({stage})", 1, 1))
    return result


def index_in_stages(
    loaded: LoadedConfig,
    layout: StateLayout,
    cache: FactCache,
    emit: ProgressFn,
    timer: _Timer,
    *,
    mode: str,
    only: frozenset[str] | None,
    on_published: PublishedFn | None = None,
    scope_paths: frozenset[str] | None = None,
) -> StagedRun:
    """One index run (the caller holds the publication lock): nothing, or a CANDIDATE then an exact generation,
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
                    loaded, layout, cache, emit, timer, mode=mode, only=only, published=published, paths=scope_paths
                )
            except _Widen as widen:
                emit(Progress("scope", "*", f"{widen}: indexing the whole set", 1, 1))
                scope_paths = None
                run = _read_and_publish(loaded, layout, cache, emit, timer, mode=mode, only=only, published=published)
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
    timer: _Timer,
    *,
    mode: str,
    only: frozenset[str] | None,
    published: PublishedFn,
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
            front = _front_stage(loaded, layout, cache, emit, timer, previous, scope)
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
                    planned=narrowed,
                    whole=inputs,  # what the whole set was read as: the run publishes what a whole run would
                )
        key_phase(b)
        stages: list[Stage] = [front] if front is not None else []
        declared: set[tuple[str, str]] = set()
        if scope is not None:
            assert previous is not None
            scoped = change_set(b, previous)
            if scope.origin == "watch" and not scoped.edited and not any(scoped.pending.values()):
                note = (
                    f"nothing changed in {', '.join(sorted(scope.changed))} since {previous.name}: not published again"
                )
                emit(Progress("unchanged", "*", note, 1, 1))
                return StagedRun(previous.manifest, previous.name, _served_counters(b, previous), note=note)
            declared = _declared(b, previous, scoped)
            if why := newly_resolvable(scope, previous, declared):
                raise _Widen(why)
        if front is None and mode == "on" and previous is not None and _compatible(previous):
            changes = change_set(b, previous)
            if 0 < changes.edited <= MAX_PROVISIONAL_FILES:
                t = time.perf_counter()
                built = provisional(b, previous, changes)
                if built is not None:
                    content, pending = built
                    result = _publish(layout, content, b, "candidate", check, scope, part)
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
            follow = relink.following(b, previous, scope, part, before, declared)
        emit(Progress("analyzers", "*", _analyzers_ran(route) + follow.describe(), 1, 1))
        if follow.relink:  # bound again against the new interfaces, without their analyzers (indexer.relink)
            assert scope is not None and part is not None
            part = part | frozenset(follow.relink)
            b, check = _relinked(loaded, cache, emit, timer, previous, scope, part, follow, mode)
        else:
            link_phase(b)
            records_phase(b)
        result = _publish(layout, b.content(), b, "exact", check, scope, part)
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
    timer: _Timer,
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


def _declared(b: Build, previous: Generation, changes: ChangeSet) -> set[tuple[str, str]]:
    """(language, name) of each declaration the change adds to a file."""
    declared: set[tuple[str, str]] = set()
    for w in b.work:
        for files in w.facts.values():
            for ff in files:
                if ff.path in changes.changed.get(w.name, ()):
                    before = {sym.name for sym in previous.declarations(w.name, ff.path)}
                    declared |= {(ff.language, sym.name) for sym in ff.symbols if sym.name not in before}
    return declared


def _front_stage(
    loaded: LoadedConfig,
    layout: StateLayout,
    cache: FactCache,
    emit: ProgressFn,
    timer: _Timer,
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
        if why := newly_resolvable(scope, previous, _declared(f, previous, changes)):
            raise _Widen(why)
        built = provisional(f, previous, changes)
        if built is None:
            return None
        content, pending = built
        extra = scope.dangling(content, part)
        if extra:
            part = part | extra
            continue
        result = _publish(layout, content, f, "candidate", check, scope, part)
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
