"""The writable fact cache (LMDB, indexer-only): per-file extraction output keyed by content.

Key: BLAKE2b over (cache format, language, extractor version, path, package,
content hash). An unchanged file under the same extractor is not re-extracted.
Entries unused for ``max_age_days`` are pruned at the end of an index.
Modes: ``on``; ``off`` (never read nor write); ``verify`` (extract everything,
compare with every cached entry, fail on any disagreement); ``refresh`` (read
nothing, extract and analyze everything, write it all back: ``index --full``).
"""

from __future__ import annotations

import hashlib
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import lmdb
import msgspec

from indexer.diskerrors import write_failure
from indexer.facts import FileFacts
from indexer.faults import fault_point
from snapshot_format.versions import FACT_CACHE_VERSION

_DAY = struct.Struct(">I")
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(FileFacts)


class FactCacheDisagreement(Exception):
    """verify mode found a cached entry that differs from a fresh extraction."""


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    verified: int = 0
    pruned: int = 0


def cache_key(language: str, extractor_version: str, path: str, package: str, content_hash: str) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for part in (str(FACT_CACHE_VERSION), language, extractor_version, path, package, content_hash):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.digest()


def _today() -> int:
    return int(time.time() // 86400)


class FactCache:
    """Per-file facts cache. Use as a context manager; writes are batched into one transaction."""

    def __init__(self, directory: Path, mode: str = "on") -> None:
        self.mode = mode
        self.directory = directory
        self.stats = CacheStats()
        self._env: lmdb.Environment | None = None
        self._pending: dict[bytes, bytes] = {}
        self._touched: set[bytes] = set()
        if mode != "off":
            directory.mkdir(parents=True, exist_ok=True)
            self._env = lmdb.open(str(directory), map_size=8 << 30, subdir=True, max_dbs=2, readahead=False)

    def __enter__(self) -> FactCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: bytes) -> FileFacts | None:
        """Cached facts, or None; in verify mode the caller must call ``check`` instead."""
        if self._env is None or self.mode in ("verify", "refresh"):
            return None
        with self._env.begin(buffers=True) as txn:
            raw = txn.get(key)
            if raw is None:
                self.stats.misses += 1
                return None
            facts = _decoder.decode(bytes(raw[_DAY.size :]))
        self.stats.hits += 1
        self._touched.add(key)
        return facts

    def check(self, key: bytes, fresh: FileFacts) -> None:
        """verify mode: a cached entry must equal the fresh extraction."""
        if self._env is None:
            return
        with self._env.begin(buffers=True) as txn:
            raw = txn.get(key)
            cached = None if raw is None else _decoder.decode(bytes(raw[_DAY.size :]))
        if cached is not None:
            self.stats.verified += 1
            if cached != fresh:
                raise FactCacheDisagreement(
                    f"fact cache disagrees with a fresh extraction of {fresh.path} ({fresh.language})"
                )

    def get_raw(self, key: bytes) -> bytes | None:
        """A cached opaque value (lexical counts, an analyzer run), or None; verify mode always misses.

        Not counted in ``stats``, which are per-file extraction figures; callers count their own.
        """
        if self.mode in ("verify", "refresh"):
            return None
        return self.peek(key)

    def peek(self, key: bytes) -> bytes | None:
        """A stored opaque value whatever the mode (verify and refresh included): bookkeeping of earlier runs
        (what was published, the last analyzer run per repository), never served as a fact."""
        if self._env is None:
            return None
        pending = self._pending.get(key)
        if pending is not None:
            return pending[_DAY.size :]
        with self._env.begin(buffers=True) as txn:
            raw = txn.get(key)
            if raw is None:
                return None
            data = bytes(raw[_DAY.size :])
        self._touched.add(key)
        return data

    def peek_facts(self, key: bytes) -> FileFacts | None:
        """A file's cached extraction whatever the mode (an earlier version of a file, to compare with)."""
        raw = self.peek(key)
        if raw is None:
            return None
        try:
            return _decoder.decode(raw)
        except msgspec.DecodeError:
            return None

    def keep(self, key: bytes, value: bytes) -> None:
        """Store a bookkeeping value (see ``peek``): it changes from run to run, so verify never compares it."""
        if self._env is not None:
            self._pending[key] = _DAY.pack(_today()) + value

    def put_raw(self, key: bytes, value: bytes, *, what: str = "an entry") -> None:
        """Store an opaque value; in verify mode first compare it with what the cache held."""
        if self._env is None:
            return
        if self.mode == "verify":
            with self._env.begin(buffers=True) as txn:
                cached = txn.get(key)
                old = None if cached is None else bytes(cached[_DAY.size :])
            if old is not None:
                self.stats.verified += 1
                if old != value:
                    raise FactCacheDisagreement(f"fact cache disagrees with a fresh computation of {what}")
        self._pending[key] = _DAY.pack(_today()) + value

    def put(self, key: bytes, facts: FileFacts) -> None:
        if self._env is None:
            return
        self._pending[key] = _DAY.pack(_today()) + _encoder.encode(facts)

    def flush(self) -> None:
        """Write pending entries and refresh the last-used day of every hit."""
        if self._env is None:
            return
        today = _DAY.pack(_today())
        try:
            with self._env.begin(write=True) as txn:
                for key, value in self._pending.items():
                    fault_point("cache.write")
                    txn.put(key, value)
                    self.stats.writes += 1
                for key in self._touched - self._pending.keys():
                    raw = txn.get(key)
                    if raw is not None and raw[: _DAY.size] != today:
                        txn.put(key, today + raw[_DAY.size :])
        except lmdb.Error as exc:
            raise OSError(f"fact cache: {write_failure(exc, self.directory)}") from exc
        self._pending.clear()
        self._touched.clear()

    def prune(self, max_age_days: int = 30) -> int:
        """Delete entries not used for ``max_age_days``."""
        if self._env is None:
            return 0
        cutoff = _today() - max_age_days
        removed = 0
        with self._env.begin(write=True) as txn:
            cursor = txn.cursor()
            doomed = [bytes(k) for k, v in cursor if _DAY.unpack(v[: _DAY.size])[0] < cutoff]
            for key in doomed:
                txn.delete(key)
                removed += 1
        self.stats.pruned += removed
        return removed

    def close(self) -> None:
        if self._env is not None:
            self.flush()
            self._env.close()
            self._env = None
