"""The LMDB key layout of a generation: sub-database names and key builders.

Every query of the MCP surface is a key lookup or a prefix scan over these
sub-databases; FORMAT.md documents each with the query it serves. Text parts
are UTF-8 joined by NUL (names and paths never contain NUL), so byte order
equals the order of the tuple. Symbols are addressed inside the store by the
16 raw bytes of their stable key; the text form (base32) is what leaves the
process.
"""

from __future__ import annotations

import struct

SEP = b"\x00"
KEY_BYTES = 16

# name -> purpose (documented in FORMAT.md)
DB_META = b"meta"  # fixed keys below -> records
DB_REPOSITORIES = b"repositories"  # repo -> Repository
DB_FILES = b"files"  # repo NUL path -> File
DB_SYMBOLS = b"symbols"  # key16 -> Symbol
DB_BY_QUALIFIED_NAME = b"by_qualified_name"  # qn NUL repo NUL path NUL key16 -> ""
DB_BY_NAME = b"by_name"  # name NUL repo NUL path NUL key16 -> ""
DB_BY_FILE = b"by_file"  # repo NUL path NUL line:u32 col:u32 key16 -> ""
DB_EDGES_OUT = b"edges_out"  # src16 kind:u8 dst16 prov:u8 -> EdgeValue
DB_EDGES_IN = b"edges_in"  # dst16 kind:u8 src16 prov:u8 -> EdgeValue
DB_UNRESOLVED = b"unresolved"  # name NUL repo NUL path NUL line:u32 col:u32 seq:u32 -> Unresolved
DB_UNRESOLVED_BY_FILE = b"unresolved_by_file"  # repo NUL path NUL line:u32 col:u32 seq:u32 -> Unresolved
DB_PACKAGE_DEPS = (
    b"package_deps"  # provider_repo NUL provider_pkg NUL consumer_repo NUL consumer_pkg -> PackageDependency
)
DB_LEXICON = b"lexicon"  # term -> msgpack [doc:u32, weighted tf x100, ...] (find_by_intent postings)
DB_LEXICON_DOCS = b"lexicon_docs"  # doc:u32 -> msgpack [repo, path, language, weighted length x100]

ALL_DATABASES: tuple[bytes, ...] = (
    DB_META,
    DB_REPOSITORIES,
    DB_FILES,
    DB_SYMBOLS,
    DB_BY_QUALIFIED_NAME,
    DB_BY_NAME,
    DB_BY_FILE,
    DB_EDGES_OUT,
    DB_EDGES_IN,
    DB_UNRESOLVED,
    DB_UNRESOLVED_BY_FILE,
    DB_PACKAGE_DEPS,
    DB_LEXICON,
    DB_LEXICON_DOCS,
)

# Sub-databases every readable generation has; later additions are optional for readers.
REQUIRED_DATABASES: frozenset[bytes] = frozenset(ALL_DATABASES[:12])

# Layered generations (feature 10): what each layer holds. A repository's layer holds its own facts; the link
# layer (the generation directory's own data.mdb) holds the generation-wide meta, the repository records, the
# edges between two repositories and the package map. The link layer has no files or symbols, so a reader
# older than layers refuses it (a required sub-database is missing) instead of answering from it alone.
LINK_DATABASES: tuple[bytes, ...] = (DB_META, DB_REPOSITORIES, DB_EDGES_OUT, DB_EDGES_IN, DB_PACKAGE_DEPS)
LAYER_DATABASES: tuple[bytes, ...] = tuple(
    name for name in ALL_DATABASES if name not in (DB_REPOSITORIES, DB_PACKAGE_DEPS)
)

# Fixed keys of DB_META.
META_COUNTS = b"counts"
META_BREAKDOWN = b"breakdown"
META_REPOSITORY_ORDER = b"repository_order"  # msgpack list of names, registry order
META_LEXICON_STATS = b"lexicon_stats"  # msgpack [lexical version, documents, average weighted length x100]

_U32 = struct.Struct(">I")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
# base32 two characters (ten bits) at a time: the pure-Python base64 module is ~20x slower.
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
_PAIR_VALUE = {pair: i for i, pair in enumerate(_PAIRS)}
_SHIFTS = tuple(range(120, -1, -10))
_POS = struct.Struct(">II")


def text(value: str) -> bytes:
    """UTF-8 bytes of a key part, refusing the separator."""
    data = value.encode("utf-8")
    if SEP in data:
        raise ValueError(f"key part contains NUL: {value!r}")
    return data


def join(*parts: str) -> bytes:
    """Parts joined by NUL (no trailing separator)."""
    return SEP.join(text(p) for p in parts)


def prefix(*parts: str) -> bytes:
    """A scan prefix: parts joined by NUL, with the trailing separator."""
    return join(*parts) + SEP


# --- stable keys -----------------------------------------------------------


def key_to_bytes(stable_key: str) -> bytes:
    """Raw 16 bytes of a text stable key; ValueError when it is not one."""
    if len(stable_key) != 26:
        raise ValueError(f"not a stable key: {stable_key!r}")
    n = 0
    try:
        for i in range(0, 26, 2):
            n = (n << 10) | _PAIR_VALUE[stable_key[i : i + 2]]
    except KeyError:
        raise ValueError(f"not a stable key: {stable_key!r}") from None
    if n & 3:  # the two padding bits of a canonical encoding are zero
        raise ValueError(f"not a stable key: {stable_key!r}")
    return (n >> 2).to_bytes(KEY_BYTES, "big")


def key_from_bytes(raw: bytes) -> str:
    """Text form of a raw 16-byte key: unpadded RFC 4648 base32 (26 characters)."""
    n = int.from_bytes(raw, "big") << 2
    return "".join([_PAIRS[(n >> shift) & 1023] for shift in _SHIFTS])


# --- composite keys ----------------------------------------------------------


def file_key(repository: str, path: str) -> bytes:
    return join(repository, path)


def position(line: int, col: int) -> bytes:
    return _POS.pack(line, col)


def qualified_name_key(qualified_name: str, repository: str, path: str, key16: bytes) -> bytes:
    return prefix(qualified_name, repository, path) + key16


def name_key(name: str, repository: str, path: str, key16: bytes) -> bytes:
    return prefix(name, repository, path) + key16


def by_file_key(repository: str, path: str, line: int, col: int, key16: bytes) -> bytes:
    return prefix(repository, path) + position(line, col) + key16


def split_index_key(key: bytes) -> tuple[list[str], bytes]:
    """Split a by_name / by_qualified_name key into its text parts and the raw key."""
    head, key16 = key[:-KEY_BYTES], key[-KEY_BYTES:]
    parts = head.split(SEP)
    return [p.decode("utf-8") for p in parts[:-1]], key16


def edge_key(first16: bytes, kind: int, second16: bytes, provenance: int) -> bytes:
    return first16 + bytes((kind,)) + second16 + bytes((provenance,))


def split_edge_key(key: bytes) -> tuple[bytes, int, bytes, int]:
    """(first end, kind, other end, provenance) of an edges_out or edges_in key."""
    return key[:16], key[16], key[17:33], key[33]


def unresolved_key(name: str, repository: str, path: str, line: int, col: int, seq: int) -> bytes:
    return prefix(name, repository, path) + position(line, col) + _U32.pack(seq)


def unresolved_file_key(repository: str, path: str, line: int, col: int, seq: int) -> bytes:
    return prefix(repository, path) + position(line, col) + _U32.pack(seq)


def lexicon_doc_key(doc: int) -> bytes:
    return _U32.pack(doc)


def package_dep_key(provider_repo: str, provider_pkg: str, consumer_repo: str, consumer_pkg: str) -> bytes:
    return join(provider_repo, provider_pkg, consumer_repo, consumer_pkg)
