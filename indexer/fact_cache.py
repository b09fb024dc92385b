"""The writable fact cache (LMDB, indexer-only): per-file extraction output keyed by content.

Key: BLAKE2b over (cache format, language, extractor version, path, package,
content hash). An unchanged file under the same extractor is not re-extracted.
Entries unused for ``max_age_days`` are pruned at the end of an index.
Modes: ``on``; ``off`` (never read nor write); ``verify`` (extract everything,
compare with every cached entry, fail on any disagreement); ``refresh`` (read
nothing, extract and analyze everything, write it all back: ``index --full``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import lmdb
import msgspec

from indexer.damage import set_aside
from indexer.diskerrors import write_failure
from indexer.facts import FileFacts
from indexer.faults import fault_point
from snapshot_format.atomic import write_atomically
from snapshot_format.regular import irregular, read_regular
from snapshot_format.versions import FACT_CACHE_VERSION

# Every value: the day it was last used, a checksum of the payload, the payload. LMDB checks its pages'
# structure, not the bytes they hold: the checksum is what tells a flipped byte in a value from a fact.
_HEADER = struct.Struct(">I8s")
_DAY = struct.Struct(">I")
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(FileFacts)
# What may stand in the cache directory; anything else in place of these is damage.
_CACHE_FILES = ("data.mdb", "lock.mdb")
_DAMAGE_NOTE = "factcache.damage"  # beside the cache: the last damage found, for status and doctor
# Beside the cache: what its data file looked like when the last run closed it cleanly. A run removes it when
# it opens the cache, so a run that died (the OOM killer, a SIGBUS on a damaged page) leaves none.
_CLEAN_NOTE = "factcache.clean"
_VERSION_KEY = b"\x00kivgraph fact cache version"  # sorts before every 20-byte entry key
CHECK_TIMEOUT_SECONDS = 600.0


class FactCacheDisagreement(Exception):
    """verify mode found a cached entry that differs from a fresh extraction."""


class _Damaged(Exception):
    """The cache cannot be trusted: the reason."""


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    verified: int = 0
    pruned: int = 0


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=8).digest()


def _wrap(payload: bytes, day: int | None = None) -> bytes:
    return _HEADER.pack(_today() if day is None else day, _checksum(payload)) + payload


def _unwrap(raw: bytes) -> bytes:
    """The payload of a stored value; _Damaged when its checksum does not hold."""
    if len(raw) < _HEADER.size:
        raise _Damaged(f"an entry of {len(raw)} bytes is shorter than its header")
    _day, checksum = _HEADER.unpack_from(raw)
    payload = raw[_HEADER.size :]
    if _checksum(payload) != checksum:
        raise _Damaged("an entry's checksum does not match its bytes")
    return payload


@dataclass(frozen=True)
class DamageNote:
    """The last damage found in the fact cache: when, why, and where the damaged copy was moved."""

    found_at: str
    reason: str
    moved_to: str


def read_damage_note(state_dir: Path) -> DamageNote | None:
    """The last damage note (status and doctor show it), None when the cache was never found damaged."""
    try:
        raw = json.loads(read_regular(state_dir / _DAMAGE_NOTE, limit=1 << 16))
        return DamageNote(str(raw["found_at"]), str(raw["reason"]), str(raw["moved_to"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cache_key(language: str, extractor_version: str, path: str, package: str, content_hash: str) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for part in (str(FACT_CACHE_VERSION), language, extractor_version, path, package, content_hash):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.digest()


def _today() -> int:
    return int(time.time() // 86400)


class FactCache:
    """Per-file facts cache. Use as a context manager; writes are batched into one transaction.

    A cache is a cache: when it is found damaged (LMDB cannot open or read it, an entry fails its
    checksum or does not decode, a FIFO or a directory stands in place of its files), it is moved
    aside as ``factcache.damaged-<time>``, a note is left for ``status`` and ``doctor``, a warning
    goes to stderr, and the run goes on with an empty cache: every fact is computed again.
    """

    def __init__(self, directory: Path, mode: str = "on") -> None:
        self.mode = mode
        self.directory = directory
        self.stats = CacheStats()
        self.damage: DamageNote | None = None  # set when this run found the cache damaged
        self._env: lmdb.Environment | None = None
        self._pending: dict[bytes, bytes] = {}
        self._touched: set[bytes] = set()
        if mode != "off":
            try:
                self._env = self._open()
            except _Damaged as exc:
                self._set_aside(str(exc))

    def _open(self) -> lmdb.Environment:
        why = irregular(self.directory, directory=True) or next(
            (why for name in _CACHE_FILES if (why := irregular(self.directory / name))), ""
        )
        if why:
            raise _Damaged(why)
        self.directory.mkdir(parents=True, exist_ok=True)
        clean = self.directory.parent / _CLEAN_NOTE
        if _data_state(self.directory) not in ("", _read_note(clean)):
            # Changed since a clean close, or left by a run that died: read it all in a child first, since a
            # page that points past the end of the file kills its reader with SIGBUS (snapshot_format/verify.py).
            check_isolated(self.directory)
        with contextlib.suppress(FileNotFoundError):
            clean.unlink()
        try:
            env = lmdb.open(str(self.directory), map_size=8 << 30, subdir=True, max_dbs=2, readahead=False)
        except lmdb.Error as exc:
            if _disk_trouble(exc):
                raise
            raise _Damaged(f"LMDB cannot open it: {exc}") from None
        _settle_version(env)
        return env

    def _set_aside(self, reason: str) -> None:
        """Move the damaged cache aside, note it, and go on with a new empty one."""
        if self._env is not None:
            with contextlib.suppress(lmdb.Error):
                self._env.close()
            self._env = None
        moved = set_aside(self.directory) if os.path.lexists(self.directory) else self.directory
        self.damage = DamageNote(
            found_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), reason=reason, moved_to=str(moved)
        )
        with contextlib.suppress(OSError):
            write_atomically(self.directory.parent / _DAMAGE_NOTE, json.dumps(vars(self.damage)).encode())
        print(
            f"warning: the fact cache {self.directory} was damaged ({reason}); moved aside to {moved.name}, "
            "rebuilding it from the sources",
            file=sys.stderr,
        )
        self._touched.clear()
        self._env = self._open()

    def _read(self, key: bytes) -> bytes | None:
        """The payload stored under ``key`` (pending writes first), None when absent or the cache was damaged."""
        pending = self._pending.get(key)
        if pending is not None:
            return pending[_HEADER.size :]
        if self._env is None:
            return None
        try:
            with self._env.begin(buffers=True) as txn:
                raw = txn.get(key)
                return None if raw is None else _unwrap(bytes(raw))
        except (_Damaged, lmdb.Error) as exc:
            if isinstance(exc, lmdb.Error) and _disk_trouble(exc):
                raise
            self._set_aside(str(exc) if isinstance(exc, _Damaged) else f"LMDB cannot read it: {exc}")
            return None

    def _decode(self, payload: bytes) -> FileFacts | None:
        try:
            return _decoder.decode(payload)
        except msgspec.DecodeError as exc:
            self._set_aside(f"an entry does not decode: {exc}")
            return None

    def __enter__(self) -> FactCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: bytes) -> FileFacts | None:
        """Cached facts, or None; in verify mode the caller must call ``check`` instead."""
        if self._env is None or self.mode in ("verify", "refresh"):
            return None
        payload = None if key in self._pending else self._read(key)
        facts = None if payload is None else self._decode(payload)
        if facts is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        self._touched.add(key)
        return facts

    def check(self, key: bytes, fresh: FileFacts) -> None:
        """verify mode: a cached entry must equal the fresh extraction."""
        payload = self._read(key)
        cached = None if payload is None else self._decode(payload)
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
        data = self._read(key)
        if data is not None and key not in self._pending:
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
            self._pending[key] = _wrap(value)

    def put_raw(self, key: bytes, value: bytes, *, what: str = "an entry") -> None:
        """Store an opaque value; in verify mode first compare it with what the cache held."""
        if self._env is None:
            return
        if self.mode == "verify":
            old = self._read(key)
            if old is not None:
                self.stats.verified += 1
                if old != value:
                    raise FactCacheDisagreement(f"fact cache disagrees with a fresh computation of {what}")
        self._pending[key] = _wrap(value)

    def put(self, key: bytes, facts: FileFacts) -> None:
        if self._env is None:
            return
        self._pending[key] = _wrap(_encoder.encode(facts))

    def flush(self) -> None:
        """Write pending entries and refresh the last-used day of every hit."""
        for attempt in (1, 2):
            try:
                self._flush()
                break
            except lmdb.Error as exc:
                if _disk_trouble(exc) or attempt == 2:
                    raise OSError(f"fact cache: {write_failure(exc, self.directory)}") from exc
                self._set_aside(f"LMDB cannot write it: {exc}")  # the pending entries go to the new cache
        self._pending.clear()
        self._touched.clear()

    def _flush(self) -> None:
        if self._env is None:
            return
        today = _DAY.pack(_today())
        with self._env.begin(write=True) as txn:
            for key, value in self._pending.items():
                fault_point("cache.write")
                txn.put(key, value)
                self.stats.writes += 1
            for key in self._touched - self._pending.keys():
                raw = txn.get(key)
                if raw is not None and raw[: _DAY.size] != today:
                    txn.put(key, today + raw[_DAY.size :])

    def prune(self, max_age_days: int = 30) -> int:
        """Delete entries not used for ``max_age_days``."""
        if self._env is None:
            return 0
        cutoff = _today() - max_age_days
        removed = 0
        try:
            with self._env.begin(write=True) as txn:
                cursor = txn.cursor()
                doomed = [
                    bytes(k)
                    for k, v in cursor
                    if bytes(k) != _VERSION_KEY and (len(v) < _HEADER.size or _DAY.unpack(v[: _DAY.size])[0] < cutoff)
                ]
                for key in doomed:
                    txn.delete(key)
                    removed += 1
        except lmdb.Error as exc:
            if _disk_trouble(exc):
                raise OSError(f"fact cache: {write_failure(exc, self.directory)}") from exc
            self._set_aside(f"LMDB cannot read it: {exc}")
            return 0
        self.stats.pruned += removed
        return removed

    def close(self) -> None:
        if self._env is not None:
            self.flush()
            self._env.close()
            self._env = None
            state = _data_state(self.directory)
            if state:
                with contextlib.suppress(OSError):
                    write_atomically(self.directory.parent / _CLEAN_NOTE, state.encode())


def _data_state(directory: Path) -> str:
    """The data file's identity, size and modification time ("" when there is none)."""
    try:
        st = os.lstat(directory / "data.mdb")
    except OSError:
        return ""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _read_note(path: Path) -> str:
    try:
        return read_regular(path, limit=256).decode("utf-8", "replace").strip()
    except OSError:
        return "(none)"


def _settle_version(env: lmdb.Environment) -> None:
    """A cache written by an older entry encoding holds nothing this build can hit (the version is part of every
    key): its entries are dropped, not mistaken for damage, and the version is recorded."""
    version = str(FACT_CACHE_VERSION).encode()
    try:
        with env.begin(write=True) as txn:
            if txn.get(_VERSION_KEY) != version:
                txn.drop(env.open_db(txn=txn), delete=False)
                txn.put(_VERSION_KEY, version)
    except lmdb.Error as exc:
        if _disk_trouble(exc):
            raise
        raise _Damaged(f"LMDB cannot write it: {exc}") from None


def walk(directory: Path) -> str:
    """Read every entry of the cache and check it; "" when whole, else what is wrong (run in a child)."""
    try:
        env = lmdb.open(str(directory), readonly=True, lock=False, subdir=True, max_dbs=2, readahead=False)
    except lmdb.Error as exc:
        return f"LMDB cannot open it: {exc}"
    try:
        with env.begin(buffers=True) as txn:
            version = txn.get(_VERSION_KEY)
            if version is not None and bytes(version) != str(FACT_CACHE_VERSION).encode():
                return ""  # an older encoding: dropped when opened, nothing to check
            for key, value in txn.cursor():
                if bytes(key) != _VERSION_KEY:
                    _unwrap(bytes(value))
    except _Damaged as exc:
        return str(exc)
    except lmdb.Error as exc:
        return f"LMDB cannot read it: {exc}"
    finally:
        env.close()
    return ""


def check_isolated(directory: Path, timeout: float = CHECK_TIMEOUT_SECONDS) -> None:
    """``walk`` in a child process: damage that kills its reader costs the child; _Damaged says what was found."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "indexer.fact_cache", str(directory)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise _Damaged(f"reading it did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise OSError(f"fact cache: its check could not start: {exc}") from exc
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name if -proc.returncode in signal.valid_signals() else "a signal"
        raise _Damaged(f"reading it killed the reader ({name}: a page points past the end of the file)")
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise _Damaged(lines[-1] if lines else f"its check exited {proc.returncode}")


def main(argv: list[str]) -> int:
    """``python -m indexer.fact_cache DIRECTORY``: exit 0 when the cache reads whole, 1 with the reason."""
    if len(argv) != 1:
        print("usage: python -m indexer.fact_cache DIRECTORY", file=sys.stderr)
        return 2
    problem = walk(Path(argv[0]))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


def _disk_trouble(exc: lmdb.Error) -> bool:
    """A full disk or a size limit: not damage, the cache is fine and the run must say what is wrong."""
    return isinstance(exc, lmdb.MapFullError | lmdb.DiskError) or "No space" in str(exc)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
