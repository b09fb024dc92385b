"""Building and publishing a generation: the only place that opens LMDB for writing a generation.

Durability order (docs/budgets.md §2.1): build into ``generations/.tmp-<id>/``, fsync,
reopen read-only and validate (digest and counts), write the manifest last,
rename into place, fsync the parent, then replace ``CURRENT`` atomically
(``snapshot_format.atomic.write_atomically``). Publishers hold an
exclusive non-blocking lock. A crash at any step leaves the previous
generation serving and nothing half-visible. ``KIVGRAPH_FAULT_KILL_AT=<step>``
kills the process with SIGKILL at that step, for the crash tests
(``KIVGRAPH_FAULT_STOP_AT`` stops it there, holding the lock; see indexer.faults).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import errno
import fcntl
import itertools
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import lmdb

from indexer.damage import remove_tree, set_aside
from indexer.diskerrors import write_failure
from indexer.faults import fault_point
from snapshot_format import codec, keys, records
from snapshot_format.atomic import fsync_directory, write_atomically
from snapshot_format.digest import DigestBuilder, digest_environment
from snapshot_format.errors import PublishLockedError
from snapshot_format.layout import (
    DATA_FILENAME,
    HOLD_FILENAME,
    MANIFEST_FILENAME,
    StateLayout,
    generation_name,
    list_generations,
    parse_generation_name,
    read_current,
    temp_generation_name,
)
from snapshot_format.manifest import Manifest, RepositoryState, encode_manifest
from snapshot_format.regular import IrregularFileError, open_regular
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION, MIN_READER_VERSION
from snapshot_format.vocab import Confidence, EdgeKind

PUBLISH_STEPS = ("locked", "built", "validated", "renamed", "current")
DEFAULT_RETAIN = 3
MAX_KEY_BYTES = 511  # LMDB's compiled-in maximum key size


class PublishError(Exception):
    """Building or validating a candidate generation failed; nothing was published."""


@dataclass
class GenerationContent:
    """Everything one generation holds, ready to be written."""

    repositories: list[records.Repository]
    files: list[records.File] = field(default_factory=list)
    symbols: list[records.Symbol] = field(default_factory=list)
    edges: list[records.Edge] = field(default_factory=list)
    unresolved: list[records.Unresolved] = field(default_factory=list)
    package_dependencies: list[records.PackageDependency] = field(default_factory=list)
    analyzers: dict[str, str] = field(default_factory=dict)
    # Index-time derived sub-databases (e.g. the lexicon), as (key, value) pairs per database.
    derived: dict[bytes, list[tuple[bytes, bytes]]] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishResult:
    generation_id: int
    name: str
    path: Path
    manifest: Manifest
    removed: tuple[str, ...]
    seconds: float


def _lock_holder(fd: int) -> str:
    """The pid holding the lock on ``fd``'s file: what it wrote there, else the kernel's lock table.

    The holder writes its pid just after taking the lock, so a second indexer can look in between;
    /proc/locks names the owner of a flock from the moment it is taken.
    """
    with contextlib.suppress(OSError, ValueError):
        written = os.pread(fd, 64, 0).decode().strip()
        if written.isdigit():
            return written
    with contextlib.suppress(OSError):
        inode = str(os.fstat(fd).st_ino)
        with open("/proc/locks") as table:
            for line in table:
                fields = line.split()
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == inode:
                    return fields[4]
    return ""


class PublishLock:
    """Exclusive, non-blocking, kernel-released lock on ``publish.lock``: one indexer per state directory.

    The CLI takes it for a whole run (discovery through publication, and for the
    lifetime of ``--watch``), so no build can be published from inputs older than
    another indexer's: a newer generation id always means newer content.
    Re-entrant within a process: ``run_index`` and ``publish`` take it again
    under the CLI's hold without blocking themselves.
    """

    _held: ClassVar[dict[Path, list[int]]] = {}  # lock path -> [fd, depth], per process

    def __init__(self, layout: StateLayout) -> None:
        self.path = layout.publish_lock

    def __enter__(self) -> PublishLock:
        held = PublishLock._held.get(self.path)
        if held is not None:
            held[1] += 1
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_regular(self.path, os.O_RDWR | os.O_CREAT)
        except IrregularFileError as exc:
            raise PublishError(
                f"the indexer lock {self.path} cannot be taken: {exc}; remove it (no indexer can hold it) and retry"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _lock_holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise PublishLockedError(
                    f"another kivgraph index is running over {self.path.parent}{who}; "
                    "wait for it to finish or stop it, then retry"
                ) from None
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        PublishLock._held[self.path] = [fd, 1]
        return self

    def __exit__(self, *exc: object) -> None:
        held = PublishLock._held.get(self.path)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del PublishLock._held[self.path]
            with contextlib.suppress(OSError):
                os.ftruncate(held[0], 0)
            os.close(held[0])


# --- encoding the content into sorted (key, value) streams -----------------------------


def _count_entries(counter: collections.Counter[str]) -> tuple[records.CountEntry, ...]:
    return tuple(records.CountEntry(key=k, count=v) for k, v in sorted(counter.items()))


def _named(counter: collections.Counter[int], enum: type[EdgeKind] | type[Confidence]) -> collections.Counter[str]:
    return collections.Counter({enum(code).name: n for code, n in counter.items()})


def _database_items(content: GenerationContent) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """Every sub-database's (key, value) pairs, sorted by key."""
    enc = codec.encode
    items: dict[bytes, list[tuple[bytes, bytes]]] = {name: [] for name in keys.ALL_DATABASES}

    items[keys.DB_REPOSITORIES] = [(keys.text(r.name), enc(r)) for r in content.repositories]
    items[keys.DB_FILES] = [(keys.file_key(f.repository, f.path), enc(f)) for f in content.files]

    symbols = items[keys.DB_SYMBOLS]
    by_qn = items[keys.DB_BY_QUALIFIED_NAME]
    by_name = items[keys.DB_BY_NAME]
    by_file = items[keys.DB_BY_FILE]
    seen: dict[bytes, records.Symbol] = {}
    for sym in content.symbols:
        k16 = keys.key_to_bytes(sym.key)
        if k16 in seen:
            other = seen[k16]
            raise PublishError(
                f"duplicate stable key {sym.key}: {other.repository}:{other.path} {other.qualified_name} and "
                f"{sym.repository}:{sym.path} {sym.qualified_name}"
            )
        seen[k16] = sym
        symbols.append((k16, enc(sym)))
        by_qn.append((keys.qualified_name_key(sym.qualified_name, sym.repository, sym.path, k16), b""))
        by_name.append((keys.name_key(sym.name, sym.repository, sym.path, k16), b""))
        by_file.append((keys.by_file_key(sym.repository, sym.path, sym.start_line, sym.start_col, k16), b""))

    out = items[keys.DB_EDGES_OUT]
    inc = items[keys.DB_EDGES_IN]
    edge_keys: set[bytes] = set()
    raw_of = {sym.key: k16 for k16, sym in seen.items()}
    for edge in content.edges:
        src, dst = raw_of.get(edge.source), raw_of.get(edge.target)
        if src is None or dst is None:
            missing = edge.source if src is None else edge.target
            raise PublishError(
                f"edge {EdgeKind(edge.kind).name} names a symbol that is not in the generation: {missing}"
            )
        ok = keys.edge_key(src, edge.kind, dst, edge.provenance)
        if ok in edge_keys:
            raise PublishError(f"duplicate edge {EdgeKind(edge.kind).name} {edge.source} -> {edge.target}")
        edge_keys.add(ok)
        value = enc(records.EdgeValue(confidence=edge.confidence, line=edge.line, col=edge.col, count=edge.count))
        out.append((ok, value))
        inc.append((keys.edge_key(dst, edge.kind, src, edge.provenance), value))

    unresolved = items[keys.DB_UNRESOLVED]
    unresolved_by_file = items[keys.DB_UNRESOLVED_BY_FILE]
    for seq, u in enumerate(content.unresolved):
        value = enc(u)
        unresolved.append((keys.unresolved_key(u.name, u.repository, u.path, u.line, u.col, seq), value))
        unresolved_by_file.append((keys.unresolved_file_key(u.repository, u.path, u.line, u.col, seq), value))

    items[keys.DB_PACKAGE_DEPS] = [
        (
            keys.package_dep_key(d.provider_repository, d.provider_package, d.consumer_repository, d.consumer_package),
            enc(d),
        )
        for d in content.package_dependencies
    ]

    files_by_status = collections.Counter(f.status for f in content.files)
    counts = records.Counts(
        repositories=len(content.repositories),
        files=files_by_status.get("indexed", 0) + files_by_status.get("partial", 0),
        symbols=len(content.symbols),
        edges=len(content.edges),
        unresolved=len(content.unresolved),
        package_dependencies=len(content.package_dependencies),
        failed_files=files_by_status.get("parse_failed", 0),
        skipped_files=files_by_status.get("skipped", 0),
        partial_files=files_by_status.get("partial", 0),
    )
    breakdown = records.Breakdown(
        edges_by_kind=_count_entries(_named(collections.Counter(e.kind for e in content.edges), EdgeKind)),
        edges_by_confidence=_count_entries(
            _named(collections.Counter(e.confidence for e in content.edges), Confidence)
        ),
        unresolved_by_reason=_count_entries(collections.Counter(u.reason for u in content.unresolved)),
        symbols_by_language=_count_entries(collections.Counter(s.language for s in content.symbols)),
        files_by_language=_count_entries(
            collections.Counter(f.language for f in content.files if f.status in records.PARSED_STATUSES)
        ),
    )
    items[keys.DB_META] = [
        (keys.META_COUNTS, enc(counts)),
        (keys.META_BREAKDOWN, enc(breakdown)),
        (keys.META_REPOSITORY_ORDER, codec.encode_repository_order([r.name for r in content.repositories])),
    ]
    for name, pairs in content.derived.items():
        items[name].extend(pairs)
    fixed_size = {keys.DB_SYMBOLS, keys.DB_EDGES_OUT, keys.DB_EDGES_IN}  # raw 16-byte keys: never too long
    for name, pairs in items.items():
        for key, _value in [] if name in fixed_size else pairs:
            if len(key) > MAX_KEY_BYTES:
                raise PublishError(
                    f"{name.decode()}: a key of {len(key)} bytes exceeds LMDB's {MAX_KEY_BYTES}-byte "
                    f"limit: {key[:120].decode('utf-8', 'replace')!r}…"
                )
        pairs.sort(key=lambda kv: kv[0])
        for (a, _), (b, _) in itertools.pairwise(pairs):
            if a == b:
                raise PublishError(f"duplicate key in {name.decode()}: {a!r}")
    return items


def _counts_of(items: dict[bytes, list[tuple[bytes, bytes]]]) -> records.Counts:
    raw = dict(items[keys.DB_META])[keys.META_COUNTS]
    return codec.decode(records.Counts, raw)


def _write_environment(path: Path, items: dict[bytes, list[tuple[bytes, bytes]]]) -> str:
    """Write every sub-database in layout order; returns the content digest of what was written."""
    payload = sum(len(k) + len(v) for pairs in items.values() for k, v in pairs)
    map_size = max(64 << 20, payload * 4 + (32 << 20))
    env = lmdb.open(
        str(path),
        map_size=map_size,
        max_dbs=len(keys.ALL_DATABASES) + 4,
        subdir=True,
        sync=False,
        metasync=False,
        lock=True,
        readahead=False,
    )
    digest = DigestBuilder()
    try:
        for name in keys.ALL_DATABASES:
            db = env.open_db(name, create=True)
            pairs = items[name]
            for start in range(0, max(len(pairs), 1), 50_000):
                chunk = pairs[start : start + 50_000]
                with env.begin(write=True, db=db) as txn:
                    cursor = txn.cursor()
                    cursor.putmulti(chunk, append=True)
            digest.add_many(name, pairs)
        env.sync(True)
    finally:
        env.close()
    # The writer's lock file is not part of a published generation.
    with contextlib.suppress(FileNotFoundError):
        (path / "lock.mdb").unlink()
    return digest.hexdigest()


def _validate(path: Path, digest: str, counts: records.Counts) -> None:
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=len(keys.ALL_DATABASES) + 4, subdir=True)
    try:
        actual = digest_environment(env)
        if actual != digest:
            raise PublishError(f"candidate {path.name}: digest {actual} read back differs from {digest} written")
        with env.begin(db=env.open_db(keys.DB_SYMBOLS, create=False)) as txn:
            n = txn.stat()["entries"]
        if n != counts.symbols:
            raise PublishError(f"candidate {path.name}: {n} symbols read back, {counts.symbols} written")
        with env.begin(db=env.open_db(keys.DB_EDGES_OUT, create=False)) as txn:
            n = txn.stat()["entries"]
        if n != counts.edges:
            raise PublishError(f"candidate {path.name}: {n} edges read back, {counts.edges} written")
    finally:
        env.close()


def _fsync_tree(path: Path) -> None:
    for child in path.iterdir():
        if child.is_file():
            fd = os.open(child, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fsync_directory(path)


def next_generation_id(layout: StateLayout) -> int:
    """One more than any generation id on disk or named by CURRENT (ids only ever grow)."""
    highest = 0
    for gid, _fmt, _path in list_generations(layout):
        highest = max(highest, gid)
    current = read_current(layout)
    if current:
        parsed = parse_generation_name(current)
        if parsed:
            highest = max(highest, parsed[0])
    return highest + 1


def _remove_debris(layout: StateLayout) -> None:
    """Delete candidates left by a dead publisher (safe: we hold the lock)."""
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(layout.generations_dir):
            if entry.name.startswith(".tmp-"):
                remove_tree(entry.path)


def apply_retention(layout: StateLayout, retain: int = DEFAULT_RETAIN) -> tuple[str, ...]:
    """Delete generations older than the newest ``retain``, never CURRENT nor one a server holds."""
    current = read_current(layout)
    generations = list_generations(layout)
    removed = []
    for _gid, _fmt, path in generations[: max(len(generations) - retain, 0)]:
        if path.name == current:
            continue
        hold = path / HOLD_FILENAME
        try:
            fd = open_regular(hold)
        except FileNotFoundError:
            fd = None
        except IrregularFileError:
            continue  # damaged: no server can hold it, and readers skip it; left for a person to look at
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # a server maps it: keep it
            # Rename first so no reader can open a half-deleted generation.
            doomed = path.with_name(f".tmp-del-{path.name}")
            os.rename(path, doomed)
            shutil.rmtree(doomed, ignore_errors=True)
            removed.append(path.name)
        finally:
            if fd is not None:
                os.close(fd)
    return tuple(removed)


def _still_serving(layout: StateLayout) -> str:
    current = read_current(layout)
    return f"the previous generation {current} still serves" if current else "nothing was published"


def publish(
    layout: StateLayout,
    content: GenerationContent,
    *,
    indexer_version: str,
    retain: int = DEFAULT_RETAIN,
    on_step: Callable[[str], None] | None = None,
) -> PublishResult:
    """Build, validate and atomically publish ``content`` as the next generation."""
    started = time.perf_counter()
    step = on_step or (lambda _s: None)
    layout.generations_dir.mkdir(parents=True, exist_ok=True)
    with PublishLock(layout):
        fault_point("locked")
        step("locked")
        _remove_debris(layout)
        gid = next_generation_id(layout)
        name = generation_name(gid)
        tmp = layout.generations_dir / temp_generation_name(gid)
        final = layout.generations_dir / name
        tmp.mkdir(mode=0o755)
        try:
            items = _database_items(content)
            counts = _counts_of(items)
            digest = _write_environment(tmp, items)
            (tmp / HOLD_FILENAME).touch()
            fault_point("built")
            step("built")
            _validate(tmp, digest, counts)
            now = dt.datetime.now(dt.UTC)
            manifest = Manifest(
                id=gid,
                format_version=FORMAT_VERSION,
                feature_version=FEATURE_VERSION,
                min_reader_version=MIN_READER_VERSION,
                built_at=now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                built_at_ns=time.time_ns(),
                indexer_version=indexer_version,
                digest=digest,
                data_bytes=(tmp / DATA_FILENAME).stat().st_size,
                counts=counts,
                repositories=tuple(
                    RepositoryState(name=r.name, commit=r.commit, branch=r.branch, dirty=r.dirty)
                    for r in content.repositories
                ),
                analyzers=dict(sorted(content.analyzers.items())),
                seconds=round(time.perf_counter() - started, 3),
            )
            write_atomically(tmp / MANIFEST_FILENAME, encode_manifest(manifest))
            _fsync_tree(tmp)
            fault_point("validated")
            step("validated")
            os.rename(tmp, final)
            fsync_directory(layout.generations_dir)
        except (lmdb.Error, OSError) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise PublishError(f"{write_failure(exc, layout.generations_dir)}; {_still_serving(layout)}") from exc
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        fault_point("renamed")
        step("renamed")
        try:
            if layout.current_pointer.is_dir() and not layout.current_pointer.is_symlink():
                # A directory cannot be replaced by a rename: the pointer names no usable generation, so it is
                # set aside (a FIFO or a link in its place is replaced by the rename itself).
                aside = set_aside(layout.current_pointer)
                print(
                    f"warning: {layout.current_pointer} was a directory; moved aside to {aside.name}", file=sys.stderr
                )
            write_atomically(layout.current_pointer, f"{name}\n".encode())
        except OSError as exc:
            raise PublishError(
                f"{name} is complete but {write_failure(exc, layout.state_dir)} (CURRENT); {_still_serving(layout)}"
            ) from exc
        fault_point("current")
        step("current")
        removed = apply_retention(layout, retain)
    return PublishResult(
        generation_id=gid,
        name=name,
        path=final,
        manifest=manifest,
        removed=removed,
        seconds=time.perf_counter() - started,
    )
