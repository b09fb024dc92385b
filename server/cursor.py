"""Opaque, snapshot-bound page cursors (docs/surface.md §7).

The token is unpadded base64url over a binary body: a version byte (2), the
snapshot id and the row offset as minimal uvarints, the first 8 bytes of the
SHA-256 of the query identity, the first 4 bytes of the SHA-256 of the
sorting version, then an 8-byte truncated SHA-256 over everything before it.
Decoding is strict: any deviation is CURSOR_INVALID. A cursor of another
snapshot is CURSOR_SNAPSHOT_EXPIRED, checked before the identity.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from server.errors import CURSOR_INVALID, CURSOR_SNAPSHOT_EXPIRED, ToolError

CURSOR_VERSION = 2
_IDENTITY_BYTES = 8
_SORTING_BYTES = 4
_CHECKSUM_BYTES = 8
_MAX_VARINT_BYTES = 10


@dataclass(frozen=True)
class CursorScope:
    """What a cursor is bound to: the tool's query identity and its sorting version."""

    identity: bytes  # first 8 bytes of SHA-256 of the canonical identity JSON
    sorting: bytes  # first 4 bytes of SHA-256 of the sorting version


def scope(tool: str, sorting_version: str, **identity: Any) -> CursorScope:
    """The scope of a query: ``identity`` holds every argument that affects membership or order."""
    canonical = json.dumps({"tool": tool, **identity}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return CursorScope(
        identity=hashlib.sha256(canonical.encode("utf-8")).digest()[:_IDENTITY_BYTES],
        sorting=hashlib.sha256(sorting_version.encode("utf-8")).digest()[:_SORTING_BYTES],
    )


def within_view(cursor_scope: CursorScope, view_tag: str) -> CursorScope:
    """The scope bound to a view of the generation (a token's repositories): its cursors serve no other view."""
    if not view_tag:
        return cursor_scope
    identity = hashlib.sha256(cursor_scope.identity + b"\0view\0" + view_tag.encode()).digest()[:_IDENTITY_BYTES]
    return CursorScope(identity=identity, sorting=cursor_scope.sorting)


def _uvarint(value: int) -> bytes:
    if value < 0:
        raise ValueError("uvarint of a negative number")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, next position); ValueError on a truncated or non-minimal varint."""
    value = 0
    shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if byte == 0 and i > 0:
                raise ValueError("non-minimal varint")
            return value, pos + i + 1
        shift += 7
    raise ValueError("varint too long")


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(body).digest()[:_CHECKSUM_BYTES]


def encode_cursor(snapshot_id: int, offset: int, cursor_scope: CursorScope) -> str:
    """The token for the page starting at ``offset`` of this query on this snapshot."""
    body = (
        bytes((CURSOR_VERSION,))
        + _uvarint(snapshot_id)
        + _uvarint(offset)
        + cursor_scope.identity
        + cursor_scope.sorting
    )
    return base64.urlsafe_b64encode(body + _checksum(body)).decode("ascii").rstrip("=")


def _invalid(reason: str) -> ToolError:
    return ToolError(CURSOR_INVALID, f"cursor is not valid ({reason}); repeat the query without cursor")


@dataclass(frozen=True)
class Cursor:
    """A decoded token whose snapshot is the active one; its scope is checked by ``offset_for``."""

    offset: int
    identity: bytes
    sorting: bytes

    def offset_for(self, cursor_scope: CursorScope, total: int) -> int:
        """The row offset to resume at, if the token belongs to this query and ordering."""
        if self.identity != cursor_scope.identity or self.sorting != cursor_scope.sorting:
            raise _invalid("it belongs to another query or ordering")
        if self.offset > total:
            raise _invalid("it points past the end of the answer")
        return self.offset


def decode_cursor(token: str, snapshot_id: int) -> Cursor:
    """Decode a token strictly: CURSOR_INVALID when malformed, CURSOR_SNAPSHOT_EXPIRED for another snapshot."""
    if not token or len(token) > 64 or token.endswith("="):
        raise _invalid("malformed token")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise _invalid("malformed token") from None
    if base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=") != token:
        raise _invalid("malformed token")
    if len(raw) < 1 + 2 + _IDENTITY_BYTES + _SORTING_BYTES + _CHECKSUM_BYTES or raw[0] != CURSOR_VERSION:
        raise _invalid("unknown cursor version")
    body, checksum = raw[:-_CHECKSUM_BYTES], raw[-_CHECKSUM_BYTES:]
    if _checksum(body) != checksum:
        raise _invalid("bad checksum")
    try:
        cursor_snapshot, pos = _read_uvarint(body, 1)
        offset, pos = _read_uvarint(body, pos)
    except ValueError as exc:
        raise _invalid(str(exc)) from None
    if len(body) - pos != _IDENTITY_BYTES + _SORTING_BYTES:
        raise _invalid("wrong length")
    if cursor_snapshot != snapshot_id:
        raise ToolError(
            CURSOR_SNAPSHOT_EXPIRED,
            f"the cursor belongs to snapshot {cursor_snapshot} but the graph is now snapshot {snapshot_id}; "
            "repeat the query without cursor",
        )
    return Cursor(offset=offset, identity=body[pos : pos + _IDENTITY_BYTES], sorting=body[pos + _IDENTITY_BYTES :])
