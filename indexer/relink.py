"""The exact stage of a scoped run runs the changed repository's analyzer alone (issue 24).

A scoped run's exact stage builds ``Scope.front`` (the changed repositories and the providers they use) and
carries every consumer's layer with its edges into them, as the CANDIDATE stage does. A consumer's layer
stays right as long as what it can see of its providers did not change: their interface digests
(indexer/interface.py), compared with the ones the last exact publication left (``interface.recall``).

When a provider's interface changed, each consumer of it is bound again in the same stage (``Following.relink``:
its files and facts from the fact cache, its analyzer's facts those of its last run, bound against the
provider's new declarations, so that a use of a declaration the provider no longer has is an unresolved row
naming it, never a dangling edge) and left ``pending`` (``Following.rerun``); its analyzer runs in a following
stage (indexer.incremental), which the stage's 'analyzers' event and graph_status name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from indexer import interface
from indexer.corpus import Corpus, RepositoryFacts
from indexer.exact_pass import ExactPass
from indexer.fact_cache import FactCache
from indexer.facts import FileFacts
from indexer.languages import registry
from indexer.languages.spec import AnalyzerFailed
from indexer.scope import Scope
from snapshot_format import records
from snapshot_format.reader import Generation

PENDING = "pending"


class _Work(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def root(self) -> Path: ...
    @property
    def facts(self) -> dict[str, list[FileFacts]]: ...
    @property
    def hashes(self) -> dict[str, str]: ...


class Build(Protocol):
    """What this module reads of an index run's ``indexer.pipeline.Build`` (the pipeline is not imported here:
    it runs the stages that call this module)."""

    @property
    def work(self) -> Sequence[_Work]: ...
    @property
    def fact_cache(self) -> FactCache: ...
    @property
    def exact_passes(self) -> dict[str, ExactPass]: ...
    @property
    def given(self) -> dict[str, dict[str, bytes | str]]: ...


CorpusOf = Callable[[Any, str], Corpus]


def _repo_facts(b: Build, language: str, name: str) -> RepositoryFacts | None:
    w = next((w for w in b.work if w.name == name), None)
    if w is None or language not in w.facts:
        return None
    return RepositoryFacts(w.name, str(w.root), w.facts[language])


def interfaces_now(b: Build) -> dict[tuple[str, str], list[interface.Entry]]:
    """(language, repository) -> its interface in this build (after resolve_phase)."""
    out: dict[tuple[str, str], list[interface.Entry]] = {}
    for w in b.work:
        for language in w.facts:
            exact = b.exact_passes.get(language)
            if exact is not None and w.name in exact.interfaces:
                out[(language, w.name)] = exact.interfaces[w.name]
                continue
            repo = _repo_facts(b, language, w.name)
            if repo is not None and repo.files:
                # no analyzer for the language: its declarations are what a consumer's resolver reads
                own = {ff.path: w.hashes.get(ff.path, "") for ff in repo.files}
                out[(language, w.name)] = interface.entries(None, None, repo, own)
    return out


def recalled(b: Build) -> dict[tuple[str, str], interface.Remembered | None]:
    """(language, repository) -> its interface as the last exact publication left it (None: not known)."""
    return {
        (language, w.name): interface.recall(b.fact_cache, language, w.name, str(w.root))
        for w in b.work
        for language in w.facts
    }


def remember(b: Build, corpus_of: CorpusOf, skip: Iterable[str] = ()) -> None:
    """Keep each repository's interface, the names it writes, the key of the facts it bound and its analyzer
    inputs of its own, after an exact publication."""
    left = set(skip)
    keys = own_keys(b, corpus_of)
    for (language, name), value in interfaces_now(b).items():
        if name in left:
            continue
        w = next(w for w in b.work if w.name == name)
        exact = b.exact_passes.get(language)
        facts = exact.keys.get(name, b"") if exact is not None else b""
        names, star = interface.names_of(RepositoryFacts(name, str(w.root), w.facts.get(language, [])))
        record = interface.Remembered(
            [tuple(e) for e in value],  # type: ignore[misc]
            sorted(names),
            star,
            facts,
            keys.get((language, name), b""),
        )
        interface.remember(b.fact_cache, language, name, str(w.root), record)


def own_keys(b: Build, corpus_of: CorpusOf) -> dict[tuple[str, str], bytes]:
    """(language, repository) -> its analyzer's cache key over its own files alone (no provider's): what
    ``kivgraph index`` compares to find a repository whose analyzer inputs changed (go.mod, a tsconfig, the
    analyzer) without counting a provider's edit as its own."""
    out: dict[tuple[str, str], bytes] = {}
    for language in sorted({lang for w in b.work for lang in w.facts}):
        adapter = registry.adapter_for(language)
        if adapter is None:
            continue
        try:
            identity = adapter.identity()
        except AnalyzerFailed:
            continue
        corpus = corpus_of(b, language)
        for repo in corpus.repositories:
            if repo.files:
                w = next(w for w in b.work if w.name == repo.name)
                own = {ff.path: w.hashes.get(ff.path, "") for ff in repo.files}
                out[(language, repo.name)] = adapter.cache_key(repo, {repo.name: own}, identity, corpus)
    return out


@dataclass
class Following:
    """What the exact stage of the front does about the consumers it carries."""

    changed: dict[str, list[str]] = field(default_factory=dict)  # front repository -> languages whose interface changed
    relink: set[str] = field(default_factory=set)  # consumers bound again in this stage
    rerun: dict[str, list[str]] = field(default_factory=dict)  # consumer -> languages whose analyzer runs next
    why: dict[str, str] = field(default_factory=dict)  # consumer -> which providers' interfaces changed

    def describe(self) -> str:
        if not self.rerun:
            return ""
        parts = []
        for name in sorted(self.rerun):
            analyzers = [a.analyzer for lang in self.rerun[name] if (a := registry.adapter_for(lang)) is not None]
            parts.append(f"{'+'.join(analyzers) or 'its analyzer'} on {name} ({self.why[name]})")
        return "; next: " + ", ".join(parts)


def following(
    b: Build,
    previous: Generation,
    scope: Scope,
    part: frozenset[str],
    before: dict[tuple[str, str], interface.Remembered | None],
    declared: Iterable[tuple[str, str]] = (),
) -> Following:
    """Which carried consumers must be bound again now, and which of them analysed again in a following stage.

    A consumer sees of a changed repository the entries of its interface under the names the consumer's files
    write (``interface.seen_by``): a declaration added that it does not name, a body edited, change nothing it
    sees; a signature, an inferred type, a member of a type it uses, a declaration it names removed, do."""
    out = Following()
    now = interfaces_now(b)
    changed: dict[tuple[str, str], tuple[list[interface.Entry] | None, list[interface.Entry] | None]] = {}
    for key in set(now) | {k for k, v in before.items() if v is not None}:
        language, name = key
        if name not in scope.changed:
            continue
        old = before.get(key)
        old_entries = [tuple(e) for e in old.entries] if old is not None else None
        if old_entries is None or sorted(old_entries) != sorted(now.get(key, [])):
            changed[key] = (old_entries, now.get(key))  # type: ignore[assignment]
    for _language, name in changed:
        out.changed.setdefault(name, []).append(_language)
    uses: dict[str, set[str]] = {}  # consumer -> the front repositories it uses
    for d in scope.deps:
        uses.setdefault(d.consumer_repository, set()).add(d.provider_repository)
    for _edge, src, dst in scope.edges:
        uses.setdefault(src, set()).add(dst)
    carried = [n for n in scope.order if n in scope.rebuilt and n not in part]
    roots = {r.name: r.root for r in scope.records.values()}
    analyse: set[str] = set()  # of the consumers bound again, those whose analysis can differ
    for name in carried:
        seen: list[str] = []
        exported: list[str] = []
        for (language, provider), (old_e, new_e) in sorted(changed.items()):
            if provider not in uses.get(name, ()):
                continue
            mine = interface.recall(b.fact_cache, language, name, roots.get(name, ""))
            if old_e is None or new_e is None or mine is None:
                seen.append(provider)  # not known what it saw: bound again
            elif interface.seen_by(old_e, mine.seen) != interface.seen_by(new_e, mine.seen):
                seen.append(provider)
            elif mine.everything:  # it imports the provider's module whole: one more name it re-exports
                exported.append(provider)
        if seen:
            out.relink.add(name)
            analyse.add(name)
            out.why[name] = f"the interface of {', '.join(sorted(set(seen)))} changed"
        elif exported:
            out.relink.add(name)
            out.why[name] = f"it imports the whole of {', '.join(sorted(set(exported)))}, whose declarations changed"
    # a carried repository that failed to resolve a name the change declares anew may resolve it now
    for language, name in declared:
        for row in previous.unresolved_by_name(name):
            if row.repository in carried and row.repository not in analyse and row.language == language:
                out.relink.add(row.repository)
                analyse.add(row.repository)
                out.why[row.repository] = f"it did not resolve {name!r}, which the change declares"
    for name in sorted(analyse):
        record = scope.records.get(name)
        exact = [
            a.language
            for a in (record.analyses if record is not None else ())
            if a.mode in ("exact", PENDING) and registry.adapter_for(a.language) is not None
        ]
        if exact:
            out.rerun[name] = exact
    return out


def old_runs(b: Build, rerun: dict[str, list[str]]) -> None:
    """Each consumer to analyse again later is bound now with its last run's facts (``Build.given``), when the fact
    cache still holds them; else its analysis is deferred (CANDIDATE until the following stage)."""
    for name, languages in rerun.items():
        w = next((w for w in b.work if w.name == name), None)
        if w is None:
            continue
        for language in languages:
            record = interface.recall(b.fact_cache, language, name, str(w.root))
            raw = b.fact_cache.peek(record.facts) if record is not None and record.facts else None
            b.given.setdefault(language, {})[name] = (
                raw if raw is not None else "deferred: its analyzer runs in the following stage"
            )


def mark_pending(b: Build, f: Following) -> None:
    """Each consumer analysed again in the following stage is ``pending`` until then (status says why)."""
    for name, languages in f.rerun.items():
        for language in languages:
            exact = b.exact_passes.get(language)
            if exact is None or name not in exact.analyses:
                continue
            adapter = registry.adapter_for(language)
            analyzer = adapter.analyzer if adapter is not None else "its analyzer"
            was = exact.analyses[name]
            exact.analyses[name] = records.LanguageAnalysis(
                language=language,
                mode=PENDING,
                analyzer=analyzer,
                analyzer_version=was.analyzer_version,
                reason=(
                    f"exact analysis pending: {f.why[name]} since {analyzer} analysed {name}; its uses are bound "
                    f"against the new declarations with its last run's facts until {analyzer} runs again, in the "
                    "stage that follows"
                ),
                files=was.files,
            )
