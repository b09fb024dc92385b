"""Encoders and decoders, created once per process (msgspec's advice)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from snapshot_format import records

T = TypeVar("T")

_encoder = msgspec.msgpack.Encoder()
_decoders: dict[Any, msgspec.msgpack.Decoder[Any]] = {}


def encode(value: Any) -> bytes:
    """Encode a record (or a tuple of records) as msgpack."""
    return _encoder.encode(value)


def decoder(kind: type[T]) -> msgspec.msgpack.Decoder[T]:
    """The shared decoder for a record type."""
    dec = _decoders.get(kind)
    if dec is None:
        dec = msgspec.msgpack.Decoder(kind)
        _decoders[kind] = dec
    return dec


def decode(kind: type[T], data: bytes | memoryview) -> T:
    """Decode bytes written by ``encode`` into ``kind``."""
    return decoder(kind).decode(data)


SYMBOL = decoder(records.Symbol)
FILE = decoder(records.File)
REPOSITORY = decoder(records.Repository)
EDGE_VALUE = decoder(records.EdgeValue)
UNRESOLVED = decoder(records.Unresolved)
PACKAGE_DEPENDENCY = decoder(records.PackageDependency)


def encode_repository_order(names: list[str]) -> bytes:
    """META_REPOSITORY_ORDER: the registered repositories' names, registry order (a msgpack list)."""
    return _encoder.encode(names)


def decode_repository_order(raw: bytes | memoryview) -> list[str]:
    return msgspec.msgpack.decode(raw, type=list[str])
