"""The index pipeline: discover → extract (fact cache) → resolve → link → publish."""

from __future__ import annotations

import collections
import concurrent.futures
import hashlib
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from indexer import __version__
from indexer.config import LoadedConfig, Repository
from indexer.corpus import Corpus, RepositoryFacts, Resolution
from indexer.discover import Candidate, Discovery, discover
from indexer.exact_pass import AnalyzeFn, ExactPass, merge, run_exact
from indexer.fact_cache import FactCache, cache_key
from indexer.facts import FileFacts, SymbolFact, UnresolvedFact
from indexer.faults import fault_point
from indexer.gitstate import GitState, read_git_state
from indexer.interface import providers_of
from indexer.languages import registry
from indexer.lexicon import LexiconBuilder, decode_counts, encode_counts, file_terms, lexical_cache_key
from indexer.progress import Progress, ProgressFn
from indexer.publish import GenerationContent
from indexer.scip import external as scip_external
from indexer.scip.external import ExternalIndex
from snapshot_format import records
from snapshot_format.reader import Generation
from snapshot_format.stable_key import stable_key
from snapshot_format.vocab import SYNTAX_ONLY_PROVENANCES, Confidence, Provenance


@dataclass
class LanguageCounters:
    files: int = 0
    parse_failed: int = 0
    partial: int = 0  # a syntax error: extracted outside the lines that do not parse
    skipped: int = 0
    symbols: int = 0
    edges: int = 0
    unresolved: int = 0
    cache_hits: int = 0
    extracted: int = 0
    mode: str = ""
    analyzer_runs: int = 0
    analyzer_cache_hits: int = 0
    analyzer_incremental: int = 0  # of the runs, those that re-analysed only what a change could affect


class Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = collections.defaultdict(float)

    def add(self, phase: str, started: float) -> None:
        self.timings[phase] += time.perf_counter() - started


@dataclass
class RepoWork:
    name: str
    root: Path
    languages: tuple[str, ...]
    discovery: Discovery
    facts: dict[str, list[FileFacts]] = field(default_factory=dict)  # language -> files
    hashes: dict[str, str] = field(default_factory=dict)  # path -> sha256
    # Carried over from the previous generation (index --repository other): not re-read from disk.
    carried: records.Repository | None = None
    known_hashes: dict[str, str] = field(default_factory=dict)
    problem: str = ""  # why the repository could not be read at all
    # The SCIP index the repository names (indexer.scip.external), and the files of languages without a grammar
    # whose declarations come from it.
    external: ExternalIndex | None = None
    external_files: list[Candidate] = field(default_factory=list)
    external_problem: str = ""


def git_state_of(w: RepoWork) -> GitState:
    """Commit, branch and dirty flag to record: carried over, none for a repository that cannot be read, else git's."""
    if w.carried:
        return GitState(w.carried.commit, w.carried.branch, w.carried.dirty)
    return GitState() if w.problem else read_git_state(w.root)


def _extension_map(languages: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for lang in languages:
        for ext in registry.EXTENSIONS.get(lang, ()):
            out[ext] = lang
    return out


def symbol_key(language: str, repository: str, path: str, package: str, qualified_name: str, kind: str) -> str:
    """The stable key recipe every language shares: the file path is the module part."""
    return stable_key(
        language=language,
        repository=repository,
        package=package,
        module=path,
        qualified_name=qualified_name,
        kind=kind,
        discriminator="",
    )


def _carried_discovery(previous: Generation, name: str) -> tuple[Discovery, dict[str, str]]:
    """The file list and content hashes a repository had in the previous generation."""
    found = Discovery()
    hashes: dict[str, str] = {}
    for f in previous.files(name):
        found.files.append(Candidate(f.path, f.language, f.size, f.reason if f.status == "skipped" else ""))
        if f.content_hash:
            hashes[f.path] = f.content_hash
    return found, hashes


def _extract_with_terms(job: tuple[str, str, bytes, str]) -> tuple[FileFacts, dict[str, int]]:
    """Extraction plus lexical terms of one file (runs in a worker process for large cold indexes)."""
    language, path, data, package = job
    module = registry.module_for(language)
    assert module is not None
    facts = module.extract(path, data, package)
    return facts, file_terms(path, data.decode("utf-8", "replace"), facts)


class ParallelExtractor:
    """Extracts cache misses in worker processes when there are enough of them to repay the pool.

    Extraction is pure Python over tree-sitter trees, so threads would not help; on two cores a
    forked pool roughly halves a cold extraction of a hundred files or more.
    """

    MIN_FILES = 48

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.workers = min(os.cpu_count() or 1, 8)

    def run(self, language: str, jobs: list[tuple[str, bytes, str]]) -> list[tuple[FileFacts, dict[str, int]]]:
        """(facts, terms) for each (path, bytes, package), in order."""
        work = [(language, path, data, package) for path, data, package in jobs]
        if len(work) < self.MIN_FILES or self.workers < 2:
            return [_extract_with_terms(job) for job in work]
        if self._pool is None:
            # fork: the workers inherit the imported grammars instead of importing them again.
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("fork")
            )
        chunk = max(1, len(work) // (self.workers * 4))
        return list(self._pool.map(_extract_with_terms, work, chunksize=chunk))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


@dataclass
class Build:
    """What the phases of one index run share: its inputs, then what each phase adds (in phase order)."""

    loaded: LoadedConfig
    fact_cache: FactCache
    progress: ProgressFn
    timer: Timer
    only: frozenset[str] | None = None
    previous: Generation | None = None
    counters: dict[str, LanguageCounters] = field(default_factory=lambda: collections.defaultdict(LanguageCounters))
    # discover_phase
    work: list[RepoWork] = field(default_factory=list)
    # extract_phase
    lexicon: LexiconBuilder = field(default_factory=LexiconBuilder)
    # key_phase (resolve_phase adds the declarations only an analyzer saw)
    symbols: list[records.Symbol] = field(default_factory=list)
    key_index: dict[tuple[str, str, str, str], str] = field(default_factory=dict)
    unresolved: list[records.Unresolved] = field(default_factory=list)
    per_file_symbols: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    # Filled in front of resolve_phase by whoever knows them (indexer.run): git state per repository,
    # and the exact pass's analyze step (an incremental route); records_phase and run_exact fall back to theirs.
    git: dict[str, GitState] = field(default_factory=dict)
    analyze: AnalyzeFn | None = None
    # Filled by indexer.link for bundles: language -> repository -> the analyzer run the bundle carries (or why it
    # failed there); ``installed`` for a bundle build (Corpus.installed).
    given: dict[str, dict[str, bytes | str]] = field(default_factory=dict)
    installed: bool = False
    keep_runs: bool = False  # ExactPass.runs_kept, for a bundle
    # resolve_phase (candidate resolutions are kept per language: a second stage reuses them)
    languages: list[str] = field(default_factory=list)
    candidates: dict[str, tuple[int, Resolution]] = field(default_factory=dict)
    resolutions: list[Resolution] = field(default_factory=list)
    exact_passes: dict[str, ExactPass] = field(default_factory=dict)
    external_outcomes: dict[str, scip_external.ExternalOutcome] = field(default_factory=dict)
    # link_phase
    edges: list[records.Edge] = field(default_factory=list)
    deps: dict[tuple[str, str, str, str], records.PackageDependency] = field(default_factory=dict)
    language_of: dict[str, str] = field(default_factory=dict)
    # records_phase
    file_records: list[records.File] = field(default_factory=list)
    repositories: list[records.Repository] = field(default_factory=list)

    def content(self) -> GenerationContent:
        """The generation the phases built."""
        return GenerationContent(
            repositories=self.repositories,
            files=self.file_records,
            symbols=self.symbols,
            edges=self.edges,
            unresolved=self.unresolved,
            package_dependencies=list(self.deps.values()),
            analyzers={
                **{f"tree-sitter-{lang}": module_version(lang) for lang in self.languages},
                **{f"exact-{lang}": p.analyzer_version for lang, p in self.exact_passes.items() if p.analyzer_version},
            },
            derived=self.lexicon.items(),
        )


def discover_phase(b: Build) -> None:
    """Find each repository's files, or carry its file list over from the previous generation."""
    loaded, previous, only, progress, timer = b.loaded, b.previous, b.only, b.progress, b.timer
    work = b.work
    n_repos = len(loaded.repositories)
    for i, repo in enumerate(loaded.repositories):
        started = time.perf_counter()
        prev_repo = previous.repository(repo.name) if previous is not None and only is not None else None
        if prev_repo is not None and repo.name not in only:  # type: ignore[operator]
            assert previous is not None
            found, known = _carried_discovery(previous, repo.name)
            work.append(RepoWork(repo.name, repo.root, repo.languages, found, carried=prev_repo, known_hashes=known))
            progress(Progress("discover", repo.name, f"{len(found.indexable)} files (carried over)", i + 1, n_repos))
            continue
        fault_point("discover")
        if repo.problem:  # moved or deleted: a failure of this repository only, recorded with the reason
            work.append(RepoWork(repo.name, repo.root, repo.languages, Discovery(), problem=repo.problem))
            progress(Progress("discover", repo.name, f"skipped: {repo.problem}", i + 1, n_repos))
            continue
        found = discover_repository(repo, loaded.indexing.max_file_bytes)
        timer.add("discover", started)
        work.append(RepoWork(repo.name, repo.root, repo.languages, found))
        progress(Progress("discover", repo.name, f"{len(found.indexable)} files", i + 1, n_repos))


def discover_repository(repo: Repository, max_file_bytes: int) -> Discovery:
    """One repository's files as a run reads them (the staleness check reads them again the same way)."""
    found = discover(repo.root, _extension_map(repo.languages), exclude=repo.exclude, max_file_bytes=max_file_bytes)
    # Hook (issue 11): TypeScript build outputs of the repository's own sources are skipped as generated.
    if not repo.include_build_outputs:  # a language's own build outputs are not sources
        specs = {s.name: s for s in map(registry.spec_for, repo.languages) if s is not None}
        for spec in specs.values():
            found = spec.mark_build_outputs(repo.root, found)
    return found


def extract_phase(b: Build) -> None:
    """Extract every file through the fact cache (misses in worker processes), with its lexical terms."""
    work, counters, fact_cache, progress, timer = b.work, b.counters, b.fact_cache, b.progress, b.timer
    lexicon = b.lexicon
    extractor = ParallelExtractor()
    for w in work:
        started = time.perf_counter()
        by_lang: dict[str, list[str]] = collections.defaultdict(list)
        for cand in w.discovery.indexable:
            by_lang[cand.language].append(cand.path)
        total = sum(len(v) for v in by_lang.values())
        done = 0
        for language, paths in by_lang.items():
            module = registry.module_for(language)
            if module is None:
                continue
            all_paths = frozenset(paths)
            out = w.facts.setdefault(language, [])
            # Optional hook: a module that needs the repository root (Go: go.mod) defines package_for_root.
            package_for_root = getattr(module, "package_for_root", None)
            slots: list[FileFacts | None] = []
            lex: list[dict[str, int] | None] = []
            misses: list[tuple[int, str, str, bytes, bytes, bytes]] = []  # (slot, path, package, data, key, lex key)
            for path in paths:
                fault_point("extract")
                package = (
                    package_for_root(w.root, path, all_paths)
                    if package_for_root is not None
                    else module.package_for(path, all_paths)
                )
                data: bytes | None = None
                digest = w.known_hashes.get(path, "")
                facts = None
                if digest:
                    key = cache_key(language, module.EXTRACTOR_VERSION, path, package, digest)
                    facts = fact_cache.get(key)
                if facts is None:
                    data = (w.root / path).read_bytes()
                    digest = hashlib.sha256(data).hexdigest()
                    key = cache_key(language, module.EXTRACTOR_VERSION, path, package, digest)
                    facts = fact_cache.get(key)
                w.hashes[path] = digest
                lex_key = lexical_cache_key(path, digest)
                raw_counts = fact_cache.get_raw(lex_key)
                slots.append(facts)
                lex.append(decode_counts(raw_counts) if raw_counts is not None else None)
                if facts is None or raw_counts is None:
                    if data is None:
                        data = (w.root / path).read_bytes()
                    misses.append((len(slots) - 1, path, package, data, key, lex_key))
                else:
                    counters[language].cache_hits += 1
            fresh_results = extractor.run(language, [(m[1], m[3], m[2]) for m in misses])
            for (slot, path, _package, _data, key, lex_key), (fresh, counts) in zip(misses, fresh_results, strict=True):
                if slots[slot] is None:
                    fact_cache.check(key, fresh)
                    fact_cache.put(key, fresh)
                    slots[slot] = fresh
                    counters[language].extracted += 1
                else:
                    counters[language].cache_hits += 1
                if lex[slot] is None:
                    fact_cache.put_raw(lex_key, encode_counts(counts), what=f"the lexical terms of {w.name}:{path}")
                    lex[slot] = counts
            for path, facts, counts in zip(paths, slots, lex, strict=True):
                assert facts is not None and counts is not None
                out.append(facts)
                lexicon.add(w.name, path, language, counts)
            done += len(paths)
            progress(Progress("extract", w.name, f"{done}/{total} files", done, total))
        timer.add("extract", started)
    extractor.close()
    fact_cache.flush()
    external_declarations(b)


def external_declarations(b: Build) -> None:
    """Read each SCIP index a repository names; its files of languages without a grammar get its declarations."""
    named = {r.name: r.scip for r in b.loaded.repositories}
    for w in b.work:
        where = named.get(w.name)
        if where is None or w.problem or w.carried:
            continue
        started = time.perf_counter()
        try:
            w.external = scip_external.load(w.name, w.root, where)
        except scip_external.ExternalIndexError as exc:
            w.external_problem = str(exc)
            continue
        w.hashes[f"\0scip:{where}"] = hashlib.sha256(where.read_bytes()).hexdigest()
        extracted = {ff.path for files in w.facts.values() for ff in files}
        for doc in sorted(w.external.index.documents, key=lambda d: d.relative_path):
            path = w.external.document_path(doc)
            file = w.root / path
            if path in extracted or not file.is_file() or ".." in Path(path).parts:
                continue
            source = file.read_bytes()
            facts = scip_external.index_only_facts(w.external, doc, path, source)
            w.facts.setdefault(facts.language, []).append(facts)
            w.hashes[path] = hashlib.sha256(source).hexdigest()
            w.external_files.append(Candidate(path, facts.language, len(source)))
            extracted.add(path)
            if facts.language not in w.languages:
                w.languages = (*w.languages, facts.language)
        b.timer.add("external_index", started)


def external_edges(b: Build) -> None:
    """The named SCIP indexes' occurrences as EXACT edges: they replace every other answer at the sites they cover."""
    indexes = [w for w in b.work if w.external is not None]
    if not indexes:
        return
    started = time.perf_counter()
    files = {(w.name, ff.path): ff for w in b.work for fs in w.facts.values() for ff in fs}
    sources: dict[tuple[str, str], bytes] = {}
    defined: dict[str, tuple[str, str, SymbolFact]] = {}
    for w in indexes:
        assert w.external is not None
        own = {p: ff for (r, p), ff in files.items() if r == w.name}
        text = {}
        for doc in w.external.index.documents:
            path = w.external.document_path(doc)
            if path in own:
                try:
                    text[path] = sources[(w.name, path)] = (w.root / path).read_bytes()
                except OSError:
                    continue
        for symbol, found in scip_external.definitions(w.external, own, text).items():
            defined.setdefault(symbol, found)
    key_index = b.key_index
    outcomes = []
    for w in indexes:
        assert w.external is not None
        own = {p: ff for (r, p), ff in files.items() if r == w.name}
        text = {p: s for (r, p), s in sources.items() if r == w.name}
        outcomes.append(
            scip_external.edges_of(
                w.external, own, text, defined, lambda r, p, qn, k: key_index.get((r, p, qn, k)), files
            )
        )
    covered = {c for o in outcomes for c in o.covered}
    positions = {p for o in outcomes for p in o.positions}
    for res in b.resolutions:
        res.edges = [e for e in res.edges if (e.source, e.line, e.col) not in covered]
        res.unresolved = [u for u in res.unresolved if (u.repository, u.path, u.line, u.col) not in positions]
    b.resolutions.append(Resolution(edges=[e for o in outcomes for e in o.edges]))
    b.external_outcomes = {o.repository: o for o in outcomes}
    b.timer.add("external_index", started)


def key_phase(b: Build) -> None:
    """A stable key for every declaration; a PARSE_ERROR row for every file that did not parse."""
    timer = b.timer
    started = time.perf_counter()
    symbols = b.symbols
    key_index = b.key_index
    unresolved = b.unresolved
    per_file_symbols = b.per_file_symbols
    for w in b.work:
        for language, files in w.facts.items():
            for ff in files:
                qn_keys: dict[str, str] = {}
                for sf in ff.symbols:
                    key = symbol_key(language, w.name, ff.path, ff.package, sf.qualified_name, sf.kind)
                    qn_keys.setdefault(sf.qualified_name, key)
                    key_index[(w.name, ff.path, sf.qualified_name, sf.kind)] = key
                for sf in ff.symbols:
                    symbols.append(
                        records.Symbol(
                            key=key_index[(w.name, ff.path, sf.qualified_name, sf.kind)],
                            name=sf.name,
                            qualified_name=sf.qualified_name,
                            kind=sf.kind,
                            language=language,
                            repository=w.name,
                            path=ff.path,
                            start_line=sf.start_line,
                            start_col=sf.start_col,
                            end_line=sf.end_line,
                            end_col=sf.end_col,
                            signature=sf.signature,
                            doc=sf.doc,
                            exported=sf.exported,
                            container=qn_keys.get(sf.container, "") if sf.container else "",
                            package=ff.package,
                            callable=sf.callable,
                        )
                    )
                per_file_symbols[(w.name, ff.path)] = len(ff.symbols)
                if ff.status == "parse_failed":
                    unresolved.append(
                        records.Unresolved(
                            name="",
                            reason="PARSE_ERROR",
                            repository=w.name,
                            path=ff.path,
                            language=language,
                            package=ff.package,
                            detail=ff.reason,
                        )
                    )
    timer.add("link", started)


def corpus_for(b: Build, language: str) -> Corpus:
    """Every repository's files of one language, with the key lookup and the analyzer-declaration hook."""
    key_index = b.key_index
    return Corpus(
        language=language,
        repositories=[RepositoryFacts(w.name, str(w.root), w.facts.get(language, [])) for w in b.work],
        key_of=lambda repo, path, qn, kind: key_index.get((repo, path, qn, kind)),
        declare=AnalyzerDeclarations(language, b.work, key_index, b.symbols, b.per_file_symbols),
        allow_network=b.loaded.allows_network(language),
        installed=b.installed,
    )


def candidate_resolution(b: Build, language: str, corpus: Corpus) -> Resolution:
    """The CANDIDATE resolver's answer for one language (with the blind spots of unparsed lines).

    Computed once per Build while the key table is unchanged: an earlier language's analyzer may declare
    symbols (lines tree-sitter could not parse), and then the resolver runs again over the new table.
    """
    cached = b.candidates.get(language)
    if cached is not None and cached[0] == len(b.key_index):
        return cached[1]
    module = registry.module_for(language)
    assert module is not None
    started = time.perf_counter()
    b.progress(Progress("resolve", "*", language, 0, 1))
    resolution = module.resolve(corpus)
    # Uses on lines that do not parse are blind spots, unless the analyzer settles them below.
    resolution.unresolved.extend(unparsed_rows(b.work, language, b.key_index))
    b.timer.add("resolve", started)
    b.progress(Progress("resolve", "*", language, 1, 1))
    b.candidates[language] = (len(b.key_index), resolution)
    return resolution


def resolve_phase(b: Build) -> None:
    """Per language over the whole corpus: the CANDIDATE resolver, then the exact analyzer site by site."""
    work, counters, progress, timer = b.work, b.counters, b.progress, b.timer
    loaded, fact_cache = b.loaded, b.fact_cache
    resolutions = b.resolutions
    exact_passes = b.exact_passes
    languages = b.languages = sorted({lang for w in work for lang in w.facts})
    for language in languages:
        if registry.module_for(language) is None:
            continue
        corpus = corpus_for(b, language)
        resolution = candidate_resolution(b, language, corpus)
        # 4b. the language's exact analyzer, when it has one: its answers replace candidates site by site
        started = time.perf_counter()
        fault_point("analyze")
        exact = run_exact(
            language,
            corpus,
            {w.name: {p: w.hashes[p] for p in (ff.path for ff in w.facts.get(language, []))} for w in work},
            fact_cache,
            timeout=loaded.indexing.analyzer_timeout_seconds,
            progress=lambda repo, done, total, lang=language: progress(
                Progress(f"analyze.{lang}", repo, "", done, total)
            ),
            analyze=b.analyze,
            given=b.given.get(language),
            keep_runs=b.keep_runs,
            providers=providers_of(resolution.package_dependencies),
        )
        if exact is not None:
            exact_passes[language] = exact
            counters[language].analyzer_runs = exact.runs
            counters[language].analyzer_cache_hits = exact.cache_hits
            resolution = merge(resolution, exact)
            timer.add(f"analyzer.{language}", started)
        resolutions.append(resolution)
    external_edges(b)


def link_phase(b: Build) -> None:
    """Fold repeated edge facts into counted edges; attach unresolved rows and package dependencies."""
    symbols, unresolved = b.symbols, b.unresolved
    started = time.perf_counter()
    language_of = {s.key: s.language for s in symbols}
    folded: dict[tuple[int, str, str, int], list[int]] = {}
    for res in b.resolutions:
        for e in res.edges:
            if Confidence(e.confidence).is_exact and Provenance(e.provenance) in SYNTAX_ONLY_PROVENANCES:
                raise ValueError(f"an exact edge with syntax-only provenance: {e}")
            if e.source not in language_of or e.target not in language_of:
                continue  # the resolver named a declaration that was never extracted
            k = (e.kind, e.source, e.target, e.provenance)
            cur = folded.get(k)
            if cur is None:
                folded[k] = [e.confidence, e.line, e.col, 1]
            else:
                cur[3] += 1
                cur[0] = min(cur[0], e.confidence)
                if (e.line, e.col) < (cur[1], cur[2]):
                    cur[1], cur[2] = e.line, e.col
        for u in res.unresolved:
            unresolved.append(
                records.Unresolved(
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
    edges = [
        records.Edge(
            kind=k[0], source=k[1], target=k[2], confidence=v[0], provenance=k[3], line=v[1], col=v[2], count=v[3]
        )
        for k, v in folded.items()
    ]
    deps: dict[tuple[str, str, str, str], records.PackageDependency] = {}
    for res in b.resolutions:
        for d in res.package_dependencies:
            dk = (d.consumer_repository, d.consumer_package, d.provider_repository, d.provider_package)
            prev = deps.get(dk)
            if prev is None:
                deps[dk] = records.PackageDependency(
                    consumer_repository=d.consumer_repository,
                    consumer_package=d.consumer_package,
                    provider_repository=d.provider_repository,
                    provider_package=d.provider_package,
                    path=d.path,
                    line=d.line,
                )
            else:
                deps[dk] = records.PackageDependency(
                    consumer_repository=prev.consumer_repository,
                    consumer_package=prev.consumer_package,
                    provider_repository=prev.provider_repository,
                    provider_package=prev.provider_package,
                    path=prev.path,
                    line=prev.line,
                    count=prev.count + 1,
                )
    held = set().union(*(res.callable for res in b.resolutions))
    if held:  # what an analyzer's types add to what the extractors saw (records.Symbol.callable)
        b.symbols[:] = [
            msgspec.structs.replace(s, callable=True) if s.key in held and not s.callable else s for s in symbols
        ]
    b.edges, b.deps, b.language_of = edges, deps, language_of
    b.timer.add("link", started)


def records_phase(b: Build) -> None:
    """File and repository records, with each language's counters."""
    work, counters, exact_passes, per_file_symbols = b.work, b.counters, b.exact_passes, b.per_file_symbols
    symbols, edges, unresolved, file_records = b.symbols, b.edges, b.unresolved, b.file_records
    language_of = b.language_of
    started = time.perf_counter()
    for s in symbols:
        counters[s.language].symbols += 1
    for e in edges:
        counters[language_of[e.source]].edges += 1
    for u in unresolved:
        if u.language:
            counters[u.language].unresolved += 1
    repositories = b.repositories
    for w in work:
        facts_by_path = {ff.path: ff for files in w.facts.values() for ff in files}
        n_files = 0
        for cand in [*w.discovery.files, *w.external_files]:
            ff = facts_by_path.get(cand.path)
            counter = counters[cand.language]
            if cand.skip_reason:
                status, reason = "skipped", cand.skip_reason
                counter.skipped += 1
            elif ff is None:
                status, reason = "skipped", f"no {cand.language} extractor in kivgraph {__version__}"
                counter.skipped += 1
            else:
                status, reason = ff.status, ff.reason
                counter.files += 1
                n_files += 1
                if status == "parse_failed":
                    counter.parse_failed += 1
                elif status == "partial":
                    counter.partial += 1
            file_records.append(
                records.File(
                    repository=w.name,
                    path=cand.path,
                    language=cand.language,
                    content_hash=w.hashes.get(cand.path, ""),
                    size=cand.size,
                    status=status,
                    reason=reason,
                    symbols=per_file_symbols.get((w.name, cand.path), 0),
                    package=ff.package if ff else "",
                    analysis=(
                        "exact"
                        if cand in w.external_files
                        else _file_mode(exact_passes, w.name, cand.language, cand.path)
                        if ff
                        else ""
                    ),
                    test=registry.is_test_path(cand.language, cand.path),
                )
            )
        git = b.git.get(w.name) or git_state_of(w)
        analyses = []
        for lang in w.languages:
            module = registry.module_for(lang)
            n = sum(1 for c in w.discovery.indexable if c.language == lang)
            index_only = [c for c in w.external_files if c.language == lang]
            if index_only and not n and w.external is not None and not w.problem:
                counters[lang].mode = "exact" if counters[lang].mode in ("", "exact") else "mixed"
                analyses.append(
                    records.LanguageAnalysis(
                        language=lang,
                        mode="exact",
                        analyzer=w.external.index.metadata.tool_name or "scip",
                        analyzer_version=w.external.index.metadata.tool_version,
                        reason=f"declarations and edges from the SCIP index only (no {lang} grammar in kivgraph)",
                        files=len(index_only),
                    )
                )
                continue
            if w.problem:
                analyses.append(records.LanguageAnalysis(language=lang, mode="failed", reason=w.problem, files=0))
            elif module is None:
                analyses.append(
                    records.LanguageAnalysis(
                        language=lang, mode="failed", reason=f"no {lang} extractor in kivgraph {__version__}", files=n
                    )
                )
            elif lang in exact_passes and w.name in exact_passes[lang].analyses:
                analysis = exact_passes[lang].analyses[w.name]
                counters[lang].mode = analysis.mode if counters[lang].mode in ("", analysis.mode) else "mixed"
                analyses.append(analysis)
            else:
                counters[lang].mode = "fallback" if counters[lang].mode in ("", "fallback") else "mixed"
                skipped = sum(1 for c in w.discovery.files if c.language == lang and c.skip_reason)
                analyses.append(
                    records.LanguageAnalysis(
                        language=lang,
                        mode="fallback",
                        analyzer="tree-sitter",
                        # no file of the language (all of zod's JavaScript is its build): nothing is CANDIDATE
                        reason="no exact analyzer configured: edges are CANDIDATE"
                        if n
                        else f"no {lang} file to analyze ({skipped} skipped)",
                        files=n,
                    )
                )
        if w.external is not None or w.external_problem:
            analyses.append(_external_analysis(w, b.external_outcomes.get(w.name)))
        repositories.append(
            records.Repository(
                name=w.name,
                root=str(w.root),
                languages=w.languages,
                commit=git.commit,
                branch=git.branch,
                dirty=git.dirty,
                files=n_files,
                symbols=sum(per_file_symbols[(w.name, p)] for p in facts_by_path),
                analyses=tuple(analyses),
            )
        )
    b.timer.add("link", started)


def _external_analysis(w: RepoWork, outcome: scip_external.ExternalOutcome | None) -> records.LanguageAnalysis:
    """What status says of a repository's named SCIP index: which, written by what, at which commit, how fresh."""
    if w.external is None:
        return records.LanguageAnalysis(language="scip", mode="failed", reason=w.external_problem, files=0)
    ext = w.external
    index_time = ext.path.stat().st_mtime if ext.path.exists() else 0.0
    documents = [ext.document_path(d) for d in ext.index.documents]
    newer = sum(1 for p in documents if (w.root / p).is_file() and (w.root / p).stat().st_mtime > index_time)
    edges = len(outcome.edges) if outcome is not None else 0
    rel = ext.path.relative_to(w.root).as_posix() if ext.path.is_relative_to(w.root) else str(ext.path)
    reason = (
        f"SCIP index {rel} written by {ext.tool}, commit {ext.commit}: {len(documents)} documents, {edges} exact edges"
        + (
            f", {outcome.cross_repository} to other repositories"
            if outcome is not None and outcome.cross_repository
            else ""
        )
        + (
            f"; {outcome.missing} documents name files the repository does not have"
            if outcome and outcome.missing
            else ""
        )
        + (f"; {newer} files changed since it was written (their answers may be stale)" if newer else "")
    )
    return records.LanguageAnalysis(
        language="scip",
        mode="exact",
        analyzer=ext.index.metadata.tool_name or "scip",
        analyzer_version=ext.index.metadata.tool_version,
        reason=reason,
        files=len(documents),
    )


@dataclass
class AnalyzerDeclarations:
    """Adds the declarations an analyzer defined on lines tree-sitter could not parse (Corpus.declare)."""

    language: str
    work: list[RepoWork]
    key_index: dict[tuple[str, str, str, str], str]
    symbols: list[records.Symbol]
    per_file_symbols: collections.Counter[tuple[str, str]]
    _by_qn: dict[tuple[str, str, str], str] | None = None
    _files: dict[tuple[str, str], FileFacts] | None = None

    def __call__(self, repository: str, path: str, fact: SymbolFact) -> None:
        ident = (repository, path, fact.qualified_name, fact.kind)
        if ident in self.key_index:
            return
        if self._by_qn is None or self._files is None:  # built once, on the first such declaration
            self._by_qn = {(r, p, qn): k for (r, p, qn, _kind), k in self.key_index.items()}
            self._files = {(w.name, f.path): f for w in self.work for f in w.facts.get(self.language, [])}
        ff = self._files.get((repository, path))
        if ff is None:
            return
        key = symbol_key(self.language, repository, path, ff.package, fact.qualified_name, fact.kind)
        self.key_index[ident] = key
        self._by_qn.setdefault((repository, path, fact.qualified_name), key)
        container = self._by_qn.get((repository, path, fact.container), "") if fact.container else ""
        self.symbols.append(
            records.Symbol(
                key=key,
                name=fact.name,
                qualified_name=fact.qualified_name,
                kind=fact.kind,
                language=self.language,
                repository=repository,
                path=path,
                start_line=fact.start_line,
                start_col=fact.start_col,
                end_line=fact.end_line,
                end_col=fact.end_col,
                signature=fact.signature,
                doc=fact.doc,
                exported=fact.exported,
                container=container,
                package=ff.package,
            )
        )
        self.per_file_symbols[(repository, path)] += 1


def unparsed_rows(
    work: list[RepoWork], language: str, key_index: dict[tuple[str, str, str, str], str]
) -> list[UnresolvedFact]:
    """A SYNTAX_ERROR row for each identifier on the lines of a partial file that did not parse.

    Such an identifier may be a call or an import nobody could read: an answer about a symbol of that name
    must not be complete, and names the file. The row's source is the file's module symbol.
    """
    out: list[UnresolvedFact] = []
    for w in work:
        for ff in w.facts.get(language, []):
            if ff.status != "partial" or not ff.unparsed:
                continue
            module = next((s for s in ff.symbols if s.kind == "module"), None)
            source = key_index.get((w.name, ff.path, module.qualified_name, "module"), "") if module else ""
            detail = f"on a line that does not parse ({ff.reason})"
            seen: set[tuple[str, int]] = set()
            for name, line, col in ff.unparsed:
                if (name, line) in seen:
                    continue
                seen.add((name, line))
                out.append(
                    UnresolvedFact(
                        name=name,
                        reason="SYNTAX_ERROR",
                        repository=w.name,
                        path=ff.path,
                        line=line,
                        col=col,
                        language=language,
                        source=source,
                        package=ff.package,
                        detail=detail,
                    )
                )
    return out


def _file_mode(exact_passes: dict[str, ExactPass], repository: str, language: str, path: str = "") -> str:
    exact = exact_passes.get(language)
    analysis = exact.analyses.get(repository) if exact else None
    if exact is not None and (repository, path) in exact.excluded:
        return "fallback"  # the analyzer crashed on this file and ran without it
    return analysis.mode if analysis else "fallback"


def module_version(language: str) -> str:
    module = registry.module_for(language)
    return module.EXTRACTOR_VERSION if module else ""
