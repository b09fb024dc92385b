"""Validation of tool arguments: every failure is INVALID_ARGUMENT naming the field.

A tool's arguments are read against its declaration (``server/declarations.py``): the accepted names, each
field's default, range and choices come from there, never from the call site.

Rules shared by every tool (docs/surface.md §3): a string with surrounding
whitespace is rejected, so is an unsupported enum value or an unknown
argument; a limit outside its range is rejected, never clamped (0 or absent
means the default); a path is repository-relative (no absolute path, no
``..`` segment) and a trailing ``/`` is trimmed. JSON null reads as absent.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from server.declarations import Declaration, FieldSpec, fields_of
from server.errors import invalid

MAX_STRING = 4096
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")

# Spellings of earlier versions of the surface, refused with the name that replaced them (when the tool
# takes that name): one vocabulary on every tool, where ``repository`` and ``path`` pin the subject and the
# ``in_*`` filters narrow the rows.
RETIRED: dict[str, tuple[str, str]] = {
    "repo": ("in_repository", "it filters the rows; repository pins the symbol"),
    "language": ("in_language", "it filters the rows by language"),
    "path_prefix": ("in_path", "it filters the rows by path prefix"),
    "repository": ("in_repository", "this tool names no symbol, so the repository only filters the rows"),
    "kind": ("symbol_kinds", "an array of symbol kinds, beside edge_kinds for relations"),
    "kinds": ("symbol_kinds", "symbol kinds, beside edge_kinds for relations"),
    "response_format": (
        "view",
        'view "full" is the complete answer (stable keys included); the default compact view is the short one',
    ),
}


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Args:
    """The arguments of one call (or of one nested object), read field by field."""

    def __init__(self, raw: object, declaration: type[Declaration], *, where: str = "") -> None:
        self.declaration = declaration
        self.fields: dict[str, FieldSpec] = fields_of(declaration)
        allowed: Collection[str] = self.fields
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise invalid(f"{where or 'arguments'} must be an object, got {_type_name(raw)}")
        self.where = where
        self._raw: Mapping[str, Any] = raw
        unknown = sorted(str(k) for k in raw if k not in allowed)
        for old in unknown:
            new, why = RETIRED.get(old, ("", ""))
            if new in allowed:
                raise invalid(f"{self.name(old)} is not accepted any more: use {self.name(new)} ({why})")
        if "response_format" in unknown:
            raise invalid(f"{self.name('response_format')} is not accepted any more: this tool has one answer shape")
        if unknown:
            accepted = ", ".join(sorted(allowed)) or "none"
            raise invalid(f"unknown argument {self.name(unknown[0])}; accepted: {accepted}")

    def name(self, field: str) -> str:
        """The field's name as the client sees it (``symbols[2].path`` for nested objects)."""
        return f"{self.where}.{field}" if self.where else field

    def raw(self, field: str) -> Any:
        return self._raw.get(field)

    def spec(self, field: str) -> FieldSpec:
        return self.fields[field]

    def string(self, field: str, *, required: bool | None = None) -> str | None:
        """A string without surrounding whitespace; "" and null read as absent (an error for a required field)."""
        value = self._raw.get(field)
        if value is None or value == "":
            if self.spec(field).required if required is None else required:
                raise invalid(f"{self.name(field)} is required")
            return None
        return check_string(value, self.name(field))

    def enum(self, field: str) -> str | None:
        """One of the declared choices; the declared default (None for an enum without one) when absent."""
        spec = self.spec(field)
        choices = spec.enum or ()
        value = self.string(field)
        if value is None:
            return spec.default
        if value not in choices:
            raise invalid(f"{self.name(field)} must be one of {', '.join(choices)}; got {value!r}")
        return value

    def one_of(self, field: str, choices: Collection[str], default: str) -> str:
        """A value of ``choices`` (wider than the declaration's, so the caller can say why one is refused here)."""
        value = self.string(field)
        if value is None:
            return default
        if value not in choices:
            raise invalid(f"{self.name(field)} must be one of {', '.join(choices)}; got {value!r}")
        return value

    def integer(self, field: str, *, default: int | None = None) -> int:
        """An integer in the declared range; out of range is rejected, never clamped. Zero (and absence) means the
        declared default (or ``default``, a default that depends on another argument) when that is not zero."""
        spec = self.spec(field)
        declared = spec.default if default is None else default
        if not isinstance(declared, int):  # pragma: no cover - a declaration error, not a call's
            raise TypeError(f"{self.declaration.__name__}: {field} declares no integer default")
        default = declared
        zero_is_default = default != 0
        low = 1 if zero_is_default and spec.low == 0 else (spec.low or 0)
        high = spec.high if spec.high is not None else low
        value = self._raw.get(field)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise invalid(f"{self.name(field)} must be an integer, got {_type_name(value)}")
        number = int(value)
        if number == 0 and zero_is_default:
            return default
        if not low <= number <= high:
            hint = f" (0 or omitted means {default})" if zero_is_default else ""
            raise invalid(f"{self.name(field)} must be between {low} and {high}{hint}; got {number}")
        return number

    def limit(self, default: int | None = None) -> int:
        return self.integer("limit", default=default)

    def boolean(self, field: str) -> bool:
        value = self._raw.get(field)
        if value is None:
            return bool(self.spec(field).default)
        if not isinstance(value, bool):
            raise invalid(f"{self.name(field)} must be a boolean, got {_type_name(value)}")
        return value

    def optional_boolean(self, field: str) -> bool | None:
        value = self._raw.get(field)
        if value is None:
            return None
        return self.boolean(field)

    def path(self, field: str, *, required: bool | None = None) -> str | None:
        """A repository-relative path: trailing ``/`` trimmed, ``.`` segments dropped, ``.`` alone is the root."""
        value = self.string(field, required=required)
        if value is None:
            return None
        return check_relative_path(value, self.name(field))

    def string_list(self, field: str) -> list[str] | None:
        value = self._raw.get(field)
        if value is None:
            return None
        if not isinstance(value, list):
            raise invalid(f"{self.name(field)} must be an array of strings, got {_type_name(value)}")
        return [check_string(item, f"{self.name(field)}[{i}]", allow_empty=False) for i, item in enumerate(value)]

    def object_list(self, field: str, *, required: bool = False) -> list[object] | None:
        value = self._raw.get(field)
        if value is None:
            if required:
                raise invalid(f"{self.name(field)} is required")
            return None
        if not isinstance(value, list):
            raise invalid(f"{self.name(field)} must be an array of objects, got {_type_name(value)}")
        return list(value)


def check_string(value: object, field: str, *, allow_empty: bool = True) -> str:
    """A string with no surrounding whitespace and no NUL character."""
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string, got {_type_name(value)}")
    if not value and not allow_empty:
        raise invalid(f"{field} must not be empty")
    if value != value.strip():
        raise invalid(f"{field} must not have surrounding whitespace: {value!r}")
    if "\x00" in value:
        raise invalid(f"{field} must not contain a NUL character")
    if len(value) > MAX_STRING:
        raise invalid(f"{field} must be at most {MAX_STRING} characters; got {len(value)}")
    return value


def check_relative_path(value: str, field: str) -> str:
    """Normalize a repository-relative path, rejecting absolute paths and ``..`` segments."""
    if value.startswith(("/", "~")) or _DRIVE.match(value):
        raise invalid(f"{field} must be repository-relative, not absolute: {value!r}")
    if "\\" in value:
        raise invalid(f"{field} must use / as its separator: {value!r}")
    parts = [p for p in value.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise invalid(f"{field} must stay inside the repository (no '..' segment): {value!r}")
    return "/".join(parts)
