"""The content digest of a generation: BLAKE2b-256 over every sub-database in layout order.

The writer feeds items in the order a reader iterates them (databases in
keys.ALL_DATABASES order, keys ascending), so the digest computed while
writing must equal the one recomputed from disk.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable

import lmdb

from snapshot_format import keys

_LEN = struct.Struct(">II")


class DigestBuilder:
    """Streaming digest; feed (database, key, value) in layout order."""

    def __init__(self) -> None:
        self._hash = hashlib.blake2b(digest_size=32)
        self._db: bytes | None = None

    def add_many(self, db: bytes, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Feed consecutive items of one database (any chunking gives the same digest)."""
        if db != self._db:
            self._hash.update(b"\x01db" + db + b"\x00")
            self._db = db
        pack = _LEN.pack
        self._hash.update(b"".join([pack(len(k), len(v)) + k + v for k, v in items]))

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def digest_environment(env: lmdb.Environment) -> str:
    """Recompute the content digest of an open environment from its bytes."""
    builder = DigestBuilder()
    for name in keys.ALL_DATABASES:
        try:
            db = env.open_db(name, create=False)
        except lmdb.NotFoundError:
            continue  # written by an older feature version
        with env.begin(db=db, buffers=True) as txn:
            cursor = txn.cursor()
            chunk: list[tuple[bytes, bytes]] = []
            for key, value in cursor:
                chunk.append((bytes(key), bytes(value)))
                if len(chunk) >= 50_000:
                    builder.add_many(name, chunk)
                    chunk = []
            builder.add_many(name, chunk)
    return builder.hexdigest()
