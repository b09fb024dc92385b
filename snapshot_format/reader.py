"""The read-only reader of a published generation.

Opening is cheap (a manifest read, a few stats and a memory map); nothing is
loaded into Python objects until a query asks for it. The environment is
opened with ``readonly=True, lock=False``: safe because a published
generation is never written again, and it creates no file.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import lmdb
import msgspec

from snapshot_format import codec, keys, lexical, records
from snapshot_format.digest import digest_environment
from snapshot_format.errors import DigestMismatchError, GenerationUnreadableError, NoGenerationError
from snapshot_format.layout import (
    DATA_FILENAME,
    HOLD_FILENAME,
    StateLayout,
    list_generations,
    parse_generation_name,
    read_pointer,
)
from snapshot_format.lexical import LexiconDocument, LexiconStats
from snapshot_format.manifest import Manifest, check_readable, read_manifest
from snapshot_format.regular import IrregularFileError, open_regular
from snapshot_format.versions import MIN_FEATURE_FOR

_EMPTY_COUNTS = records.Counts()


class Generation:
    """One published generation, mapped read-only."""

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
        self._data_fd: int | None = None
        self._closed = True  # until the environment is open
        try:
            # Kept open: checking that the mapped file still has the manifest's size is one fstat.
            self._data_fd = open_regular(self._data_path)
        except IrregularFileError as exc:
            raise GenerationUnreadableError(f"{exc} (damaged generation)") from exc
        except OSError as exc:
            raise GenerationUnreadableError(
                f"{self._data_path}: data file cannot be opened: {exc.strerror or exc}"
            ) from None
        try:
            self.check_intact()
        except GenerationUnreadableError:
            self._release_hold()
            raise
        if hold:
            self._hold_fd = _take_shared_hold(self.path)
        try:
            self.env = lmdb.open(
                str(self.path),
                readonly=True,
                lock=False,
                max_dbs=len(keys.ALL_DATABASES) + 4,
                subdir=True,
                create=False,
                readahead=False,
                max_readers=1024,
            )
            self._closed = False
            self._dbs = {}
            for name in keys.ALL_DATABASES:
                try:
                    self._dbs[name] = self.env.open_db(name, create=False)
                except lmdb.NotFoundError:
                    if name in keys.REQUIRED_DATABASES:
                        raise
        except lmdb.NotFoundError as exc:
            self.close()
            raise GenerationUnreadableError(f"{self.path}: a required sub-database is missing: {exc}") from exc
        except lmdb.Error as exc:
            self.close()
            raise GenerationUnreadableError(f"{self.path}: cannot open LMDB environment: {exc}") from exc

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
        """Whether the environment has been unmapped."""
        return self._closed

    def close(self) -> None:
        """Unmap the environment and release the retention hold (idempotent)."""
        if not self._closed:
            self._closed = True
            self.env.close()
        self._release_hold()

    def _release_hold(self) -> None:
        if self._hold_fd is not None:
            os.close(self._hold_fd)
            self._hold_fd = None
        if self._data_fd is not None:
            os.close(self._data_fd)
            self._data_fd = None

    def check_intact(self) -> None:
        """Refuse a data file whose size no longer matches the manifest (truncated or grown under us).

        Reading a mapped page past a shortened file kills the process with SIGBUS, so servers call
        this before mapping, before each call and on every poll: one fstat.
        """
        if self._data_fd is None:
            raise GenerationUnreadableError(f"generation {self.name} is closed")
        st = os.fstat(self._data_fd)
        if st.st_nlink == 0:
            raise GenerationUnreadableError(f"{self._data_path}: data file was deleted while mapped")
        if st.st_size != self.manifest.data_bytes:
            raise GenerationUnreadableError(
                f"{self._data_path}: size {st.st_size} differs from the {self.manifest.data_bytes} bytes "
                "the manifest records"
            )

    def __enter__(self) -> Generation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verify_digest(self, *, isolated: bool = False) -> None:
        """Recompute the content digest (a full read; keep it off the startup path).

        Damage that LMDB itself trips over (a corrupt page, a broken transaction) is reported
        as a digest failure too, naming LMDB's reason. ``isolated`` reads in a child process
        (snapshot_format.verify): a generation that is not known to be whole can kill its reader
        with SIGBUS, and then only the child dies.
        """
        self.check_intact()
        if isolated:
            from snapshot_format.verify import verify_isolated

            verify_isolated(self.path, self.name)
            return
        try:
            actual = digest_environment(self.env)
        except lmdb.Error as exc:
            raise DigestMismatchError(f"generation {self.name}: damaged, LMDB cannot read it: {exc}") from None
        if actual != self.manifest.digest:
            raise DigestMismatchError(
                f"generation {self.name}: content digest {actual[:16]}… differs from the manifest's "
                f"{self.manifest.digest[:16]}…"
            )

    # --- small helpers -------------------------------------------------------

    def _get(self, db: bytes, key: bytes) -> bytes | None:
        with self.env.begin(db=self._dbs[db]) as txn:
            return txn.get(key)

    def _scan(self, db: bytes, start: bytes, *, prefix: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Items from ``start`` while the key begins with ``prefix`` (default ``start``)."""
        bound = start if prefix is None else prefix
        with self.env.begin(db=self._dbs[db]) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return
            for key, value in cursor:
                if not key.startswith(bound):
                    return
                yield key, value

    def _scan_keys(self, db: bytes, start: bytes) -> Iterator[bytes]:
        with self.env.begin(db=self._dbs[db]) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return
            for key in cursor.iternext(keys=True, values=False):
                if not key.startswith(start):
                    return
                yield key

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
        raw = self._get(keys.DB_FILES, keys.file_key(repository, path))
        return codec.FILE.decode(raw) if raw else None

    def files(self, repository: str, path_prefix: str = "") -> Iterator[records.File]:
        """Files of a repository whose path starts with ``path_prefix``, in path order."""
        start = keys.text(repository) + keys.SEP + keys.text(path_prefix)
        for _key, value in self._scan(keys.DB_FILES, start):
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
        raw = self._get(keys.DB_SYMBOLS, key16)
        return codec.SYMBOL.decode(raw) if raw else None

    def symbol_raw_value(self, key16: bytes) -> bytes | None:
        """The stored bytes of a symbol record, undecoded (a caller that needs one field decodes only it)."""
        return self._get(keys.DB_SYMBOLS, key16)

    def symbols_by_raw(self, keys16: Iterable[bytes]) -> Iterator[records.Symbol]:
        """Symbols for many raw keys in one transaction (missing keys skipped)."""
        with self.env.begin(db=self._dbs[keys.DB_SYMBOLS]) as txn:
            for key16 in keys16:
                raw = txn.get(key16)
                if raw:
                    yield codec.SYMBOL.decode(raw)

    def _index_keys(self, db: bytes, start: bytes) -> Iterator[tuple[list[str], bytes]]:
        for key in self._scan_keys(db, start):
            yield keys.split_index_key(key)

    def symbols_by_qualified_name(
        self, qualified_name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        """Exact qualified-name matches, narrowed by repository and path prefix."""
        start = keys.prefix(qualified_name)
        if repository is not None:
            start = keys.prefix(qualified_name, repository)
            if path_prefix:
                start += keys.text(path_prefix)
        raws = [k for _parts, k in self._index_keys(keys.DB_BY_QUALIFIED_NAME, start)]
        return list(self.symbols_by_raw(raws))

    def symbols_by_name(
        self, name: str, repository: str | None = None, path_prefix: str | None = None
    ) -> list[records.Symbol]:
        """Exact unqualified-name matches, narrowed by repository and path prefix."""
        start = keys.prefix(name)
        if repository is not None:
            start = keys.prefix(name, repository)
            if path_prefix:
                start += keys.text(path_prefix)
        raws = [k for _parts, k in self._index_keys(keys.DB_BY_NAME, start)]
        return list(self.symbols_by_raw(raws))

    def name_keys(self, name: str, repository: str | None = None) -> Iterator[bytes]:
        """Raw name-index keys (name NUL repository NUL path NUL key16) of exactly ``name``, undecoded, in order."""
        start = keys.prefix(name) if repository is None else keys.prefix(name, repository)
        return self._scan_keys(keys.DB_BY_NAME, start)

    def distinct_names(self, name_prefix: str = "") -> Iterator[str]:
        """Each distinct name of the name index starting with ``name_prefix``, in order, one seek per name."""
        start = keys.text(name_prefix)
        with self.env.begin(db=self._dbs[keys.DB_BY_NAME]) as txn:
            cursor = txn.cursor()
            found = cursor.set_range(start)
            while found:
                key = cursor.key()
                if not key.startswith(start):
                    return
                name = key[: key.index(keys.SEP)]
                yield name.decode("utf-8")
                found = cursor.set_range(name + b"\x01")  # past every entry of this name

    @contextmanager
    def name_trie(self) -> Iterator[NameTrie]:
        """The name index read as a trie of name bytes, in one read transaction (bounded fuzzy lookups)."""
        with self.env.begin(db=self._dbs[keys.DB_BY_NAME]) as txn:
            yield NameTrie(txn.cursor())

    def declarations(self, repository: str, path: str, *, directory: bool = False) -> Iterator[records.Symbol]:
        """Declarations of a file (or of every file under a directory), in file and source order."""
        if directory:
            start = keys.text(repository) + keys.SEP + keys.text(path.rstrip("/") + "/" if path else "")
        else:
            start = keys.prefix(repository, path)
        with (
            self.env.begin(db=self._dbs[keys.DB_BY_FILE]) as txn,
            self.env.begin(db=self._dbs[keys.DB_SYMBOLS]) as symtxn,
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
        for key in self._scan_keys(keys.DB_BY_FILE, keys.text(repository) + keys.SEP):
            yield key[-keys.KEY_BYTES :]

    # --- edges ---------------------------------------------------------------------

    def _edges(self, db: bytes, key16: bytes, kinds: Iterable[int] | None, outgoing: bool) -> Iterator[records.Edge]:
        starts = [key16] if kinds is None else [key16 + bytes((k,)) for k in sorted(set(kinds))]
        with self.env.begin(db=self._dbs[db]) as txn:
            cursor = txn.cursor()
            for start in starts:
                if not cursor.set_range(start):
                    continue
                for key, value in cursor:
                    if not key.startswith(start):
                        break
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
        db = self._dbs[keys.DB_EDGES_OUT if outgoing else keys.DB_EDGES_IN]
        with self.env.begin(db=db) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(key16):
                return
            for key, value in cursor:
                if not key.startswith(key16):
                    return
                kind = key[16]
                if kinds is not None and kind not in kinds:
                    continue
                # EdgeValue is a msgpack array whose first element is the confidence (a positive fixint).
                yield kind, key[17:33], key[33], value[1]

    # --- unresolved ------------------------------------------------------------------

    def unresolved_by_name(self, name: str) -> Iterator[records.Unresolved]:
        for _key, value in self._scan(keys.DB_UNRESOLVED, keys.prefix(name)):
            yield codec.UNRESOLVED.decode(value)

    def count_unresolved_by_name(self, name: str) -> int:
        """How many unresolved references request exactly ``name`` (keys only, nothing decoded)."""
        return sum(1 for _ in self._scan_keys(keys.DB_UNRESOLVED, keys.prefix(name)))

    def unresolved_in(self, repository: str, path_prefix: str = "") -> Iterator[records.Unresolved]:
        """Unresolved references recorded in files under ``path_prefix`` ("" = the whole repository)."""
        start = keys.text(repository) + keys.SEP + keys.text(path_prefix)
        for _key, value in self._scan(keys.DB_UNRESOLVED_BY_FILE, start):
            yield codec.UNRESOLVED.decode(value)

    def unresolved_on_lines(self, repository: str, path: str, first: int, last: int) -> Iterator[records.Unresolved]:
        """Unresolved references recorded in one file on lines ``first`` to ``last`` (a declaration's span)."""
        bound = keys.prefix(repository, path)
        end = keys.unresolved_file_key(repository, path, last + 1, 0, 0)
        for key, value in self._scan(
            keys.DB_UNRESOLVED_BY_FILE, keys.unresolved_file_key(repository, path, first, 0, 0), prefix=bound
        ):
            if key >= end:
                return
            yield codec.UNRESOLVED.decode(value)

    def unresolved_scopes(self, repository: str) -> Iterator[records.Unresolved]:
        """Failures that name no file (a package or module that could not be read)."""
        for _key, value in self._scan(keys.DB_UNRESOLVED_BY_FILE, keys.prefix(repository, "")):
            yield codec.UNRESOLVED.decode(value)

    # --- lexical index (find_by_intent) -------------------------------------------------------

    def lexicon_stats(self) -> LexiconStats | None:
        """The lexicon's own header, or None when the generation has no lexical index."""
        if keys.DB_LEXICON not in self._dbs:
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
        raw = self._get(keys.DB_LEXICON, keys.text(term))
        return lexical.decode_postings(raw) if raw else []

    def lexicon_document(self, doc: int) -> LexiconDocument | None:
        """(repository, path, language, weighted length) of a lexical document."""
        raw = self._get(keys.DB_LEXICON_DOCS, keys.lexicon_doc_key(doc))
        return lexical.decode_document(raw) if raw else None

    def lexicon_documents(self) -> Iterator[tuple[int, LexiconDocument]]:
        """Every lexical document with its id, in id order (none without a lexicon)."""
        if keys.DB_LEXICON_DOCS not in self._dbs:
            return
        for key, value in self._scan(keys.DB_LEXICON_DOCS, b""):
            yield int.from_bytes(key, "big"), lexical.decode_document(value)

    # --- package dependencies ------------------------------------------------------------

    def package_dependencies(
        self, provider_repository: str, provider_package: str | None = None
    ) -> Iterator[records.PackageDependency]:
        start = keys.prefix(provider_repository)
        if provider_package is not None:
            start = keys.prefix(provider_repository, provider_package)
        for _key, value in self._scan(keys.DB_PACKAGE_DEPS, start):
            yield codec.PACKAGE_DEPENDENCY.decode(value)


class NameTrie:
    """Walks the name index (name NUL repository NUL path NUL key) as a trie of the names' bytes."""

    def __init__(self, cursor: lmdb.Cursor) -> None:
        self._cursor = cursor

    def children(self, prefix: bytes) -> list[int]:
        """The distinct bytes that follow ``prefix`` in some name, ascending, ``0`` first when ``prefix`` is a name.

        One seek per byte returned (and one more), whatever the number of names below ``prefix``.
        """
        out: list[int] = []
        cursor = self._cursor
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
