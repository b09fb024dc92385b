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
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import lmdb
import msgspec

from indexer.damage import remove_tree, set_aside
from indexer.diskerrors import write_failure
from indexer.faults import fault_point
from snapshot_format import codec, keys, records
from snapshot_format.atomic import fsync_directory, write_atomically
from snapshot_format.digest import DigestBuilder, digest_environment
from snapshot_format.errors import PublishLockedError, SnapshotError
from snapshot_format.layout import (
    DATA_FILENAME,
    HOLD_FILENAME,
    MANIFEST_FILENAME,
    StateLayout,
    generation_name,
    layer_directory,
    list_generations,
    parse_generation_name,
    read_current,
    temp_generation_name,
)
from snapshot_format.lexical import decode_document, encode_document, encode_postings, encode_stats
from snapshot_format.manifest import LayerEntry, Manifest, RepositoryState, encode_manifest, read_manifest
from snapshot_format.reader import layers_digest, shared_environment
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


@dataclass
class LayerLexicon:
    """A repository layer's part of the lexical index: postings and documents numbered within the layer."""

    postings: list[tuple[bytes, bytes]] = field(default_factory=list)
    documents: list[tuple[bytes, bytes]] = field(default_factory=list)
    length: int = 0  # the sum of its documents' weighted lengths x100


@dataclass
class RepositoryLayer:
    """One repository's own facts, written as its own layer (or carried over when an equal layer is on disk)."""

    name: str
    files: list[records.File] = field(default_factory=list)
    symbols: list[records.Symbol] = field(default_factory=list)
    edges: list[records.Edge] = field(default_factory=list)  # both ends in this repository
    unresolved: list[records.Unresolved] = field(default_factory=list)
    lexicon: LayerLexicon = field(default_factory=LayerLexicon)


@dataclass(frozen=True)
class CarriedLayer:
    """A layer of an earlier generation taken as it is (hard-linked, never rewritten)."""

    name: str
    generation: Path  # the directory of the generation that holds it
    entry: LayerEntry


@dataclass
class LinkLayer:
    """What binds the layers: repository records, edges between two repositories, the package map."""

    repositories: list[records.Repository]
    edges: list[records.Edge] = field(default_factory=list)
    package_dependencies: list[records.PackageDependency] = field(default_factory=list)
    analyzers: dict[str, str] = field(default_factory=dict)
    lexicon: bool = True  # the generation has a lexical index (its stats are written)
    lexicon_stats: bytes | None = None  # stats as given (else computed from the layers)


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
    """Every sub-database's (key, value) pairs of a generation of one environment (before feature 10), sorted."""
    items, counts, breakdown = _fact_items(content.files, content.symbols, content.edges, content.unresolved)
    enc = codec.encode
    items[keys.DB_REPOSITORIES] = [(keys.text(r.name), enc(r)) for r in content.repositories]
    items[keys.DB_PACKAGE_DEPS] = _package_items(content.package_dependencies)
    counts = msgspec.structs.replace(
        counts, repositories=len(content.repositories), package_dependencies=len(content.package_dependencies)
    )
    items[keys.DB_META] = [
        (keys.META_COUNTS, enc(counts)),
        (keys.META_BREAKDOWN, enc(breakdown)),
        (keys.META_REPOSITORY_ORDER, codec.encode_repository_order([r.name for r in content.repositories])),
    ]
    for name, pairs in content.derived.items():
        items[name].extend(pairs)
    _sort_and_check(items)
    return items


def _package_items(deps: list[records.PackageDependency]) -> list[tuple[bytes, bytes]]:
    return [
        (
            keys.package_dep_key(d.provider_repository, d.provider_package, d.consumer_repository, d.consumer_package),
            codec.encode(d),
        )
        for d in deps
    ]


def _breakdown_counters(
    files: list[records.File],
    symbols: list[records.Symbol],
    edges: list[records.Edge],
    unresolved: list[records.Unresolved],
) -> dict[str, collections.Counter[str]]:
    return {
        "edges_by_kind": _named(collections.Counter(e.kind for e in edges), EdgeKind),
        "edges_by_confidence": _named(collections.Counter(e.confidence for e in edges), Confidence),
        "unresolved_by_reason": collections.Counter(u.reason for u in unresolved),
        "symbols_by_language": collections.Counter(s.language for s in symbols),
        "files_by_language": collections.Counter(f.language for f in files if f.status in records.PARSED_STATUSES),
    }


def _breakdown_of(counters: dict[str, collections.Counter[str]]) -> records.Breakdown:
    return records.Breakdown(**{name: _count_entries(counter) for name, counter in counters.items()})


def _counters_of(breakdown: records.Breakdown) -> dict[str, collections.Counter[str]]:
    return {
        name: collections.Counter({e.key: e.count for e in getattr(breakdown, name)})
        for name in records.Breakdown.__struct_fields__
    }


def _fact_items(
    files: list[records.File],
    symbols_in: list[records.Symbol],
    edges: list[records.Edge],
    unresolved_in: list[records.Unresolved],
    *,
    known: Callable[[bytes], bool] | None = None,
) -> tuple[dict[bytes, list[tuple[bytes, bytes]]], records.Counts, records.Breakdown]:
    """The (key, value) pairs of files, symbols, their indexes, edges and unresolved rows, with their counts.

    An edge must name symbols among ``symbols_in``, or ones ``known`` says are in the generation (the link
    layer's edges end in repository layers).
    """
    enc = codec.encode
    items: dict[bytes, list[tuple[bytes, bytes]]] = {name: [] for name in keys.ALL_DATABASES}
    items[keys.DB_FILES] = [(keys.file_key(f.repository, f.path), enc(f)) for f in files]
    symbols = items[keys.DB_SYMBOLS]
    by_qn = items[keys.DB_BY_QUALIFIED_NAME]
    by_name = items[keys.DB_BY_NAME]
    by_file = items[keys.DB_BY_FILE]
    seen: dict[bytes, records.Symbol] = {}
    for sym in symbols_in:
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
    for edge in edges:
        src, dst = raw_of.get(edge.source), raw_of.get(edge.target)
        if src is None or dst is None:
            src, dst = keys.key_to_bytes(edge.source), keys.key_to_bytes(edge.target)
        for end, raw in ((edge.source, src), (edge.target, dst)):
            if raw not in seen and (known is None or not known(raw)):
                raise PublishError(
                    f"edge {EdgeKind(edge.kind).name} names a symbol that is not in the generation: {end}"
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
    for seq, u in enumerate(unresolved_in):
        value = enc(u)
        unresolved.append((keys.unresolved_key(u.name, u.repository, u.path, u.line, u.col, seq), value))
        unresolved_by_file.append((keys.unresolved_file_key(u.repository, u.path, u.line, u.col, seq), value))

    files_by_status = collections.Counter(f.status for f in files)
    counts = records.Counts(
        files=files_by_status.get("indexed", 0) + files_by_status.get("partial", 0),
        symbols=len(symbols_in),
        edges=len(edges),
        unresolved=len(unresolved_in),
        failed_files=files_by_status.get("parse_failed", 0),
        skipped_files=files_by_status.get("skipped", 0),
        partial_files=files_by_status.get("partial", 0),
    )
    breakdown = _breakdown_of(_breakdown_counters(files, symbols_in, edges, unresolved_in))
    return items, counts, breakdown


def _sort_and_check(items: dict[bytes, list[tuple[bytes, bytes]]]) -> None:
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


def _counts_of(items: dict[bytes, list[tuple[bytes, bytes]]]) -> records.Counts:
    raw = dict(items[keys.DB_META])[keys.META_COUNTS]
    return codec.decode(records.Counts, raw)


def _write_environment(
    path: Path,
    items: dict[bytes, list[tuple[bytes, bytes]]],
    databases: tuple[bytes, ...] = keys.ALL_DATABASES,
    digested: str = "",
) -> str:
    """Write ``databases`` in layout order; returns the content digest of what was written (``digested``
    when the caller computed it over the same items already)."""
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
        for name in databases:
            db = env.open_db(name, create=True)
            pairs = items[name]
            for start in range(0, max(len(pairs), 1), 50_000):
                chunk = pairs[start : start + 50_000]
                with env.begin(write=True, db=db) as txn:
                    cursor = txn.cursor()
                    cursor.putmulti(chunk, append=True)
            if not digested:
                digest.add_many(name, pairs)
        env.sync(True)
    finally:
        env.close()
    # The writer's lock file is not part of a published generation.
    with contextlib.suppress(FileNotFoundError):
        (path / "lock.mdb").unlink()
    return digested or digest.hexdigest()


def _validate(path: Path, digest: str, counts: records.Counts, *, symbols: bool = True, what: str = "") -> None:
    """Reopen what was written: its digest, and the symbols and edges it holds."""
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=len(keys.ALL_DATABASES) + 4, subdir=True)
    name = what or f"candidate {path.name}"
    try:
        actual = digest_environment(env)
        if actual != digest:
            raise PublishError(f"{name}: digest {actual} read back differs from {digest} written")
        if symbols:
            with env.begin(db=env.open_db(keys.DB_SYMBOLS, create=False)) as txn:
                n = txn.stat()["entries"]
            if n != counts.symbols:
                raise PublishError(f"{name}: {n} symbols read back, {counts.symbols} written")
        with env.begin(db=env.open_db(keys.DB_EDGES_OUT, create=False)) as txn:
            n = txn.stat()["entries"]
        if n != counts.edges:
            raise PublishError(f"{name}: {n} edges read back, {counts.edges} written")
    finally:
        env.close()


def _fsync_tree(path: Path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _fsync_tree(child)  # the layers of a layered generation
        elif child.is_file():
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


# --- layers (feature 10) ----------------------------------------------------------------------------


def split_content(content: GenerationContent) -> tuple[list[RepositoryLayer], LinkLayer]:
    """One generation's content as per-repository layers and the link layer (registry order)."""
    layers = {r.name: RepositoryLayer(r.name) for r in content.repositories}

    def layer_of(repository: str, what: str) -> RepositoryLayer:
        layer = layers.get(repository)
        if layer is None:
            raise PublishError(f"{what} belongs to repository {repository!r}, which is not in the generation")
        return layer

    for f in content.files:
        layer_of(f.repository, f"file {f.path}").files.append(f)
    repo_of: dict[str, str] = {}
    for sym in content.symbols:
        layer_of(sym.repository, f"symbol {sym.qualified_name} ({sym.key})").symbols.append(sym)
        repo_of[sym.key] = sym.repository
    link = LinkLayer(
        repositories=list(content.repositories),
        package_dependencies=list(content.package_dependencies),
        analyzers=dict(content.analyzers),
    )
    for edge in content.edges:
        src, dst = repo_of.get(edge.source), repo_of.get(edge.target)
        if src is None or dst is None:
            missing = edge.source if src is None else edge.target
            raise PublishError(
                f"edge {EdgeKind(edge.kind).name} names a symbol that is not in the generation: {missing}"
            )
        (layers[src].edges if src == dst else link.edges).append(edge)
    for u in content.unresolved:
        layer_of(u.repository, f"unresolved row {u.name!r} ({u.reason}) in {u.path or 'no file'}").unresolved.append(u)
    _split_lexicon(content.derived, layers, link)
    return list(layers.values()), link


def _split_lexicon(
    derived: dict[bytes, list[tuple[bytes, bytes]]], layers: dict[str, RepositoryLayer], link: LinkLayer
) -> None:
    """The generation's lexicon (documents numbered across repositories) renumbered per layer."""
    unknown = set(derived) - {keys.DB_LEXICON, keys.DB_LEXICON_DOCS, keys.DB_META}
    if unknown:
        raise PublishError(f"derived sub-databases {sorted(n.decode() for n in unknown)} have no layer")
    link.lexicon = bool(derived)
    for key, value in derived.get(keys.DB_META, []):
        if key != keys.META_LEXICON_STATS:
            raise PublishError(f"derived meta key {key!r} has no layer")
        link.lexicon_stats = value
    local: dict[int, tuple[RepositoryLayer, int]] = {}
    for key, value in sorted(derived.get(keys.DB_LEXICON_DOCS, [])):
        doc = decode_document(value)
        layer = layers.get(doc.repository)
        if layer is None:
            raise PublishError(
                f"lexical document {doc.path} belongs to repository {doc.repository!r}, not in the generation"
            )
        n = len(layer.lexicon.documents)
        local[int.from_bytes(key, "big")] = (layer, n)
        length = round(doc.length * 100)
        layer.lexicon.documents.append(
            (keys.lexicon_doc_key(n), encode_document(doc.repository, doc.path, doc.language, length))
        )
        layer.lexicon.length += length
    for term, value in derived.get(keys.DB_LEXICON, []):
        flat = msgspec.msgpack.decode(value, type=list[int])
        per: dict[str, list[int]] = {}
        for i in range(0, len(flat), 2):
            layer, n = local[flat[i]]
            per.setdefault(layer.name, []).extend((n, flat[i + 1]))
        for name, postings in per.items():
            layers[name].lexicon.postings.append((term, encode_postings(postings)))


@dataclass
class _LayerBuilt:
    entry: LayerEntry
    breakdown: dict[str, collections.Counter[str]]
    keys16: frozenset[bytes] | None  # its symbols' raw keys (None: carried, ask its environment)
    path: Path


def _layer_items(
    layer: RepositoryLayer,
) -> tuple[dict[bytes, list[tuple[bytes, bytes]]], records.Counts, records.Breakdown]:
    items, counts, breakdown = _fact_items(layer.files, layer.symbols, layer.edges, layer.unresolved)
    enc = codec.encode
    items[keys.DB_LEXICON] = list(layer.lexicon.postings)
    items[keys.DB_LEXICON_DOCS] = list(layer.lexicon.documents)
    n_docs = len(layer.lexicon.documents)
    items[keys.DB_META] = [(keys.META_COUNTS, enc(counts)), (keys.META_BREAKDOWN, enc(breakdown))]
    if n_docs:
        items[keys.DB_META].append((keys.META_LEXICON_STATS, encode_stats(n_docs, int(layer.lexicon.length / n_docs))))
    _sort_and_check(items)
    return items, counts, breakdown


def _content_digest(items: dict[bytes, list[tuple[bytes, bytes]]], databases: tuple[bytes, ...]) -> str:
    builder = DigestBuilder()
    for name in databases:
        builder.add_many(name, items[name])
    return builder.hexdigest()


def _previous_layers(layout: StateLayout) -> dict[str, tuple[Path, LayerEntry]]:
    """The layers of the generation CURRENT names, by repository (none when it has none or cannot be read)."""
    current = read_current(layout)
    if current is None:
        return {}
    directory = layout.generations_dir / current
    try:
        manifest = read_manifest(directory)
    except SnapshotError:
        return {}
    return {e.repository: (directory, e) for e in manifest.layers}


def _carry(source: Path, target: Path, entry: LayerEntry) -> bool:
    """Hard-link an earlier generation's layer into the candidate (a copy where links are refused)."""
    data = source / entry.directory / DATA_FILENAME
    try:
        st = data.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != entry.data_bytes or st.st_mtime_ns != entry.mtime_ns:
        return False  # not the file that was published: it is written again (or refused), never carried
    (target / entry.directory).mkdir(parents=True, exist_ok=True)
    try:
        os.link(data, target / entry.directory / DATA_FILENAME)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(data, target / entry.directory / DATA_FILENAME)
    return True


def _read_breakdown(directory: Path) -> dict[str, collections.Counter[str]]:
    with shared_environment(directory) as env, env.begin(db=env.open_db(keys.DB_META, create=False)) as txn:
        raw = txn.get(keys.META_BREAKDOWN)
    if raw is None:
        raise PublishError(f"{directory}: the carried layer has no breakdown")
    return _counters_of(codec.decode(records.Breakdown, raw))


def _build_layers(
    tmp: Path, layers: list[RepositoryLayer | CarriedLayer], previous: dict[str, tuple[Path, LayerEntry]]
) -> list[_LayerBuilt]:
    """Write (or carry) each repository layer into the candidate."""
    built: list[_LayerBuilt] = []
    for layer in layers:
        if isinstance(layer, CarriedLayer):
            if not _carry(layer.generation, tmp, layer.entry):
                raise PublishError(
                    f"the layer of {layer.name} in {layer.generation.name} is missing or damaged; re-index {layer.name}"
                )
            path = tmp / layer.entry.directory
            built.append(_LayerBuilt(layer.entry, _read_breakdown(path), None, path))
            continue
        items, counts, layer_breakdown = _layer_items(layer)
        digest = _content_digest(items, keys.LAYER_DATABASES)
        directory = layer_directory(layer.name, digest)
        path = tmp / directory
        entry = LayerEntry(
            repository=layer.name,
            directory=directory,
            digest=digest,
            data_bytes=0,
            counts=counts,
            lexicon_documents=len(layer.lexicon.documents),
            lexicon_length=layer.lexicon.length,
        )
        before = previous.get(layer.name)
        if before is not None and before[1].digest != digest and _same_rows_reordered(before, items, counts):
            digest, directory, entry = before[1].digest, before[1].directory, before[1]  # the same facts
            path = tmp / directory
        if before is not None and before[1].digest == digest and before[1].directory == directory:
            carried = _carry(before[0], tmp, before[1])  # unchanged: the same file, never rewritten
        else:
            carried = False
        if not carried:
            path.mkdir(parents=True)
            _write_environment(path, items, keys.LAYER_DATABASES, digested=digest)
            _validate(path, digest, counts, what=f"the layer of {layer.name}")
        st = (path / DATA_FILENAME).stat()
        entry = msgspec.structs.replace(entry, data_bytes=st.st_size, mtime_ns=st.st_mtime_ns)
        built.append(
            _LayerBuilt(
                entry,
                _counters_of(layer_breakdown),
                frozenset(keys.key_to_bytes(sym.key) for sym in layer.symbols),
                path,
            )
        )
    return built


_ROW_DATABASES = (keys.DB_UNRESOLVED, keys.DB_UNRESOLVED_BY_FILE)


def _same_rows_reordered(
    before: tuple[Path, LayerEntry], items: dict[bytes, list[tuple[bytes, bytes]]], counts: records.Counts
) -> bool:
    """Whether ``items`` are the facts of the earlier layer ``before`` with its unresolved rows in another order.

    A row's key ends in its sequence number in the list it was written from, and the stages of a run list the
    same rows in different orders (the CANDIDATE stage carries a repository's rows, the exact stage makes them
    afresh): the same facts would be written again under other keys. The rows are compared without that
    number; when they are the same, the earlier layer's own rows in their place must give its digest (every
    other database equal), and then that layer is carried.
    """
    if before[1].counts != counts:
        return False
    rows: dict[bytes, list[tuple[bytes, bytes]]] = {}
    try:
        with shared_environment(before[0] / before[1].directory) as env:
            for name in _ROW_DATABASES:
                with env.begin(db=env.open_db(name, create=False)) as txn:
                    rows[name] = [(bytes(k), bytes(v)) for k, v in txn.cursor()]
    except (OSError, lmdb.Error, SnapshotError):
        return False
    for name in _ROW_DATABASES:
        if sorted((k[:-4], v) for k, v in rows[name]) != sorted((k[:-4], v) for k, v in items[name]):
            return False
    return _content_digest({**items, **rows}, keys.LAYER_DATABASES) == before[1].digest


class _KnownKeys:
    """Whether a raw symbol key is in one of the generation's layers (carried layers are asked)."""

    def __init__(self, built: list[_LayerBuilt]) -> None:
        self._sets = [b.keys16 for b in built if b.keys16 is not None]
        self._carried = [b.path for b in built if b.keys16 is None]
        self._stack = contextlib.ExitStack()
        self._envs: list[lmdb.Environment] = []

    def __call__(self, key16: bytes) -> bool:
        if any(key16 in keys16 for keys16 in self._sets):
            return True
        if self._carried and not self._envs:
            self._envs = [self._stack.enter_context(shared_environment(path)) for path in self._carried]
        for env in self._envs:
            with env.begin(db=env.open_db(keys.DB_SYMBOLS, create=False)) as txn:
                if txn.get(key16) is not None:
                    return True
        return False

    def close(self) -> None:
        self._envs = []
        self._stack.close()


def _link_items(
    link: LinkLayer, built: list[_LayerBuilt], known: _KnownKeys
) -> tuple[dict[bytes, list[tuple[bytes, bytes]]], records.Counts]:
    items, link_counts, _ = _fact_items([], [], link.edges, [], known=known)
    counters = _breakdown_counters([], [], link.edges, [])
    fields = ("files", "symbols", "edges", "unresolved", "failed_files", "skipped_files", "partial_files")
    totals = {f: getattr(link_counts, f) for f in fields}
    for b in built:
        for f in fields:
            totals[f] += getattr(b.entry.counts, f)
        for name, counter in b.breakdown.items():
            counters[name].update(counter)
    counts = records.Counts(
        repositories=len(link.repositories), package_dependencies=len(link.package_dependencies), **totals
    )
    enc = codec.encode
    items[keys.DB_REPOSITORIES] = [(keys.text(r.name), enc(r)) for r in link.repositories]
    items[keys.DB_PACKAGE_DEPS] = _package_items(link.package_dependencies)
    items[keys.DB_META] = [
        (keys.META_COUNTS, enc(counts)),
        (keys.META_BREAKDOWN, enc(_breakdown_of(counters))),
        (keys.META_REPOSITORY_ORDER, codec.encode_repository_order([r.name for r in link.repositories])),
    ]
    if link.lexicon_stats is not None:
        items[keys.DB_META].append((keys.META_LEXICON_STATS, link.lexicon_stats))
    elif link.lexicon:
        documents = sum(b.entry.lexicon_documents for b in built)
        length = sum(b.entry.lexicon_length for b in built)
        items[keys.DB_META].append((keys.META_LEXICON_STATS, encode_stats(documents, int(length / max(documents, 1)))))
    _sort_and_check(items)
    return items, counts


def publish(
    layout: StateLayout,
    content: GenerationContent,
    *,
    indexer_version: str,
    retain: int = DEFAULT_RETAIN,
    on_step: Callable[[str], None] | None = None,
    layered: bool = True,
    reuse: bool = True,
) -> PublishResult:
    """Build, validate and atomically publish ``content`` as the next generation.

    Layered (feature 10, the default): one layer per repository plus the link layer, through
    ``publish_layers``. ``layered=False`` writes the one environment of earlier feature versions (kept for
    the tests that compare the two and for the golden generations of those versions).
    """
    if layered:
        layers, link = split_content(content)
        mixed: list[RepositoryLayer | CarriedLayer] = [*layers]
        return publish_layers(
            layout, mixed, link, indexer_version=indexer_version, retain=retain, on_step=on_step, reuse=reuse
        )

    def build(tmp: Path, started: float, gid: int) -> Manifest:
        items = _database_items(content)
        counts = _counts_of(items)
        digest = _write_environment(tmp, items)
        (tmp / HOLD_FILENAME).touch()
        fault_point("built")
        step("built")
        _validate(tmp, digest, counts)
        return _manifest(gid, indexer_version, digest, tmp, counts, content.repositories, content.analyzers, started)

    step = on_step or (lambda _s: None)
    return _publish_candidate(layout, build, step, retain)


def publish_layers(
    layout: StateLayout,
    layers: list[RepositoryLayer | CarriedLayer],
    link: LinkLayer,
    *,
    indexer_version: str,
    retain: int = DEFAULT_RETAIN,
    on_step: Callable[[str], None] | None = None,
    reuse: bool = True,
) -> PublishResult:
    """Publish one generation from per-repository layers and the link layer (the entry point of every route).

    A repository layer whose content digest equals the one CURRENT holds for that repository is carried
    over, hard-linked, never rewritten (unless ``reuse`` is false: ``kivgraph index --full`` writes every
    layer afresh); so is a ``CarriedLayer``. The link layer is always written.
    """
    names = [r.name for r in link.repositories]
    if sorted(names) != sorted(layer.name for layer in layers) or len(set(names)) != len(names):
        raise PublishError(
            f"the layers ({', '.join(sorted(layer.name for layer in layers))}) are not the repositories of the "
            f"generation ({', '.join(sorted(names))})"
        )
    order = {name: i for i, name in enumerate(names)}
    ordered = sorted(layers, key=lambda layer: order[layer.name])
    step = on_step or (lambda _s: None)

    def build(tmp: Path, started: float, gid: int) -> Manifest:
        built = _build_layers(tmp, ordered, _previous_layers(layout) if reuse else {})
        known = _KnownKeys(built)
        try:
            items, counts = _link_items(link, built, known)
        finally:
            known.close()
        link_digest = _write_environment(tmp, items, keys.LINK_DATABASES)
        (tmp / HOLD_FILENAME).touch()
        fault_point("built")
        step("built")
        _validate(
            tmp,
            link_digest,
            records.Counts(edges=len(link.edges)),
            symbols=False,
            what=f"candidate {tmp.name} (link layer)",
        )
        entries = tuple(b.entry for b in built)
        digest = layers_digest(link_digest, [(e.repository, e.digest) for e in entries])
        manifest = _manifest(gid, indexer_version, digest, tmp, counts, link.repositories, link.analyzers, started)
        return msgspec.structs.replace(manifest, layers=entries, link_digest=link_digest)

    return _publish_candidate(layout, build, step, retain)


def _manifest(
    gid: int,
    indexer_version: str,
    digest: str,
    tmp: Path,
    counts: records.Counts,
    repositories: list[records.Repository],
    analyzers: dict[str, str],
    started: float,
) -> Manifest:
    now = dt.datetime.now(dt.UTC)
    return Manifest(
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
            RepositoryState(name=r.name, commit=r.commit, branch=r.branch, dirty=r.dirty) for r in repositories
        ),
        analyzers=dict(sorted(analyzers.items())),
        seconds=round(time.perf_counter() - started, 3),
    )


def _publish_candidate(
    layout: StateLayout, build: Callable[[Path, float, int], Manifest], step: Callable[[str], None], retain: int
) -> PublishResult:
    """The durability order around ``build`` (which fills the candidate directory and returns its manifest)."""
    started = time.perf_counter()
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
            manifest = build(tmp, started, gid)
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
