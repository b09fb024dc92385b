"""Access per repository: the one place a token's repositories are enforced (docs/surface.md §1.6).

A token limited to some repositories gets, for each call, a ``RepositoryView`` of the leased generation in
place of the generation itself. The view is a ``Generation`` to every query and tool function, and every
reader method is filtered in it: a repository the token cannot read, its files, symbols, edges (an edge is
seen only when both its ends are), unresolved rows, package dependencies and lexicon documents do not
exist for it. Counts and breakdowns are recomputed over what it sees (once per generation and set of
repositories), and so are the lexicon's document count and average length, so a BM25 score is the one a
graph without the hidden repositories would give. Nothing downstream filters anything: a tool cannot
forget to.

Reader methods the view does not define fail (it has no environment of its own): a reader method added
later is refused until it is filtered here (tests/test_access.py holds the list).
"""

from __future__ import annotations

import collections
import hashlib
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import msgspec

from snapshot_format import keys, records
from snapshot_format.lexical import LexiconDocument, LexiconStats
from snapshot_format.manifest import Manifest
from snapshot_format.names import repository_allowed
from snapshot_format.reader import Generation, NameTrie
from snapshot_format.vocab import Confidence, EdgeKind

ACCESS_NOTE = "within the repositories this token can read"


@dataclass(frozen=True)
class Access:
    """Who is calling and what they may see: a token's name, scope and repositories (stdio: everything)."""

    token: str = ""  # the token's name; "" when no token is involved (stdio)
    token_id: str = ""
    scope: str = "index"  # "read" | "index"
    repositories: tuple[str, ...] = ()  # exact names or prefixes ending in "*"; () = every repository

    @property
    def limited(self) -> bool:
        return bool(self.repositories)

    @property
    def may_index(self) -> bool:
        return self.scope == "index"

    def sees(self, repository: str) -> bool:
        return not self.repositories or repository_allowed(self.repositories, repository)

    @cached_property
    def tag(self) -> str:
        """What identifies this view of a generation (caches, cursors): its sorted repository patterns."""
        if not self.repositories:
            return ""
        return hashlib.sha256("\0".join(sorted(self.repositories)).encode()).hexdigest()[:16]


FULL_ACCESS = Access()


def view_of(generation: Generation, access: Access) -> Generation:
    """What ``access`` may read of ``generation``: the generation itself, or its view for a limited token."""
    return RepositoryView(generation, access) if access.limited else generation


def access_tag(gen: Generation) -> str:
    """The view's tag ("" for a whole generation): part of every per-generation cache key and cursor."""
    return gen.access.tag if isinstance(gen, RepositoryView) else ""


def is_limited(gen: Generation) -> bool:
    return isinstance(gen, RepositoryView)


# --- what a view counts (once per generation and tag) ----------------------------------------------------


@dataclass
class _FileTotals:
    counts: records.Counts
    symbols_by_language: tuple[records.CountEntry, ...]
    files_by_language: tuple[records.CountEntry, ...]


@dataclass
class _ViewStats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: _FileTotals | None = None
    counts: records.Counts | None = None
    breakdown: records.Breakdown | None = None
    lexicon: LexiconStats | None = None
    lexicon_read: bool = False


_stats: weakref.WeakKeyDictionary[Generation, dict[str, _ViewStats]] = weakref.WeakKeyDictionary()
_stats_lock = threading.Lock()


def _stats_for(generation: Generation, tag: str) -> _ViewStats:
    with _stats_lock:
        per_tag = _stats.setdefault(generation, {})
        if tag not in per_tag and len(per_tag) >= 64:
            per_tag.clear()  # bounded: a server sees a handful of distinct scopes
        return per_tag.setdefault(tag, _ViewStats())


def _entries(counter: collections.Counter[str]) -> tuple[records.CountEntry, ...]:
    return tuple(records.CountEntry(key=k, count=n) for k, n in sorted(counter.items()) if n)


def _name(code: int, enum: type[EdgeKind] | type[Confidence]) -> str:
    try:
        return enum(code).name
    except ValueError:
        return str(code)


class _SymbolHead(msgspec.Struct, array_like=True, frozen=True):
    """The leading fields of a stored Symbol (trailing array elements are ignored): enough to filter."""

    key: str
    name: str
    qualified_name: str
    kind: str
    language: str
    repository: str


_HEAD = msgspec.msgpack.Decoder(_SymbolHead)


class RepositoryView(Generation):
    """A generation as a token limited to some repositories sees it (see the module docstring)."""

    def __init__(self, inner: Generation, access: Access) -> None:  # no super().__init__: nothing is opened
        self._inner = inner
        self.access = access
        self.path: Path = inner.path
        self.name: str = inner.name
        self._key_seen: dict[bytes, bool] = {}  # raw key -> visible, for this call
        self._doc_seen: dict[int, bool] = {}  # lexical document -> visible, for this call

    # --- identity and lifecycle: the inner generation's -------------------------------------------------

    @property
    def id(self) -> int:
        return self._inner.id

    @property
    def closed(self) -> bool:
        return self._inner.closed

    def close(self) -> None:
        """A view owns nothing: the holder closes the generation."""

    def check_intact(self) -> None:
        self._inner.check_intact()

    def verify_digest(self, *, isolated: bool = False) -> None:
        self._inner.verify_digest(isolated=isolated)

    def lexicon_unusable(self) -> str | None:
        return self._inner.lexicon_unusable()

    @property
    def built_at_ns(self) -> int:
        return self._inner.built_at_ns

    @property
    def feature_version(self) -> int:
        return self._inner.feature_version

    @cached_property
    def manifest(self) -> Manifest:  # type: ignore[override]
        """The manifest of what the view sees: its repositories, their analyzers, its counts."""
        inner = self._inner.manifest
        languages = {lang for r in self.repositories() for lang in r.languages}
        return msgspec.structs.replace(
            inner,
            counts=self.counts(),
            repositories=tuple(r for r in inner.repositories if self.access.sees(r.name)),
            analyzers={k: v for k, v in inner.analyzers.items() if k in languages or k.rsplit("-", 1)[-1] in languages},
        )

    def _sees_key(self, key16: bytes) -> bool:
        known = self._key_seen.get(key16)
        if known is None:
            raw = self._inner.symbol_raw_value(key16)
            known = raw is not None and self.access.sees(_HEAD.decode(raw).repository)
            if len(self._key_seen) > 200_000:
                self._key_seen.clear()
            self._key_seen[key16] = known
        return known

    # --- metadata --------------------------------------------------------------------------------------

    def _file_totals(self) -> _FileTotals:
        stats = _stats_for(self._inner, self.access.tag)
        with stats.lock:
            if stats.files is None:
                by_status: collections.Counter[str] = collections.Counter()
                symbols: collections.Counter[str] = collections.Counter()
                files: collections.Counter[str] = collections.Counter()
                repos = self.repositories()
                for repo in repos:
                    for f in self._inner.files(repo.name):
                        by_status[f.status] += 1
                        if f.status in records.PARSED_STATUSES:
                            files[f.language] += 1
                    for key16 in self._inner.declaration_keys(repo.name):
                        raw = self._inner.symbol_raw_value(key16)
                        if raw is not None:
                            symbols[_HEAD.decode(raw).language] += 1
                counts = records.Counts(
                    repositories=len(repos),
                    files=by_status["indexed"] + by_status["partial"],
                    symbols=sum(symbols.values()),
                    failed_files=by_status["parse_failed"],
                    skipped_files=by_status["skipped"],
                    partial_files=by_status["partial"],
                )
                stats.files = _FileTotals(counts, _entries(symbols), _entries(files))
            return stats.files

    def symbols_by_language(self) -> tuple[records.CountEntry, ...]:
        """The language histogram alone (no edge scan), for the schemas' language enum."""
        return self._file_totals().symbols_by_language

    def _edge_totals(self) -> None:
        stats = _stats_for(self._inner, self.access.tag)
        totals = self._file_totals()
        with stats.lock:
            if stats.counts is not None:
                return
            repos = [r.name for r in self.repositories()]
            visible = {k for r in repos for k in self._inner.declaration_keys(r)}
            by_kind: collections.Counter[str] = collections.Counter()
            by_confidence: collections.Counter[str] = collections.Counter()
            for key16 in visible:
                for kind, other, _prov, confidence in self._inner.neighbours_raw(key16, outgoing=True):
                    if other in visible:
                        by_kind[_name(kind, EdgeKind)] += 1
                        by_confidence[_name(confidence, Confidence)] += 1
            del visible
            reasons: collections.Counter[str] = collections.Counter()
            for r in repos:
                for u in self._inner.unresolved_in(r):
                    reasons[u.reason] += 1
            dependencies = sum(1 for r in repos for _d in self.package_dependencies(r))
            stats.counts = msgspec.structs.replace(
                totals.counts,
                edges=sum(by_kind.values()),
                unresolved=sum(reasons.values()),
                package_dependencies=dependencies,
            )
            stats.breakdown = records.Breakdown(
                edges_by_kind=_entries(by_kind),
                edges_by_confidence=_entries(by_confidence),
                unresolved_by_reason=_entries(reasons),
                symbols_by_language=totals.symbols_by_language,
                files_by_language=totals.files_by_language,
            )

    def counts(self) -> records.Counts:
        self._edge_totals()
        counts = _stats_for(self._inner, self.access.tag).counts
        assert counts is not None
        return counts

    def breakdown(self) -> records.Breakdown:
        self._edge_totals()
        breakdown = _stats_for(self._inner, self.access.tag).breakdown
        assert breakdown is not None
        return breakdown

    def repositories(self) -> list[records.Repository]:
        return [r for r in self._inner.repositories() if self.access.sees(r.name)]

    def repository(self, name: str) -> records.Repository | None:
        return self._inner.repository(name) if self.access.sees(name) else None

    # --- files -----------------------------------------------------------------------------------------

    def file(self, repository: str, path: str) -> records.File | None:
        return self._inner.file(repository, path) if self.access.sees(repository) else None

    def files(self, repository: str, path_prefix: str = "") -> Iterator[records.File]:
        return self._inner.files(repository, path_prefix) if self.access.sees(repository) else iter(())

    # --- symbols ---------------------------------------------------------------------------------------

    def symbol(self, stable_key: str) -> records.Symbol | None:
        found = self._inner.symbol(stable_key)
        return found if found is not None and self.access.sees(found.repository) else None

    def symbol_by_raw(self, key16: bytes) -> records.Symbol | None:
        found = self._inner.symbol_by_raw(key16)
        return found if found is not None and self.access.sees(found.repository) else None

    def symbol_raw_value(self, key16: bytes) -> bytes | None:
        return self._inner.symbol_raw_value(key16) if self._sees_key(key16) else None

    def symbols_by_raw(self, keys16: Iterable[bytes]) -> Iterator[records.Symbol]:
        return (s for s in self._inner.symbols_by_raw(keys16) if self.access.sees(s.repository))

    def symbols_by_qualified_name(
        self, qualified_name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        if repository is not None and not self.access.sees(repository):
            return []
        found = self._inner.symbols_by_qualified_name(qualified_name, repository, path_prefix)
        return [s for s in found if self.access.sees(s.repository)]

    def symbols_by_name(
        self, name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        if repository is not None and not self.access.sees(repository):
            return []
        return [s for s in self._inner.symbols_by_name(name, repository, path_prefix) if self.access.sees(s.repository)]

    def name_keys(self, name: str, repository: str | None = None) -> Iterator[bytes]:
        if repository is not None:
            return self._inner.name_keys(name, repository) if self.access.sees(repository) else iter(())
        head = len(keys.text(name)) + 1
        return (
            k
            for k in self._inner.name_keys(name)
            if self.access.sees(k[head : k.index(keys.SEP, head)].decode("utf-8"))
        )

    @contextmanager
    def name_trie(self) -> Iterator[NameTrie]:
        # The names alone, hidden ones included: a did-you-mean shows a name only with a declaration this token
        # sees (its lookups read through the view); that hidden names share the seek budget is a channel like
        # response time (docs/surface.md §1.6).
        with self._inner.name_trie() as trie:
            yield trie

    def distinct_names(self, name_prefix: str = "") -> Iterator[str]:
        for name in self._inner.distinct_names(name_prefix):
            if next(iter(self.name_keys(name)), None) is not None:
                yield name

    def declarations(self, repository: str, path: str, *, directory: bool = False) -> Iterator[records.Symbol]:
        if not self.access.sees(repository):
            return iter(())
        return self._inner.declarations(repository, path, directory=directory)

    def declaration_keys(self, repository: str) -> Iterator[bytes]:
        return self._inner.declaration_keys(repository) if self.access.sees(repository) else iter(())

    # --- edges: seen only when both ends are ------------------------------------------------------------

    def edges_out(self, stable_key: str, kinds: Iterable[int] | None = None) -> Iterator[records.Edge]:
        if not self._sees_key(keys.key_to_bytes(stable_key)):
            return iter(())
        return (e for e in self._inner.edges_out(stable_key, kinds) if self._sees_key(keys.key_to_bytes(e.target)))

    def edges_in(self, stable_key: str, kinds: Iterable[int] | None = None) -> Iterator[records.Edge]:
        if not self._sees_key(keys.key_to_bytes(stable_key)):
            return iter(())
        return (e for e in self._inner.edges_in(stable_key, kinds) if self._sees_key(keys.key_to_bytes(e.source)))

    def neighbours_raw(
        self, key16: bytes, *, outgoing: bool, kinds: frozenset[int] | None = None
    ) -> Iterator[tuple[int, bytes, int, int]]:
        if not self._sees_key(key16):
            return iter(())
        return (n for n in self._inner.neighbours_raw(key16, outgoing=outgoing, kinds=kinds) if self._sees_key(n[1]))

    # --- unresolved ------------------------------------------------------------------------------------

    def unresolved_by_name(self, name: str) -> Iterator[records.Unresolved]:
        return (u for u in self._inner.unresolved_by_name(name) if self.access.sees(u.repository))

    def count_unresolved_by_name(self, name: str) -> int:
        return sum(1 for _u in self.unresolved_by_name(name))

    def unresolved_in(self, repository: str, path_prefix: str = "") -> Iterator[records.Unresolved]:
        return self._inner.unresolved_in(repository, path_prefix) if self.access.sees(repository) else iter(())

    def unresolved_on_lines(self, repository: str, path: str, first: int, last: int) -> Iterator[records.Unresolved]:
        if not self.access.sees(repository):
            return iter(())
        return self._inner.unresolved_on_lines(repository, path, first, last)

    def unresolved_scopes(self, repository: str) -> Iterator[records.Unresolved]:
        return self._inner.unresolved_scopes(repository) if self.access.sees(repository) else iter(())

    # --- lexicon: only the documents it sees, and their statistics --------------------------------------

    def lexicon_stats(self) -> LexiconStats | None:
        stats = _stats_for(self._inner, self.access.tag)
        with stats.lock:
            if not stats.lexicon_read:
                inner = self._inner.lexicon_stats()
                if inner is not None:
                    lengths = [round(d.length * 100) for _doc, d in self.lexicon_documents()]
                    average = int(sum(lengths) / max(len(lengths), 1))
                    stats.lexicon = LexiconStats(inner.lexical_version, len(lengths), average / 100)
                stats.lexicon_read = True
            return stats.lexicon

    def lexicon_postings(self, term: str) -> list[tuple[int, float]]:
        return [(doc, tf) for doc, tf in self._inner.lexicon_postings(term) if self._sees_document(doc)]

    def _sees_document(self, doc: int) -> bool:
        known = self._doc_seen.get(doc)
        if known is None:
            known = self._doc_seen[doc] = self.lexicon_document(doc) is not None
        return known

    def lexicon_document(self, doc: int) -> LexiconDocument | None:
        found = self._inner.lexicon_document(doc)
        return found if found is not None and self.access.sees(found.repository) else None

    def lexicon_documents(self) -> Iterator[tuple[int, LexiconDocument]]:
        return ((i, d) for i, d in self._inner.lexicon_documents() if self.access.sees(d.repository))

    # --- package dependencies --------------------------------------------------------------------------

    def package_dependencies(
        self, provider_repository: str, provider_package: str | None = None
    ) -> Iterator[records.PackageDependency]:
        if not self.access.sees(provider_repository):
            return iter(())
        return (
            d
            for d in self._inner.package_dependencies(provider_repository, provider_package)
            if self.access.sees(d.consumer_repository)
        )


def language_counts(gen: Generation) -> tuple[records.CountEntry, ...]:
    """Symbols per language: the breakdown's, or a view's from its files alone (no edge scan)."""
    return gen.symbols_by_language() if isinstance(gen, RepositoryView) else gen.breakdown().symbols_by_language
