"""The fingerprint of a run's inputs: what a generation is a function of, and whether CURRENT is already it.

Every registered file is read and hashed (content decides, never mtimes), then the run's inputs are
fingerprinted (``run_inputs``): configuration, each repository's files and hashes, git commit/branch/dirty,
extractor versions and each exact analyzer's own cache key (its inputs: go.mod, tsconfig, providers' files, the
analyzer's identity). ``unchanged`` says when CURRENT is the intact generation a complete run published from
the same fingerprint (``remember`` records it in the fact cache); the staleness check computes the
fingerprint again before a result is kept or published (``indexer.staleness``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgspec

from indexer import __version__
from indexer.code_identity import code_digest
from indexer.fact_cache import FactCache
from indexer.languages import registry
from indexer.languages.spec import AnalyzerFailed
from indexer.pipeline import Build, corpus_for
from indexer.publish import PublishResult
from snapshot_format.errors import SnapshotError
from snapshot_format.reader import Generation
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION

_PUBLISHED_KEY = hashlib.blake2b(b"kivgraph:published-inputs", digest_size=20).digest()


class PublishedInputs(msgspec.Struct, frozen=True):
    """What the last complete (exact) publication was built from: a fact-cache bookkeeping record."""

    generation: str
    digest: str
    inputs: str


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
        hashes = language_hashes(b, language)
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


def language_hashes(b: Build, language: str) -> dict[str, dict[str, str]]:
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
