"""The lexical index stored in each generation for find_by_intent: BM25 postings per term.

A document is a file. Its terms come from four fields with weights
(snapshot_format.lexical.FIELD_WEIGHTS): the path, the names of its
declarations, their docstrings, and the whole text (comments, strings and
identifiers used). Per-file term counts depend only on the file's bytes and
path, so they are cached in the fact cache.
"""

from __future__ import annotations

import collections
import hashlib

import msgspec

from indexer.facts import FileFacts
from snapshot_format import keys
from snapshot_format.lexical import (
    FIELD_WEIGHTS,
    LEXICAL_VERSION,
    encode_document,
    encode_postings,
    encode_stats,
    terms,
)

MAX_TERM_CHARS = 100  # at most 400 bytes of UTF-8: under LMDB's 511-byte key limit


def lexical_cache_key(path: str, content_hash: str) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    h.update(f"lexical\0{LEXICAL_VERSION}\0{path}\0{content_hash}".encode())
    return h.digest()


def file_terms(path: str, text: str, facts: FileFacts | None) -> dict[str, int]:
    """Weighted term counts (x100, integers) of one file."""
    counts: collections.Counter[str] = collections.Counter()
    for field, source in (("path", [path]), ("body", [text])):
        weight = int(FIELD_WEIGHTS[field] * 100)
        for chunk in source:
            for term in terms(chunk):
                counts[term] += weight
    if facts is not None:
        name_w, doc_w = int(FIELD_WEIGHTS["name"] * 100), int(FIELD_WEIGHTS["doc"] * 100)
        for sym in facts.symbols:
            if sym.kind == "module":
                continue
            for term in terms(sym.name):
                counts[term] += name_w
            if sym.doc:
                for term in terms(sym.doc):
                    counts[term] += doc_w
    return dict(counts)


class LexiconBuilder:
    """Collects per-file term counts and renders the lexicon sub-databases."""

    def __init__(self) -> None:
        self._docs: list[tuple[str, str, str, int]] = []
        self._postings: dict[str, list[int]] = collections.defaultdict(list)

    def add(self, repository: str, path: str, language: str, counts: dict[str, int]) -> None:
        doc = len(self._docs)
        self._docs.append((repository, path, language, sum(counts.values())))
        for term, weight in counts.items():
            # A term is a key: a long one (a 900 KB string literal is one "word") would exceed LMDB's key
            # limit and fail the whole publication; nobody searches for it, so it is not indexed.
            if len(term) <= MAX_TERM_CHARS:
                self._postings[term] += (doc, weight)

    def items(self) -> dict[bytes, list[tuple[bytes, bytes]]]:
        """(key, value) pairs for the lexicon sub-databases and the meta stats."""
        lexicon = [(keys.text(t), encode_postings(p)) for t, p in self._postings.items() if t and "\0" not in t]
        docs = [(keys.lexicon_doc_key(i), encode_document(*d)) for i, d in enumerate(self._docs)]
        avg = sum(d[3] for d in self._docs) / max(len(self._docs), 1)
        stats = encode_stats(len(self._docs), int(avg))
        return {keys.DB_LEXICON: lexicon, keys.DB_LEXICON_DOCS: docs, keys.DB_META: [(keys.META_LEXICON_STATS, stats)]}


def decode_counts(raw: bytes) -> dict[str, int]:
    return msgspec.msgpack.decode(raw, type=dict[str, int])


def encode_counts(counts: dict[str, int]) -> bytes:
    """Fact-cache bytes of one file's term counts (indexer-private, not part of a generation)."""
    return msgspec.msgpack.encode(counts)
