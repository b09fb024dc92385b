"""The parts of a run's stages (``indexer.run`` drives them): what changed since the previous generation, the
CANDIDATE generation built in front of the exact pass, and the exact pass's route through each analyzer.

- **What changed** (``change_set``, ``changed_names``, ``dependents``): files whose content, declarations or
  uses differ from the previous generation's, and the files that reference a name the change declared,
  removed or altered.
- **The CANDIDATE stage** (``provisional``): the changed files and their dependents re-extracted and
  re-resolved by the CANDIDATE resolver; every other file keeps what the previous generation holds for it
  (its EXACT edges, its candidates, its unresolved rows) and is ``pending`` (``File.analysis``).
- **The exact route** (``ExactRoute``): only the affected part where the analyzer allows it
  (``ExactAdapter.update``), a whole run every ``RECONCILE_EVERY``-th time, the tree read again before
  facts are kept (``indexer.staleness``).
"""

from __future__ import annotations

import collections
import copy
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from indexer import staleness, supersede
from indexer.corpus import Corpus, RepositoryFacts, Resolution
from indexer.exact_pass import merge, run_exact
from indexer.fact_cache import FactCache, FactCacheDisagreement, cache_key
from indexer.facts import EdgeFact, FileFacts, UnresolvedFact
from indexer.fingerprint import language_hashes
from indexer.interface import providers_of
from indexer.languages import registry
from indexer.languages.spec import AnalyzerFailed, ExactAdapter
from indexer.pipeline import Build, candidate_resolution, corpus_for, link_phase, records_phase
from indexer.progress import Heartbeat, Progress
from indexer.publish import GenerationContent
from snapshot_format import records
from snapshot_format.reader import Generation

# A change set larger than this is a rebuild, not an edit: no CANDIDATE stage in front of it.
MAX_PROVISIONAL_FILES = 64
PENDING = "pending"  # File.analysis and LanguageAnalysis.mode of a file whose exact analysis is pending


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
            language_hashes(s, language),
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
        hashes = language_hashes(self.b, corpus.language)
        own = hashes.get(repo.name, {})
        base = corpus.key_hashes.get(repo.name, hashes)  # its providers' interfaces, as its key read them
        env = adapter.cache_key(repo, {**base, repo.name: {}}, adapter.identity(), corpus)
        record_key = _last_run_key(corpus.language, repo.name, repo.root)
        last = last_run(cache, corpus.language, repo.name, repo.root)
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


def last_run(cache: FactCache, language: str, repository: str, root: str) -> LastRun | None:
    """What the fact cache holds of the repository's last analyzer run (None: nothing, or of another layout)."""
    return _decode(cache.peek(_last_run_key(language, repository, root)), LastRun)


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


def declared(b: Build, previous: Generation, changes: ChangeSet) -> set[tuple[str, str]]:
    """(language, name) of each declaration the change adds to a file."""
    declared: set[tuple[str, str]] = set()
    for w in b.work:
        for files in w.facts.values():
            for ff in files:
                if ff.path in changes.changed.get(w.name, ()):
                    before = {sym.name for sym in previous.declarations(w.name, ff.path)}
                    declared |= {(ff.language, sym.name) for sym in ff.symbols if sym.name not in before}
    return declared
