"""Page cursors: opaque, short, strict, bound to one snapshot and one query."""

from __future__ import annotations

import base64
import hashlib

import pytest

from server.cursor import decode_cursor, encode_cursor, scope
from server.errors import CURSOR_INVALID, CURSOR_SNAPSHOT_EXPIRED, ToolError

SCOPE = scope("find_symbol", "stable-key-v1", name="area", mode="exact", kind=None, repo=None, path_prefix=None)


def _code(token: str, snapshot: int = 7) -> str:
    with pytest.raises(ToolError) as caught:
        decode_cursor(token, snapshot).offset_for(SCOPE, 1000)
    return caught.value.code


def test_a_cursor_round_trips_its_offset_on_the_same_snapshot_and_query() -> None:
    token = encode_cursor(7, 150, SCOPE)
    assert decode_cursor(token, 7).offset_for(SCOPE, 1000) == 150


def test_a_cursor_is_short_unpadded_base64url() -> None:
    token = encode_cursor(123456, 100000, SCOPE)
    assert len(token) <= 36
    assert "=" not in token and "+" not in token and "/" not in token


def test_a_cursor_of_another_snapshot_is_expired_even_for_another_query() -> None:
    token = encode_cursor(6, 50, scope("get_file_outline", "file-order-v1", repository="r", path="p"))
    assert _code(token) == CURSOR_SNAPSHOT_EXPIRED


def test_a_cursor_of_another_query_or_ordering_is_invalid() -> None:
    other_query = scope(
        "find_symbol", "stable-key-v1", name="size", mode="exact", kind=None, repo=None, path_prefix=None
    )
    other_sorting = scope(
        "find_symbol", "stable-key-v2", name="area", mode="exact", kind=None, repo=None, path_prefix=None
    )
    assert _code(encode_cursor(7, 50, other_query)) == CURSOR_INVALID
    assert _code(encode_cursor(7, 50, other_sorting)) == CURSOR_INVALID


def test_a_tampered_byte_fails_the_checksum() -> None:
    raw = bytearray(base64.urlsafe_b64decode(encode_cursor(7, 50, SCOPE) + "=="))
    raw[2] ^= 0x01  # the offset
    token = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    assert _code(token) == CURSOR_INVALID


@pytest.mark.parametrize(
    "token",
    ["", "not a cursor", "AAAA", "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "A" * 200],
    ids=["empty", "spaces", "short", "alphabet", "long"],
)
def test_malformed_tokens_are_invalid(token: str) -> None:
    assert _code(token) == CURSOR_INVALID


def test_padding_trailing_bytes_and_a_wrong_version_are_invalid() -> None:
    token = encode_cursor(7, 50, SCOPE)
    raw = base64.urlsafe_b64decode(token + "==")
    assert _code(token + "=") == CURSOR_INVALID
    assert _code(base64.urlsafe_b64encode(raw + b"\x00").decode().rstrip("=")) == CURSOR_INVALID
    wrong_version = bytes((3,)) + raw[1:]
    assert _code(base64.urlsafe_b64encode(wrong_version).decode().rstrip("=")) == CURSOR_INVALID


def test_a_non_minimal_varint_is_invalid_even_with_a_correct_checksum() -> None:
    body = bytes((2,)) + bytes((0x87, 0x00)) + bytes((50,)) + SCOPE.identity + SCOPE.sorting  # 7 written in two bytes
    token = base64.urlsafe_b64encode(body + hashlib.sha256(body).digest()[:8]).decode().rstrip("=")
    assert _code(token) == CURSOR_INVALID


def test_a_cursor_past_the_end_of_the_answer_is_invalid() -> None:
    token = encode_cursor(7, 60, SCOPE)
    with pytest.raises(ToolError) as caught:
        decode_cursor(token, 7).offset_for(SCOPE, 59)
    assert caught.value.code == CURSOR_INVALID
