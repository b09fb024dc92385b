"""Stable keys: deterministic identities of declarations across rebuilds.

The key is BLAKE2b-128 over a length-prefixed canonical identity, written as
unpadded base32 (26 characters). Source position is not part of it, so moving
a declaration inside its file keeps its key; renaming or moving it to another
file does not.
"""

from __future__ import annotations

import hashlib

from snapshot_format import keys
from snapshot_format.versions import STABLE_KEY_VERSION

_NAMESPACE = b"kivgraph-stable-key"


def canonical_identity(
    *, language: str, repository: str, package: str, module: str, qualified_name: str, kind: str, discriminator: str
) -> bytes:
    """The canonical identity bytes hashed into a stable key."""
    out = bytearray(_NAMESPACE)
    out += b"\x00version=%d" % STABLE_KEY_VERSION
    for field, value in (
        ("language", language),
        ("repository", repository),
        ("package", package),
        ("module", module),
        ("qualified_name", qualified_name),
        ("kind", kind),
        ("discriminator", discriminator or "none"),
    ):
        data = value.encode("utf-8")
        out += b"\x00%s=%d:" % (field.encode(), len(data))
        out += data
    return bytes(out)


def stable_key_bytes(**identity: str) -> bytes:
    """Raw 16-byte key of an identity (see canonical_identity for the fields)."""
    return hashlib.blake2b(canonical_identity(**identity), digest_size=keys.KEY_BYTES).digest()


def stable_key(**identity: str) -> str:
    """Text stable key of an identity."""
    return keys.key_from_bytes(stable_key_bytes(**identity))
