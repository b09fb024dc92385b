"""A decoder for the SCIP protobuf messages kivgraph reads, straight from the wire format.

Field numbers follow ``scip.proto`` (sourcegraph/scip). Only the fields listed
on each record are kept; unknown fields are skipped, so newer indexes still
decode. No protobuf runtime is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# SymbolRole bits
ROLE_DEFINITION = 0x1
ROLE_IMPORT = 0x2
ROLE_WRITE = 0x4
ROLE_READ = 0x8
ROLE_GENERATED = 0x10
ROLE_TEST = 0x20

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


class ScipDecodeError(ValueError):
    """The bytes are not a well-formed SCIP index."""


@dataclass(frozen=True, slots=True)
class Relationship:
    symbol: str = ""
    is_reference: bool = False
    is_implementation: bool = False
    is_type_definition: bool = False
    is_definition: bool = False


@dataclass(frozen=True, slots=True)
class SymbolInformation:
    symbol: str = ""
    relationships: tuple[Relationship, ...] = ()
    kind: int = 0
    display_name: str = ""
    enclosing_symbol: str = ""
    # The analyzer's hover text, Markdown (scip-typescript: the checker's printed declaration and its type).
    documentation: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence; ranges are normalised to (start_line, start_col, end_line, end_col), 0-based."""

    range: tuple[int, int, int, int]
    symbol: str = ""
    symbol_roles: int = 0
    syntax_kind: int = 0
    enclosing_range: tuple[int, int, int, int] | None = None

    @property
    def is_definition(self) -> bool:
        return bool(self.symbol_roles & ROLE_DEFINITION)

    @property
    def is_import(self) -> bool:
        return bool(self.symbol_roles & ROLE_IMPORT)


@dataclass(frozen=True, slots=True)
class Document:
    relative_path: str = ""
    language: str = ""
    occurrences: tuple[Occurrence, ...] = ()
    symbols: tuple[SymbolInformation, ...] = ()
    position_encoding: int = 0  # 0 unspecified, 1 UTF-8, 2 UTF-16, 3 UTF-32 code units


@dataclass(frozen=True, slots=True)
class Metadata:
    version: int = 0
    tool_name: str = ""
    tool_version: str = ""
    tool_arguments: tuple[str, ...] = ()
    project_root: str = ""
    text_document_encoding: int = 0


@dataclass(frozen=True, slots=True)
class Index:
    metadata: Metadata = field(default_factory=Metadata)
    documents: tuple[Document, ...] = ()
    external_symbols: tuple[SymbolInformation, ...] = ()


def _fields(buf: bytes, start: int, end: int):
    """Yield (field number, wire type, value) where value is an int or a (start, end) slice."""
    pos = start
    while pos < end:
        key = 0
        shift = 0
        while True:
            if pos >= end:
                raise ScipDecodeError(f"truncated tag at byte {pos}")
            b = buf[pos]
            pos += 1
            key |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ScipDecodeError(f"field number 0 at byte {pos}")
        if wire == _VARINT:
            value = 0
            shift = 0
            while True:
                if pos >= end:
                    raise ScipDecodeError(f"truncated varint at byte {pos}")
                b = buf[pos]
                pos += 1
                value |= (b & 0x7F) << shift
                if b < 0x80:
                    break
                shift += 7
            yield number, wire, value
        elif wire == _LEN:
            length = 0
            shift = 0
            while True:
                if pos >= end:
                    raise ScipDecodeError(f"truncated length at byte {pos}")
                b = buf[pos]
                pos += 1
                length |= (b & 0x7F) << shift
                if b < 0x80:
                    break
                shift += 7
            if pos + length > end:
                raise ScipDecodeError(f"field {number} overruns its message at byte {pos}")
            yield number, wire, (pos, pos + length)
            pos += length
        elif wire == _FIXED64:
            pos += 8
        elif wire == _FIXED32:
            pos += 4
        else:
            raise ScipDecodeError(f"unsupported wire type {wire} at byte {pos}")
    if pos != end:
        raise ScipDecodeError("a field overruns its message")


def _varint(value: int | tuple[int, int]) -> int:
    """A varint field's value (callers check the wire type; a slice here is a corrupt index)."""
    if isinstance(value, tuple):
        raise ScipDecodeError("expected a varint, found a length-delimited field")
    return value


def _int32(value: int) -> int:
    """A varint as a signed int32 (negative int32s are sign-extended to 64 bits on the wire)."""
    value &= 0xFFFFFFFFFFFFFFFF
    if value >= 1 << 63:
        value -= 1 << 64
    return value


def _packed_int32(buf: bytes, start: int, end: int) -> list[int]:
    out: list[int] = []
    pos = start
    while pos < end:
        value = 0
        shift = 0
        while True:
            if pos >= end:
                raise ScipDecodeError(f"truncated packed varint at byte {pos}")
            b = buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        out.append(_int32(value))
    return out


def _text(buf: bytes, span: tuple[int, int]) -> str:
    return buf[span[0] : span[1]].decode("utf-8", errors="replace")


def _range(values: list[int]) -> tuple[int, int, int, int]:
    if len(values) == 3:
        return values[0], values[1], values[0], values[2]
    if len(values) == 4:
        return values[0], values[1], values[2], values[3]
    raise ScipDecodeError(f"a range has {len(values)} elements (expected 3 or 4)")


def _relationship(buf: bytes, start: int, end: int) -> Relationship:
    symbol = ""
    flags = [False, False, False, False]
    for number, wire, value in _fields(buf, start, end):
        if number == 1 and wire == _LEN:
            symbol = _text(buf, value)  # type: ignore[arg-type]
        elif 2 <= number <= 5 and wire == _VARINT:
            flags[number - 2] = bool(value)
    return Relationship(symbol, *flags)


def _symbol_information(buf: bytes, start: int, end: int) -> SymbolInformation:
    symbol = display_name = enclosing = ""
    kind = 0
    relationships: list[Relationship] = []
    documentation: list[str] = []
    for number, wire, value in _fields(buf, start, end):
        if wire == _LEN:
            if number == 1:
                symbol = _text(buf, value)  # type: ignore[arg-type]
            elif number == 3:
                documentation.append(_text(buf, value))  # type: ignore[arg-type]
            elif number == 4:
                relationships.append(_relationship(buf, *value))  # type: ignore[misc]
            elif number == 6:
                display_name = _text(buf, value)  # type: ignore[arg-type]
            elif number == 8:
                enclosing = _text(buf, value)  # type: ignore[arg-type]
        elif number == 5 and wire == _VARINT:
            kind = _varint(value)
    return SymbolInformation(symbol, tuple(relationships), kind, display_name, enclosing, tuple(documentation))


def _occurrence(buf: bytes, start: int, end: int) -> Occurrence:
    rng: list[int] = []
    enclosing: list[int] = []
    symbol = ""
    roles = syntax = 0
    for number, wire, value in _fields(buf, start, end):
        if number == 1:
            if wire == _LEN:
                rng.extend(_packed_int32(buf, *value))  # type: ignore[misc]
            else:
                rng.append(_int32(value))  # type: ignore[arg-type]
        elif number == 2 and wire == _LEN:
            symbol = _text(buf, value)  # type: ignore[arg-type]
        elif number == 3 and wire == _VARINT:
            roles = _int32(value)  # type: ignore[arg-type]
        elif number == 5 and wire == _VARINT:
            syntax = _varint(value)
        elif number == 7:
            if wire == _LEN:
                enclosing.extend(_packed_int32(buf, *value))  # type: ignore[misc]
            else:
                enclosing.append(_int32(value))  # type: ignore[arg-type]
    return Occurrence(_range(rng), symbol, roles, syntax, _range(enclosing) if enclosing else None)


def _document(buf: bytes, start: int, end: int) -> Document:
    path = language = ""
    encoding = 0
    occurrences: list[Occurrence] = []
    symbols: list[SymbolInformation] = []
    for number, wire, value in _fields(buf, start, end):
        if wire == _LEN:
            if number == 1:
                path = _text(buf, value)  # type: ignore[arg-type]
            elif number == 2:
                occurrences.append(_occurrence(buf, *value))  # type: ignore[misc]
            elif number == 3:
                symbols.append(_symbol_information(buf, *value))  # type: ignore[misc]
            elif number == 4:
                language = _text(buf, value)  # type: ignore[arg-type]
        elif number == 6 and wire == _VARINT:
            encoding = _varint(value)
    return Document(path, language, tuple(occurrences), tuple(symbols), encoding)


def _metadata(buf: bytes, start: int, end: int) -> Metadata:
    version = encoding = 0
    root = tool_name = tool_version = ""
    arguments: list[str] = []
    for number, wire, value in _fields(buf, start, end):
        if number == 1 and wire == _VARINT:
            version = _varint(value)
        elif number == 2 and wire == _LEN:
            for n2, w2, v2 in _fields(buf, *value):  # type: ignore[misc]
                if w2 != _LEN:
                    continue
                if n2 == 1:
                    tool_name = _text(buf, v2)  # type: ignore[arg-type]
                elif n2 == 2:
                    tool_version = _text(buf, v2)  # type: ignore[arg-type]
                elif n2 == 3:
                    arguments.append(_text(buf, v2))  # type: ignore[arg-type]
        elif number == 3 and wire == _LEN:
            root = _text(buf, value)  # type: ignore[arg-type]
        elif number == 4 and wire == _VARINT:
            encoding = _varint(value)
    return Metadata(version, tool_name, tool_version, tuple(arguments), root, encoding)


def decode_index(data: bytes) -> Index:
    """Decode a whole SCIP ``Index`` message; raises ScipDecodeError on malformed bytes."""
    buf = bytes(data)
    metadata = Metadata()
    documents: list[Document] = []
    external: list[SymbolInformation] = []
    for number, wire, value in _fields(buf, 0, len(buf)):
        if wire != _LEN:
            continue
        if number == 1:
            metadata = _metadata(buf, *value)  # type: ignore[misc]
        elif number == 2:
            documents.append(_document(buf, *value))  # type: ignore[misc]
        elif number == 3:
            external.append(_symbol_information(buf, *value))  # type: ignore[misc]
    return Index(metadata, tuple(documents), tuple(external))
