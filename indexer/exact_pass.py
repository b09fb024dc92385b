"""The exact pass after a language's CANDIDATE resolution: run its analyzer adapter, merge the answers.

Per repository: the adapter's joined facts come from the fact cache (keyed by
every input file's content and the analyzer's identity) or from a fresh
analyzer run; a missing, failing or timed-out analyzer leaves that
repository on the fallback with the reason recorded. Merging keeps every
exact edge and, at each site the analyzer settled (same source, line and
column), drops the candidate edges and unresolved rows there. A candidate
edge is never turned into an exact one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from indexer import interface
from indexer.corpus import Corpus, RepositoryFacts, Resolution
from indexer.fact_cache import FactCache
from indexer.languages.registry import adapter_for
from indexer.languages.spec import AnalyzerFailed, ExactAdapter, ExactOutcome
from snapshot_format import records
from snapshot_format.vocab import DECLARATION_ROWS, Confidence

# How a cache miss is analysed: (adapter, repository, corpus, the cache key of this run, timeout) -> facts.
# The default is the adapter's own whole-repository run; indexer.incremental provides a cheaper route.
AnalyzeFn = Callable[[ExactAdapter[Any], RepositoryFacts, Corpus, bytes, float], Any]


@dataclass
class ExactPass:
    language: str
    analyses: dict[str, records.LanguageAnalysis] = field(default_factory=dict)  # repository -> analysis
    outcomes: list[ExactOutcome] = field(default_factory=list)
    analyzer_version: str = ""
    runs: int = 0
    cache_hits: int = 0
    cross_repository: int = 0
    # (repository, path) -> why the analyzer left the file out (it crashed on it): that file is on the fallback.
    excluded: dict[tuple[str, str], str] = field(default_factory=dict)
    # With ``keep_runs`` (``kivgraph index --bundle``): repository -> the encoded facts it bound, or why its analyzer
    # failed; what a bundle carries so that ``kivgraph publish`` binds them (``given``).
    runs_kept: dict[str, bytes | str] = field(default_factory=dict)
    # repository -> its interface digest for this language (indexer/interface.py)
    interfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    keys: dict[str, bytes] = field(default_factory=dict)  # repository -> the cache key of the facts it bound


def run_exact(
    language: str,
    corpus: Corpus,
    hashes: Mapping[str, Mapping[str, str]],
    fact_cache: FactCache,
    *,
    timeout: float,
    progress: Callable[[str, int, int], None] = lambda _r, _d, _t: None,
    analyze: AnalyzeFn | None = None,
    given: Mapping[str, bytes | str] | None = None,
    keep_runs: bool = False,
    providers: Mapping[str, set[str]] | None = None,
) -> ExactPass | None:
    """Run the language's exact adapter over every repository; None when the language has none.

    ``given`` (``kivgraph publish``): repository -> the encoded facts of the analyzer run its bundle carries, or
    the reason its analyzer failed where the bundle was built; those repositories are bound, never analysed
    here (the analyzer need not be installed on this machine).

    ``providers`` (repository -> the registered repositories it depends on): a consumer's run is cached on its
    providers' interface digests, not on their bytes, where the adapter states interfaces (indexer/interface.py);
    the providers are analysed first. Each repository's interface digest is in ``interfaces``.
    """
    adapter = adapter_for(language)
    if adapter is None:
        return None
    result = ExactPass(language)
    modules = adapter.modules(corpus)
    repos = [r for r in corpus.repositories if r.files]
    keyed = interface.KeyedHashes(
        hashes,
        providers if providers is not None and interface.supports(adapter) else None,
        {r.name: interface.names_of(r)[0] for r in repos},
    )
    done: dict[str, tuple[ExactOutcome | None, records.LanguageAnalysis]] = {}
    for i, repo in enumerate(keyed.order(repos)):  # providers first: a consumer's key reads their interfaces
        started = time.perf_counter()
        progress(repo.name, i, len(repos))
        facts = None
        available = True
        try:
            carried = (given or {}).get(repo.name)
            if isinstance(carried, str):
                raise AnalyzerFailed(carried)
            try:
                identity = adapter.identity() if carried is None else ""
            except AnalyzerFailed:
                available = False
                raise
            key_hashes = keyed.of(repo.name)
            corpus.key_hashes[repo.name] = key_hashes
            key = b"" if carried is not None else adapter.cache_key(repo, key_hashes, identity, corpus)
            blob = carried if carried is not None else fact_cache.get_raw(key)
            if blob is not None:
                try:
                    facts = adapter.decode(blob)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    if carried is not None:
                        raise AnalyzerFailed(f"{adapter.analyzer} facts of another kivgraph's layout") from None
                    blob = None  # a cache entry another layout wrote: analysed again, and the entry replaced
            cached = blob is not None and carried is None
            if carried is None:
                result.keys[repo.name] = key
            if facts is None:
                facts = (
                    analyze(adapter, repo, corpus, key, timeout)
                    if analyze is not None
                    else adapter.analyze(repo, corpus, timeout=timeout)
                )
                blob = adapter.encode(facts)
                fact_cache.put_raw(key, blob, what=f"the {adapter.analyzer} run of {repo.name}")
                result.runs += 1
            if keep_runs and blob is not None:
                result.runs_kept[repo.name] = blob
            result.cache_hits += cached
            for path, fact in adapter.declarations_of(facts):
                corpus.declare(repo.name, path, fact)  # before bind: its uses name them
            failure = adapter.failure_of(facts)
            if failure:  # a failure nothing could salvage, kept for these inputs: not paid again
                raise AnalyzerFailed(failure + (" (cached: the inputs have not changed since)" if cached else ""))
            outcome = adapter.bind(facts, repo.name, corpus, modules)
        except AnalyzerFailed as exc:
            if keep_runs:
                result.runs_kept[repo.name] = str(exc)
            done[repo.name] = (
                None,
                records.LanguageAnalysis(
                    language=language,
                    mode="fallback",
                    analyzer="tree-sitter",
                    reason=f"{adapter.analyzer} failed: {exc}; edges are CANDIDATE",
                    files=len(repo.files),
                    seconds=round(time.perf_counter() - started, 3),
                ),
            )
            continue
        finally:
            own = hashes.get(repo.name, {})
            keyed.known[repo.name] = result.interfaces[repo.name] = interface.entries(
                adapter, facts, repo, own, available=available
            )
        assert facts is not None
        excluded = outcome.excluded
        result.excluded.update(((repo.name, path), why) for path, why in excluded.items())
        name, _, ver = facts.analyzer_version.partition(" ")
        result.analyzer_version = ver or result.analyzer_version
        done[repo.name] = (
            outcome,
            records.LanguageAnalysis(
                language=language,
                mode="exact",
                analyzer=name or adapter.analyzer,
                analyzer_version=ver,
                reason=(
                    f"{facts.analyzer_version}: {len(outcome.edges)} exact edges"
                    + (f", {outcome.cross_repository} to other repositories" if outcome.cross_repository else "")
                    + (_excluded_note(adapter.analyzer, excluded) if excluded else "")
                    + "".join(f"; {note}" for note in outcome.notes)
                    + (" (cached analyzer run)" if cached else "")
                ),
                files=len(repo.files),
                seconds=round(time.perf_counter() - started, 3),
            ),
        )
    for repo in repos:  # in registry order, whichever order they were analysed in
        outcome, analysis = done[repo.name]
        if outcome is not None:
            result.outcomes.append(outcome)
            result.cross_repository += outcome.cross_repository
        result.analyses[repo.name] = analysis
    return result


def _excluded_note(analyzer: str, excluded: Mapping[str, str]) -> str:
    first = min(excluded)
    more = f" and {len(excluded) - 1} more" if len(excluded) > 1 else ""
    return f"; {analyzer} crashed on {first}{more}, left out of its run (their edges are CANDIDATE): {excluded[first]}"


def merge(candidate: Resolution, exact: ExactPass) -> Resolution:
    """Exact edges win at every site the analyzer settled; candidates elsewhere stay candidates."""
    covered: set[tuple[str, int, int]] = set()
    positions: set[tuple[str, str, int, int]] = set()
    pairs: set[tuple[int, str, str]] = set()
    merged = Resolution(package_dependencies=list(candidate.package_dependencies))
    for o in exact.outcomes:
        covered |= o.covered
        positions |= {(o.repository, p, line, col) for p, line, col in o.covered_positions}
        pairs |= {(e.kind, e.source, e.target) for e in o.edges}
    for e in candidate.edges:
        if not Confidence(e.confidence).is_exact and (
            (e.source, e.line, e.col) in covered or (e.kind, e.source, e.target) in pairs
        ):
            continue
        merged.edges.append(e)
    for u in candidate.unresolved:
        # a row about a declaration itself (a call its language makes unnamed) is no use the analyzer settled
        if (u.repository, u.path, u.line, u.col) not in positions or u.reason in DECLARATION_ROWS:
            merged.unresolved.append(u)
    for o in exact.outcomes:
        merged.edges.extend(o.edges)
        merged.unresolved.extend(o.unresolved)
        merged.callable |= o.callable
    return merged
