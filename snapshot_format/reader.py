"""The read-only reader of a published generation.

Opening is cheap (a manifest read, a few stats and a memory map); nothing is
loaded into Python objects until a query asks for it. The environment is
opened with ``readonly=True, lock=False``: safe because a published
generation is never written again, and it creates no file.
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import hashlib
import heapq
import itertools
import operator
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lmdb
import msgspec

from snapshot_format import codec, keys, lexical, records
from snapshot_format.digest import digest_environment
from snapshot_format.errors import DigestMismatchError, GenerationUnreadableError, NoGenerationError
from snapshot_format.layout import (
    DATA_FILENAME,
    HOLD_FILENAME,
    StateLayout,
    is_layer_directory,
    list_generations,
    parse_generation_name,
    read_pointer,
)
from snapshot_format.lexical import LexiconDocument, LexiconStats
from snapshot_format.manifest import Manifest, check_readable, read_manifest
from snapshot_format.regular import IrregularFileError, open_regular
from snapshot_format.versions import MIN_FEATURE_FOR

_EMPTY_COUNTS = records.Counts()


class _Store:
    """One LMDB environment of a generation (the whole of an older one, or one layer of a layered one), mapped
    read-only, with its data file kept open so that checking its size is one fstat."""

    __slots__ = ("data_path", "dbs", "env", "fd", "identity", "label", "size")

    def __init__(self, directory: Path, size: int, label: str) -> None:
        self.label = label
        self.size = size
        self.data_path = directory / DATA_FILENAME
        self.env: lmdb.Environment | None = None
        self.identity = (0, 0)
        self.dbs: dict[bytes, lmdb._Database] = {}
        try:
            self.fd: int | None = open_regular(self.data_path)
        except IrregularFileError as exc:
            raise GenerationUnreadableError(f"{exc} (damaged generation)") from exc
        except OSError as exc:
            raise GenerationUnreadableError(
                f"{self.data_path}: {label} cannot be opened: {exc.strerror or exc}"
                + (" (generation incomplete)" if isinstance(exc, FileNotFoundError) else "")
            ) from None

    def check(self) -> None:
        if self.fd is None:
            raise GenerationUnreadableError(f"{self.data_path}: closed")
        st = os.fstat(self.fd)
        if st.st_nlink == 0:
            raise GenerationUnreadableError(f"{self.data_path}: data file was deleted while mapped")
        if st.st_size != self.size:
            raise GenerationUnreadableError(
                f"{self.data_path}: size {st.st_size} differs from the {self.size} bytes the manifest records"
                + (f" for {self.label}" if self.label != "data file" else "")
            )

    def open(self, databases: Iterable[bytes], required: frozenset[bytes]) -> None:
        assert self.fd is not None
        st = os.fstat(self.fd)
        self.identity = (st.st_dev, st.st_ino)
        try:
            self.env = _acquire_environment(self.data_path.parent, self.identity)
            for name in databases:
                try:
                    self.dbs[name] = self.env.open_db(name, create=False)
                except lmdb.NotFoundError:
                    if name in required:
                        raise
        except lmdb.NotFoundError as exc:
            self.close()
            raise GenerationUnreadableError(
                f"{self.data_path.parent}: a required sub-database is missing: {exc}"
            ) from exc
        except lmdb.Error as exc:
            self.close()
            raise GenerationUnreadableError(f"{self.data_path.parent}: cannot open LMDB environment: {exc}") from exc

    def unmap(self) -> None:
        if self.env is not None:
            self.env = None
            _release_environment(self.identity)

    def close(self) -> None:
        self.unmap()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# One environment per data file in this process: a layer carried into the next generation is the same file
# (a hard link), and LMDB refuses to open one file twice in a process. Each generation takes a reference.
_SHARED: dict[tuple[int, int], list[Any]] = {}  # (device, inode) -> [environment, references]
_SHARED_LOCK = threading.Lock()


def _acquire_environment(directory: Path, identity: tuple[int, int]) -> lmdb.Environment:
    with _SHARED_LOCK:
        held = _SHARED.get(identity)
        if held is not None:
            held[1] += 1
            return held[0]
        env = lmdb.open(
            str(directory),
            readonly=True,
            lock=False,
            max_dbs=len(keys.ALL_DATABASES) + 4,
            subdir=True,
            create=False,
            readahead=False,
            max_readers=1024,
        )
        _SHARED[identity] = [env, 1]
        return env


def _release_environment(identity: tuple[int, int]) -> None:
    with _SHARED_LOCK:
        held = _SHARED.get(identity)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del _SHARED[identity]
            held[0].close()


@contextmanager
def shared_environment(directory: Path) -> Iterator[lmdb.Environment]:
    """A published layer's environment, read-only, shared with any generation of this process that maps it."""
    fd = open_regular(directory / DATA_FILENAME)
    try:
        st = os.fstat(fd)
        identity = (st.st_dev, st.st_ino)
        env = _acquire_environment(directory, identity)
    finally:
        os.close(fd)
    try:
        yield env
    finally:
        _release_environment(identity)


_LINK_REQUIRED = frozenset(keys.LINK_DATABASES)
_LAYER_REQUIRED = frozenset(keys.LAYER_DATABASES) & keys.REQUIRED_DATABASES
_OWNER_CACHE_LIMIT = 1 << 18


def _merged(iterators: list[Iterator[tuple[bytes, bytes]]]) -> Iterator[tuple[bytes, bytes]]:
    """Items of several key-ordered scans in one key order (one scan: itself)."""
    if len(iterators) == 1:
        return iterators[0]
    return heapq.merge(*iterators, key=operator.itemgetter(0))


class Generation:
    """One published generation, mapped read-only.

    A layered generation (feature 10, ``manifest.layers``) is several LMDB environments: one layer per
    repository and the link layer (the directory's own data.mdb: generation-wide meta, repository records,
    edges between repositories, package map). Every query reads the layers it concerns and merges their
    scans in key order, so a layered generation answers exactly as the one environment of an older one.
    """

    def __init__(self, path: Path, *, hold: bool = False) -> None:
        self.path = Path(path)
        self.name = self.path.name
        # repository -> this machine's checkout of it (a server's kivgraph.toml), used where the generation names
        # no directory of this machine (published from bundles elsewhere): get_source and git checks read there
        self.checkouts: dict[str, str] = {}
        parsed = parse_generation_name(self.name)
        if parsed is None:
            raise GenerationUnreadableError(f"{self.path}: not a generation directory name")
        self.manifest: Manifest = read_manifest(self.path)
        check_readable(self.manifest, where=f"generation {self.name}")
        if self.manifest.id != parsed[0]:
            raise GenerationUnreadableError(
                f"{self.path}: manifest id {self.manifest.id} does not match the directory name"
            )
        self._data_path = self.path / DATA_FILENAME
        self._hold_fd: int | None = None
        self._closed = True  # until the environments are open
        self._stores: list[_Store] = []
        self._owner: dict[bytes, _Store] = {}
        layered = bool(self.manifest.layers)
        try:
            self._root = _Store(self.path, self.manifest.data_bytes, "data file")
            self._stores.append(self._root)
            layer_stores: list[_Store] = []
            for entry in self.manifest.layers:
                if not is_layer_directory(entry.directory):
                    raise GenerationUnreadableError(
                        f"{self.path}: manifest names layer directory {entry.directory!r} of repository "
                        f"{entry.repository!r}, which is not a layer directory (damaged manifest)"
                    )
                store = _Store(self.path / entry.directory, entry.data_bytes, f"the layer of {entry.repository}")
                self._stores.append(store)
                layer_stores.append(store)
            self.check_intact()
        except GenerationUnreadableError:
            self._release_hold()
            raise
        if hold:
            self._hold_fd = _take_shared_hold(self.path)
        try:
            if layered:
                self._root.open(keys.LINK_DATABASES, _LINK_REQUIRED)
                for store in layer_stores:
                    store.open(keys.LAYER_DATABASES, _LAYER_REQUIRED)
            else:
                self._root.open(keys.ALL_DATABASES, keys.REQUIRED_DATABASES)
        except GenerationUnreadableError:
            self.close()
            raise
        self._closed = False
        # The stores holding each kind of fact: for an older generation all of them are the one environment.
        self._layers: list[_Store] = layer_stores if layered else [self._root]
        self._layer_of: dict[str, _Store] | None = (
            {e.repository: st for e, st in zip(self.manifest.layers, layer_stores, strict=True)} if layered else None
        )
        self._link: _Store | None = self._root if layered else None
        # Lexical documents are numbered per layer; the generation's numbering runs on from layer to layer.
        bases, total = [], 0
        for entry in self.manifest.layers:
            bases.append(total)
            total += entry.lexicon_documents
        self._doc_bases: list[int] = bases if layered else [0]
        # Keys that begin with a name then a repository (by_name, by_qualified_name, unresolved) are in one
        # repository's layer each: their key order across layers is the layers' order by repository name.
        self._by_repository: list[_Store] = (
            [
                st
                for _n, st in sorted(
                    ((e.repository.encode(), st) for e, st in zip(self.manifest.layers, layer_stores, strict=True)),
                    key=lambda p: p[0],
                )
            ]
            if layered
            else [self._root]
        )
        self.env = self._root.env  # the link layer's (older generations: the only) environment
        self._dbs = self._root.dbs

    # --- lifecycle -----------------------------------------------------------

    @property
    def id(self) -> int:
        return self.manifest.id

    @property
    def built_at_ns(self) -> int:
        return self.manifest.built_at_ns

    @property
    def feature_version(self) -> int:
        return self.manifest.feature_version

    @property
    def closed(self) -> bool:
        """Whether the environments have been unmapped."""
        return self._closed

    def close(self) -> None:
        """Unmap the environments and release the retention hold (idempotent)."""
        self._closed = True
        for store in self._stores:
            store.unmap()
        self._release_hold()

    def _release_hold(self) -> None:
        if self._hold_fd is not None:
            os.close(self._hold_fd)
            self._hold_fd = None
        for store in self._stores:
            if store.fd is not None:
                os.close(store.fd)
                store.fd = None

    def check_intact(self) -> None:
        """Refuse a data file whose size no longer matches the manifest (truncated or grown under us).

        Reading a mapped page past a shortened file kills the process with SIGBUS, so servers call
        this before mapping, before each call and on every poll: one fstat per layer.
        """
        if not self._stores or self._stores[0].fd is None:
            raise GenerationUnreadableError(f"generation {self.name} is closed")
        for store in self._stores:
            store.check()

    def __enter__(self) -> Generation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify_digest(self, *, isolated: bool = False) -> None:
        """Recompute the content digest of every layer (a full read; keep it off the startup path).

        Damage that LMDB itself trips over (a corrupt page, a broken transaction) is reported
        as a digest failure too, naming LMDB's reason. ``isolated`` reads in a child process
        (snapshot_format.verify): a generation that is not known to be whole can kill its reader
        with SIGBUS, and then only the child dies.
        """
        self.check_intact()
        if isolated:
            verify_isolated(self.path, self.name)
            return
        m = self.manifest
        expected = [(self._root, m.link_digest if m.layers else m.digest, "")]
        expected += [
            (st, e.digest, f" (the layer of {e.repository})") for e, st in zip(m.layers, self._layers, strict=False)
        ]
        for store, digest, what in expected:
            assert store.env is not None
            try:
                actual = digest_environment(store.env)
            except lmdb.Error as exc:
                raise DigestMismatchError(
                    f"generation {self.name}{what}: damaged, LMDB cannot read it: {exc}"
                ) from None
            if actual != digest:
                raise DigestMismatchError(
                    f"generation {self.name}{what}: content digest {actual[:16]}… differs from the manifest's "
                    f"{digest[:16]}…"
                )
        if m.layers and layers_digest(m.link_digest, [(e.repository, e.digest) for e in m.layers]) != m.digest:
            raise DigestMismatchError(
                f"generation {self.name}: the manifest's digest does not cover its layers (damaged manifest)"
            )

    # --- small helpers -------------------------------------------------------

    def _repo(self, repository: str) -> _Store | None:
        """The store holding a repository's own facts (None: no such repository in the generation)."""
        if self._layer_of is None:
            return self._root
        return self._layer_of.get(repository)

    def _owner_of(self, key16: bytes) -> tuple[_Store | None, bytes | None]:
        """The layer holding a symbol, and its stored record (one probe per layer the first time)."""
        if self._layer_of is None:
            return self._root, self._root_get(keys.DB_SYMBOLS, key16)
        known = self._owner.get(key16)
        if known is not None:
            return known, _get(known, keys.DB_SYMBOLS, key16)
        for store in self._layers:
            raw = _get(store, keys.DB_SYMBOLS, key16)
            if raw is not None:
                if len(self._owner) >= _OWNER_CACHE_LIMIT:
                    self._owner.clear()
                self._owner[key16] = store
                return store, raw
        return None, None

    def _root_get(self, db: bytes, key: bytes) -> bytes | None:
        return _get(self._root, db, key)

    def _get(self, db: bytes, key: bytes) -> bytes | None:
        return _get(self._root, db, key)

    def _scan_in(
        self, stores: Iterable[_Store | None], db: bytes, start: bytes, *, prefix: bytes | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        return _merged([_scan(st, db, start, prefix=prefix) for st in stores if st is not None and db in st.dbs])

    def _scan(self, db: bytes, start: bytes, *, prefix: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Items of the link layer (older generations: the only environment) from ``start`` under ``prefix``."""
        return _scan(self._root, db, start, prefix=prefix)

    def _scan_keys_in(self, stores: Iterable[_Store | None], db: bytes, start: bytes) -> Iterator[bytes]:
        scans = [_scan_keys(st, db, start) for st in stores if st is not None and db in st.dbs]
        if len(scans) == 1:
            return scans[0]
        return heapq.merge(*scans)

    # --- metadata --------------------------------------------------------------

    def counts(self) -> records.Counts:
        raw = self._get(keys.DB_META, keys.META_COUNTS)
        return codec.decode(records.Counts, raw) if raw else _EMPTY_COUNTS

    def breakdown(self) -> records.Breakdown:
        raw = self._get(keys.DB_META, keys.META_BREAKDOWN)
        return codec.decode(records.Breakdown, raw) if raw else records.Breakdown()

    def repositories(self) -> list[records.Repository]:
        """Repositories in registry order."""
        raw = self._get(keys.DB_META, keys.META_REPOSITORY_ORDER)
        names = codec.decode_repository_order(raw) if raw else []
        out = []
        for name in names:
            repo = self.repository(name)
            if repo is not None:
                out.append(repo)
        return out

    def repository(self, name: str) -> records.Repository | None:
        raw = self._get(keys.DB_REPOSITORIES, keys.text(name))
        if not raw:
            return None
        repo = codec.REPOSITORY.decode(raw)
        here = self.checkouts.get(name)
        if here and (not repo.root or not os.path.isdir(repo.root)):
            repo = msgspec.structs.replace(repo, root=here)
        return repo

    # --- files -------------------------------------------------------------------

    def file(self, repository: str, path: str) -> records.File | None:
        store = self._repo(repository)
        raw = _get(store, keys.DB_FILES, keys.file_key(repository, path)) if store is not None else None
        return codec.FILE.decode(raw) if raw else None

    def files(self, repository: str, path_prefix: str = "") -> Iterator[records.File]:
        """Files of a repository whose path starts with ``path_prefix``, in path order."""
        start = keys.text(repository) + keys.SEP + keys.text(path_prefix)
        for _key, value in self._scan_in([self._repo(repository)], keys.DB_FILES, start):
            yield codec.FILE.decode(value)

    # --- symbols -------------------------------------------------------------------

    def symbol(self, stable_key: str) -> records.Symbol | None:
        """The symbol with this text key, or None (also for a malformed key)."""
        try:
            raw16 = keys.key_to_bytes(stable_key)
        except ValueError:
            return None
        return self.symbol_by_raw(raw16)

    def symbol_by_raw(self, key16: bytes) -> records.Symbol | None:
        raw = self._owner_of(key16)[1]
        return codec.SYMBOL.decode(raw) if raw else None

    def symbol_raw_value(self, key16: bytes) -> bytes | None:
        """The stored bytes of a symbol record, undecoded (a caller that needs one field decodes only it)."""
        return self._owner_of(key16)[1]

    def symbols_by_raw(self, keys16: Iterable[bytes]) -> Iterator[records.Symbol]:
        """Symbols for many raw keys in one transaction (missing keys skipped)."""
        if self._layer_of is not None:
            for key16 in keys16:
                raw = self._owner_of(key16)[1]
                if raw:
                    yield codec.SYMBOL.decode(raw)
            return
        assert self._root.env is not None
        with self._root.env.begin(db=self._root.dbs[keys.DB_SYMBOLS]) as txn:
            for key16 in keys16:
                raw = txn.get(key16)
                if raw:
                    yield codec.SYMBOL.decode(raw)

    def _named_stores(self, repository: str | None) -> list[_Store | None]:
        stores: list[_Store | None] = [*self._by_repository] if repository is None else [self._repo(repository)]
        return stores

    def _index_keys(self, db: bytes, start: bytes, repository: str | None) -> Iterator[tuple[list[str], bytes]]:
        for key in itertools.chain.from_iterable(
            _scan_keys(st, db, start) for st in self._named_stores(repository) if st is not None
        ):
            yield keys.split_index_key(key)

    def _symbols_of_index(self, db: bytes, start: bytes, repository: str | None) -> list[records.Symbol]:
        if repository is not None and self._layer_of is not None:
            store = self._repo(repository)
            if store is None:
                return []
            out = []
            for key in _scan_keys(store, db, start):
                raw = _get(store, keys.DB_SYMBOLS, key[-keys.KEY_BYTES :])
                if raw:
                    out.append(codec.SYMBOL.decode(raw))
            return out
        raws = [k for _parts, k in self._index_keys(db, start, repository)]
        return list(self.symbols_by_raw(raws))

    def symbols_by_qualified_name(
        self, qualified_name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        """Exact qualified-name matches, narrowed by repository and path prefix."""
        start = keys.prefix(qualified_name)
        if repository is not None:
            start = keys.prefix(qualified_name, repository)
            if path_prefix:
                start += keys.text(path_prefix)
        return self._symbols_of_index(keys.DB_BY_QUALIFIED_NAME, start, repository)

    def symbols_by_name(
        self, name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        """Exact unqualified-name matches, narrowed by repository and path prefix."""
        start = keys.prefix(name)
        if repository is not None:
            start = keys.prefix(name, repository)
            if path_prefix:
                start += keys.text(path_prefix)
        return self._symbols_of_index(keys.DB_BY_NAME, start, repository)

    def name_keys(self, name: str, repository: str | None = None) -> Iterator[bytes]:
        """Raw name-index keys (name NUL repository NUL path NUL key16) of exactly ``name``, undecoded, in order."""
        start = keys.prefix(name) if repository is None else keys.prefix(name, repository)
        return itertools.chain.from_iterable(
            _scan_keys(st, keys.DB_BY_NAME, start) for st in self._named_stores(repository) if st is not None
        )

    def distinct_names(self, name_prefix: str = "") -> Iterator[str]:
        """Each distinct name of the name index starting with ``name_prefix``, in order, one seek per name."""
        start = keys.text(name_prefix)
        scans = [_distinct_names(st, start) for st in self._layers]
        if len(scans) == 1:
            for name in scans[0]:
                yield name.decode("utf-8")
            return
        last = None
        for name in heapq.merge(*scans):
            if name != last:
                yield name.decode("utf-8")
                last = name

    @contextmanager
    def name_trie(self) -> Iterator[NameTrie]:
        """The name index read as a trie of name bytes, in one read transaction (bounded fuzzy lookups)."""
        with contextlib.ExitStack() as stack:
            cursors = []
            for store in self._layers:
                assert store.env is not None
                txn = stack.enter_context(store.env.begin(db=store.dbs[keys.DB_BY_NAME]))
                cursors.append(txn.cursor())
            yield NameTrie(*cursors)

    def declarations(self, repository: str, path: str, *, directory: bool = False) -> Iterator[records.Symbol]:
        """Declarations of a file (or of every file under a directory), in file and source order."""
        if directory:
            start = keys.text(repository) + keys.SEP + keys.text(path.rstrip("/") + "/" if path else "")
        else:
            start = keys.prefix(repository, path)
        store = self._repo(repository)
        if store is None or store.env is None:
            return
        with (
            store.env.begin(db=store.dbs[keys.DB_BY_FILE]) as txn,
            store.env.begin(db=store.dbs[keys.DB_SYMBOLS]) as symtxn,
        ):
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return
            for key in cursor.iternext(keys=True, values=False):
                if not key.startswith(start):
                    return
                raw = symtxn.get(key[-keys.KEY_BYTES :])
                if raw:
                    yield codec.SYMBOL.decode(raw)

    def declaration_keys(self, repository: str) -> Iterator[bytes]:
        """The raw keys of every declaration of a repository, from the file index alone (nothing decoded)."""
        store = self._repo(repository)
        if store is None:
            return
        for key in _scan_keys(store, keys.DB_BY_FILE, keys.text(repository) + keys.SEP):
            yield key[-keys.KEY_BYTES :]

    # --- edges ---------------------------------------------------------------------

    def _edge_scan(self, db: bytes, key16: bytes, start: bytes) -> Iterator[tuple[bytes, bytes]]:
        """The edges at one end of a symbol: its own layer's (within its repository) and the link layer's
        (across repositories), in key order. Most symbols have none in the link layer: then one scan."""
        if self._link is None:
            return _scan(self._root, db, start)
        owner = self._owner.get(key16) or self._owner_of(key16)[0]
        across = list(_scan(self._link, db, start))
        if owner is None:
            return iter(across)
        if not across:
            return _scan(owner, db, start)
        return heapq.merge(_scan(owner, db, start), across, key=operator.itemgetter(0))

    def _edges(self, db: bytes, key16: bytes, kinds: Iterable[int] | None, outgoing: bool) -> Iterator[records.Edge]:
        starts = [key16] if kinds is None else [key16 + bytes((k,)) for k in sorted(set(kinds))]
        for start in starts:
            for key, value in self._edge_scan(db, key16, start):
                first, kind, second, prov = keys.split_edge_key(key)
                ev = codec.EDGE_VALUE.decode(value)
                src, dst = (first, second) if outgoing else (second, first)
                yield records.Edge(
                    kind=kind,
                    source=keys.key_from_bytes(src),
                    target=keys.key_from_bytes(dst),
                    confidence=ev.confidence,
                    provenance=prov,
                    line=ev.line,
                    col=ev.col,
                    count=ev.count,
                )

    def edges_out(self, stable_key: str, kinds: Iterable[int] | None = None) -> Iterator[records.Edge]:
        """Edges whose source is the symbol, optionally only of some kinds."""
        return self._edges(keys.DB_EDGES_OUT, keys.key_to_bytes(stable_key), kinds, True)

    def edges_in(self, stable_key: str, kinds: Iterable[int] | None = None) -> Iterator[records.Edge]:
        """Edges whose target is the symbol, optionally only of some kinds."""
        return self._edges(keys.DB_EDGES_IN, keys.key_to_bytes(stable_key), kinds, False)

    def neighbours_raw(
        self, key16: bytes, *, outgoing: bool, kinds: frozenset[int] | None = None
    ) -> Iterator[tuple[int, bytes, int, int]]:
        """(kind, other raw key, provenance, confidence) without building records: the traversal hot path."""
        db = keys.DB_EDGES_OUT if outgoing else keys.DB_EDGES_IN
        for key, value in self._edge_scan(db, key16, key16):
            kind = key[16]
            if kinds is not None and kind not in kinds:
                continue
            # EdgeValue is a msgpack array whose first element is the confidence (a positive fixint).
            yield kind, key[17:33], key[33], value[1]

    # --- unresolved ------------------------------------------------------------------

    def unresolved_by_name(self, name: str) -> Iterator[records.Unresolved]:
        start = keys.prefix(name)
        for store in self._by_repository:
            for _key, value in _scan(store, keys.DB_UNRESOLVED, start):
                yield codec.UNRESOLVED.decode(value)

    def count_unresolved_by_name(self, name: str) -> int:
        """How many unresolved references request exactly ``name`` (keys only, nothing decoded)."""
        start = keys.prefix(name)
        return sum(1 for st in self._layers for _ in _scan_keys(st, keys.DB_UNRESOLVED, start))

    def unresolved_in(self, repository: str, path_prefix: str = "") -> Iterator[records.Unresolved]:
        """Unresolved references recorded in files under ``path_prefix`` ("" = the whole repository)."""
        start = keys.text(repository) + keys.SEP + keys.text(path_prefix)
        for _key, value in self._scan_in([self._repo(repository)], keys.DB_UNRESOLVED_BY_FILE, start):
            yield codec.UNRESOLVED.decode(value)

    def unresolved_on_lines(self, repository: str, path: str, first: int, last: int) -> Iterator[records.Unresolved]:
        """Unresolved references recorded in one file on lines ``first`` to ``last`` (a declaration's span)."""
        bound = keys.prefix(repository, path)
        end = keys.unresolved_file_key(repository, path, last + 1, 0, 0)
        for key, value in self._scan_in(
            [self._repo(repository)],
            keys.DB_UNRESOLVED_BY_FILE,
            keys.unresolved_file_key(repository, path, first, 0, 0),
            prefix=bound,
        ):
            if key >= end:
                return
            yield codec.UNRESOLVED.decode(value)

    def unresolved_scopes(self, repository: str) -> Iterator[records.Unresolved]:
        """Failures that name no file (a package or module that could not be read)."""
        for _key, value in self._scan_in(
            [self._repo(repository)], keys.DB_UNRESOLVED_BY_FILE, keys.prefix(repository, "")
        ):
            yield codec.UNRESOLVED.decode(value)

    # --- lexical index (find_by_intent) -------------------------------------------------------

    def lexicon_stats(self) -> LexiconStats | None:
        """The lexicon's own header, or None when the generation has no lexical index."""
        if not any(keys.DB_LEXICON in st.dbs for st in self._layers):
            return None
        raw = self._get(keys.DB_META, keys.META_LEXICON_STATS)
        return lexical.decode_stats(raw) if raw else None

    def lexicon_unusable(self) -> str | None:
        """Why find_by_intent cannot rank this generation, or None when it can.

        A lexicon is usable only when it was written under the term rules this build queries with:
        at least ``MIN_FEATURE_FOR["lexicon"]`` and the same LEXICAL_VERSION.
        """
        needed = MIN_FEATURE_FOR["lexicon"]
        stats = self.lexicon_stats()
        if self.manifest.feature_version < needed or stats is None:
            return (
                f"generation {self.id} (feature version {self.manifest.feature_version}) has no lexical index "
                f"this server can rank (needs feature version {needed}); re-index with kivgraph index"
            )
        if stats.lexical_version != lexical.LEXICAL_VERSION:
            return (
                f"generation {self.id} was indexed with lexical terms v{stats.lexical_version} and this server "
                f"ranks with v{lexical.LEXICAL_VERSION}; re-index with kivgraph index"
            )
        return None

    def lexicon_postings(self, term: str) -> list[tuple[int, float]]:
        """(document, weighted term frequency) for every document containing ``term``."""
        key = keys.text(term)
        out: list[tuple[int, float]] = []
        for base, store in zip(self._doc_bases, self._layers, strict=True):
            if keys.DB_LEXICON not in store.dbs:
                continue
            raw = _get(store, keys.DB_LEXICON, key)
            if raw:
                postings = lexical.decode_postings(raw)
                out.extend(postings if not base else [(doc + base, tf) for doc, tf in postings])
        return out

    def lexicon_document(self, doc: int) -> LexiconDocument | None:
        """(repository, path, language, weighted length) of a lexical document."""
        if doc < 0 or not self._layers:
            return None
        i = bisect.bisect_right(self._doc_bases, doc) - 1
        store = self._layers[i]
        if keys.DB_LEXICON_DOCS not in store.dbs:
            return None
        raw = _get(store, keys.DB_LEXICON_DOCS, keys.lexicon_doc_key(doc - self._doc_bases[i]))
        return lexical.decode_document(raw) if raw else None

    def lexicon_documents(self) -> Iterator[tuple[int, LexiconDocument]]:
        """Every lexical document with its id, in id order (none without a lexicon)."""
        for base, store in zip(self._doc_bases, self._layers, strict=True):
            if keys.DB_LEXICON_DOCS not in store.dbs:
                continue
            for key, value in _scan(store, keys.DB_LEXICON_DOCS, b""):
                yield base + int.from_bytes(key, "big"), lexical.decode_document(value)

    # --- package dependencies ------------------------------------------------------------

    def package_dependencies(
        self, provider_repository: str, provider_package: str | None = None
    ) -> Iterator[records.PackageDependency]:
        start = keys.prefix(provider_repository)
        if provider_package is not None:
            start = keys.prefix(provider_repository, provider_package)
        for _key, value in self._scan(keys.DB_PACKAGE_DEPS, start):
            yield codec.PACKAGE_DEPENDENCY.decode(value)


def layers_digest(link_digest: str, layers: Iterable[tuple[str, str]]) -> str:
    """The digest of a layered generation: its link layer's and each repository layer's, in layer order."""
    h = hashlib.blake2b(digest_size=32)
    h.update(b"kivgraph-layers\x00" + link_digest.encode() + b"\x00")
    for repository, digest in layers:
        h.update(repository.encode("utf-8", "surrogatepass") + b"\x00" + digest.encode() + b"\x00")
    return h.hexdigest()


def _get(store: _Store, db: bytes, key: bytes) -> bytes | None:
    handle = store.dbs.get(db)
    if handle is None or store.env is None:
        return None
    with store.env.begin(db=handle) as txn:
        return txn.get(key)


def _scan(store: _Store, db: bytes, start: bytes, *, prefix: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
    """Items of one store from ``start`` while the key begins with ``prefix`` (default ``start``)."""
    bound = start if prefix is None else prefix
    handle = store.dbs.get(db)
    if handle is None or store.env is None:
        return
    with store.env.begin(db=handle) as txn:
        cursor = txn.cursor()
        if not cursor.set_range(start):
            return
        for key, value in cursor:
            if not key.startswith(bound):
                return
            yield key, value


def _scan_keys(store: _Store, db: bytes, start: bytes) -> Iterator[bytes]:
    handle = store.dbs.get(db)
    if handle is None or store.env is None:
        return
    with store.env.begin(db=handle) as txn:
        cursor = txn.cursor()
        if not cursor.set_range(start):
            return
        for key in cursor.iternext(keys=True, values=False):
            if not key.startswith(start):
                return
            yield key


def _distinct_names(store: _Store, start: bytes) -> Iterator[bytes]:
    assert store.env is not None
    with store.env.begin(db=store.dbs[keys.DB_BY_NAME]) as txn:
        cursor = txn.cursor()
        found = cursor.set_range(start)
        while found:
            key = cursor.key()
            if not key.startswith(start):
                return
            name = key[: key.index(keys.SEP)]
            yield name
            found = cursor.set_range(name + b"\x01")  # past every entry of this name


class NameTrie:
    """Walks the name index (name NUL repository NUL path NUL key) as a trie of the names' bytes (of every layer)."""

    def __init__(self, *cursors: lmdb.Cursor) -> None:
        self._cursors = cursors

    def children(self, prefix: bytes) -> list[int]:
        """The distinct bytes that follow ``prefix`` in some name, ascending, ``0`` first when ``prefix`` is a name.

        One seek per byte returned (and one more) per layer, whatever the number of names below ``prefix``.
        """
        if len(self._cursors) == 1:
            return _children(self._cursors[0], prefix)
        found: set[int] = set()
        for cursor in self._cursors:
            found.update(_children(cursor, prefix))
        return sorted(found)


def _children(cursor: lmdb.Cursor, prefix: bytes) -> list[int]:
    out: list[int] = []
    at = len(prefix)
    found = cursor.set_range(prefix)
    while found:
        key = bytes(cursor.key())
        if not key.startswith(prefix) or len(key) <= at:
            break
        byte = key[at]
        out.append(byte)
        if byte == 0xFF:
            break
        found = cursor.set_range(prefix + bytes((byte + 1,)))
    return out


def _take_shared_hold(generation_dir: Path) -> int:
    """A shared flock on the generation's hold file: retention never deletes a held generation."""
    path = generation_dir / HOLD_FILENAME
    try:
        fd = open_regular(path)
    except IrregularFileError as exc:
        raise GenerationUnreadableError(f"{exc} (damaged generation)") from exc
    except OSError as exc:
        raise GenerationUnreadableError(f"{path}: cannot open hold file: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        # A publisher is deleting it right now; treat as unreadable.
        os.close(fd)
        raise GenerationUnreadableError(f"{generation_dir}: generation is being removed") from None
    return fd


def open_current(layout: StateLayout, *, hold: bool = False) -> Generation:
    """Open the generation CURRENT points at; NoGenerationError when there is no valid pointer."""
    pointer = read_pointer(layout)
    if pointer.name is None:
        raise NoGenerationError(pointer.problem or f"no published generation in {layout.state_dir}")
    return Generation(layout.generations_dir / pointer.name, hold=hold)


def open_newest_readable(
    layout: StateLayout, *, hold: bool = False, skip: Iterable[str] = ()
) -> tuple[Generation, list[str]]:
    """Open CURRENT, else the newest generation that opens; returns it and the refusal reasons.

    A damaged or invalid CURRENT is one of the reasons, not an error: the newest generation on
    disk takes over until the next publication rewrites the pointer.
    """
    refused: list[str] = []
    skipped = set(skip)
    pointer = read_pointer(layout)
    if pointer.problem:
        refused.append(pointer.problem)
    name = pointer.name
    candidates: list[Path] = []
    if name is not None and name not in skipped:
        candidates.append(layout.generations_dir / name)
    for _gid, _fmt, path in reversed(list_generations(layout)):
        if path.name != name and path.name not in skipped:
            candidates.append(path)
    for path in candidates:
        try:
            return Generation(path, hold=hold), refused
        except GenerationUnreadableError as exc:
            refused.append(str(exc))
    if candidates or skipped:
        raise NoGenerationError(f"every generation in {layout.generations_dir} is unreadable: {'; '.join(refused)}")
    raise NoGenerationError(
        f"no published generation in {layout.state_dir}" + (f" ({'; '.join(refused)})" if refused else "")
    )


def open_newest_intact(layout: StateLayout, *, skip: Iterable[str] = ()) -> tuple[Generation, list[str]]:
    """Like ``open_newest_readable``, but each candidate's full digest is checked first (a whole read)."""
    skipped = set(skip)
    refused: list[str] = []
    while True:
        try:
            generation, more = open_newest_readable(layout, skip=skipped)
        except NoGenerationError:
            if not refused:
                raise
            raise NoGenerationError(
                f"every generation in {layout.generations_dir} is unreadable: {'; '.join(refused)}"
            ) from None
        refused.extend(r for r in more if r not in refused)
        try:
            generation.verify_digest(isolated=True)
        except GenerationUnreadableError as exc:
            generation.close()
            refused.append(str(exc))
            skipped.add(generation.name)
            continue
        return generation, refused


def link_edges(generation: Generation) -> Iterator[tuple[records.Edge, str, str]]:
    """The edges between two repositories of a layered generation (its link layer), each with the
    repositories of its source and its target: what an indexer carries over for repositories it does not
    rebuild. Nothing for a generation of one environment."""
    link = generation._link
    if link is None:
        return
    repository_of = {
        id(store): e.repository for e, store in zip(generation.manifest.layers, generation._layers, strict=True)
    }
    for key, value in _scan(link, keys.DB_EDGES_OUT, b""):
        src, kind, dst, prov = keys.split_edge_key(key)
        ev = codec.EDGE_VALUE.decode(value)
        ends = [generation._owner_of(raw)[0] for raw in (src, dst)]
        yield (
            records.Edge(
                kind=kind,
                source=keys.key_from_bytes(src),
                target=keys.key_from_bytes(dst),
                confidence=ev.confidence,
                provenance=prov,
                line=ev.line,
                col=ev.col,
                count=ev.count,
            ),
            repository_of.get(id(ends[0]), ""),
            repository_of.get(id(ends[1]), ""),
        )


# --- the digest check in a child (snapshot_format/verify.py is its program) ----------------------

VERIFY_TIMEOUT_SECONDS = 600.0


def verify_isolated(path: Path, name: str, timeout: float = VERIFY_TIMEOUT_SECONDS) -> None:
    """Recompute the digest of the generation at ``path`` in a child; DigestMismatchError says why it failed."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "snapshot_format.verify", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise DigestMismatchError(f"generation {name}: the digest check did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise DigestMismatchError(f"generation {name}: the digest check could not start: {exc}") from None
    if proc.returncode == 0:
        return
    if proc.returncode < 0:
        try:
            signame = signal.Signals(-proc.returncode).name
        except ValueError:
            signame = f"signal {-proc.returncode}"
        raise DigestMismatchError(
            f"generation {name}: damaged, reading it killed the reader ({signame}: "
            "its data points past the end of the file)"
        )
    reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    raise DigestMismatchError(reason)
