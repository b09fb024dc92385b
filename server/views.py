"""Shaping rows for the compact view (docs/surface.md §6.2).

First tier: a column on which every row of the page agrees is stated once in
a header and removed from the rows. Rows are grouped by file and written as
labels (``qualified_name@start[-end]``), with a positional tail of the
columns that are left. Second tier: rows are bucketed by their remaining
tuple, and the grouped page replaces the flat one only when it serializes
smaller.

Where this server's compact shape is tighter than the reference system's own
(docs/surface.md §6.3 describes the same list; each keeps the same facts, and
``view: "full"`` keeps the reference system's full shape):

- repository: the repository most rows share is hoisted as the page's default
  (``repository``) even when a minority disagrees; a file group (or entry)
  names its own ``repo`` only when it differs. The reference system hoists a
  repository only when every row agrees (and names a group's ``repo`` only
  when it differs from that one).
- find_references ``view: "files"``: ``files: {repo: {path: count}}`` instead
  of ``[{file: "<repo>/<path>", count}]`` (repository once, no field names).
- find_symbol: rows grouped by file as ``qn@start[-end]`` labels with a tail
  (name when not implied, kind, exported, sig, stable_key) instead of
  ``{at, end?, qn?, name?, sig?}`` objects; ``sig`` is hoisted when shared,
  and (kind, exported, sig) is tried as a grouping key beside (kind, exported).
- get_blast_radius: ``affected`` is left off (it is the envelope's
  ``total``); ``by_depth`` and ``by_repository`` are left off when the page
  holds every affected symbol (they are its rows counted); ``by_package`` is
  ``{package: n}``, a package of another repository than the root's keyed
  ``repo:package``; a hop-1 row omits ``reached_from`` (always the root).
- find_cross_repo_consumers: a consuming declaration is a label in
  ``files: [{repo?, file, pkg?, at}]`` with a tail (category, edge_kind, kind,
  confidence, provenance, evidence_kind, ``line:col``); ``pkg`` is left off
  when the qualified names spell it (also on the subject); a coarser grouping
  key without ``edge_kind`` is tried beside the reference system's.
- get_file_outline of one file: the labels sit under ``at`` directly (the
  header's ``path`` is the file) instead of ``files: [{file, at}]``.
- find_by_intent (not in the reference system): a file whose matched symbols share a
  kind states it once (``kind``) and lists bare labels; no per-file score (the
  order is the ranking).

What the compact view leaves to ``view: "full"`` (which stays complete: every
field, stable keys and evidence included):

- provenance (which analyzer saw an edge) and the consumers' ``evidence_kind``
  (the category implies it): confidence, what an agent acts on, stays;
- the module prefix a file group implies: labels are module-relative
  (``Context.invoke@714`` in the group of ``src/click/core.py``), and the
  selector resolves such a tail pinned by the group's repository and path;
- declared default filters (``edge_kinds_default_excluded``,
  ``symbol_kinds_default_excluded``) when the default applies: the schema
  states them;
- blast radius ``by_package`` when the page holds every affected symbol;
- ``exported`` where the name says it (Python and Dart: no leading underscore;
  Go: a capital letter), on find_symbol and outline rows;
- on consumers, the evidence line, and a consumer using the subject through
  several edge kinds is one entry (``TYPE_USES+REFERENCES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from snapshot_format.records import Symbol

_json = msgspec.json.Encoder()
_DISCRIMINATOR = re.compile(r"#\d+$")


def encoded_size(value: Any) -> int:
    """Bytes of the compact JSON encoding (what the client receives)."""
    return len(_json.encode(value))


def smaller(preferred: Any, alternative: Any) -> Any:
    """Whichever of two equivalent shapes serializes smaller; ``preferred`` on a tie."""
    return alternative if encoded_size(alternative) < encoded_size(preferred) else preferred


def label(qualified_name: str, start: int, end: int) -> str:
    """``qn@start``, or ``qn@start-end`` when the declaration spans lines."""
    return f"{qualified_name}@{start}" if end <= start else f"{qualified_name}@{start}-{end}"


def module_relative(sym: Symbol) -> str:
    """The qualified name without the module prefix its file implies (``click.core.`` in core.py).

    Compact labels sit in a file group, and the file names the module; the selector resolves the tail back
    (a dotted tail pinned by repository and path names one symbol). The module prefix is the file's
    package (Python's module name) or its path dotted without the extension (how TypeScript, JavaScript and
    Dart module symbols are named); the longer one that prefixes the name is left out. A module's own symbol
    keeps its name, and so does a name no prefix spells (Go's ``Type.Method``, Rust's paths).
    """
    qn = sym.qualified_name
    dotted = sym.path.rsplit(".", 1)[0].replace("/", ".") if "." in sym.path.rsplit("/", 1)[-1] else ""
    prefixes = [p for p in (sym.package, dotted) if p and qn.startswith(p + ".")]
    if not prefixes:
        return qn
    return qn[len(max(prefixes, key=len)) + 1 :]


def exported_is_implied(sym: Symbol) -> bool:
    """Whether the name already says if the symbol is exported (Python and Dart: no leading ``_``; Go: a capital)."""
    name = sym.name
    if not name:
        return False
    if sym.language in ("python", "dart"):
        return sym.exported == (not name.startswith("_"))
    if sym.language == "go":
        return sym.exported == name[0].isupper()
    return False


def module_label(sym: Symbol) -> str:
    """The compact label of a declaration: ``module_relative(sym)@start[-end]``."""
    return label(module_relative(sym), sym.start_line, sym.end_line)


def name_is_implied(name: str, qualified_name: str) -> bool:
    """Whether the qualified name (minus a ``#<digits>`` discriminator) ends with the name."""
    return _DISCRIMINATOR.sub("", qualified_name).endswith(name)


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def hoist(rows: Sequence[dict[str, Any]], columns: Iterable[str]) -> dict[str, Any]:
    """The columns every row agrees on (with a non-empty value), as a header."""
    header: dict[str, Any] = {}
    if not rows:
        return header
    for column in columns:
        first = rows[0].get(column)
        if _present(first) and all(row.get(column) == first for row in rows):
            header[column] = first
    return header


def tail_entry(head: str, row: dict[str, Any], tail_columns: Sequence[str], skip: Iterable[str]) -> Any:
    """``head`` alone, or ``[head, col, …]`` with the row's remaining non-empty columns as strings."""
    skipped = set(skip)
    tail = []
    for column in tail_columns:
        if column in skipped:
            continue
        value = row.get(column)
        if not _present(value):
            continue
        tail.append(_as_text(value))
    return [head, *tail] if tail else head


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def buckets(
    rows: Sequence[dict[str, Any]], key_columns: Sequence[str]
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Rows bucketed by the tuple of their ``key_columns``, in first-seen order."""
    order: dict[tuple[Any, ...], int] = {}
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for row in rows:
        key = tuple(row.get(c) for c in key_columns)
        index = order.get(key)
        if index is None:
            index = order[key] = len(out)
            out.append(({c: row.get(c) for c in key_columns if _present(row.get(c))}, []))
        out[index][1].append(row)
    return out


def file_groups(
    rows: Sequence[dict[str, Any]], entries: Sequence[Any], hoisted_repository: str | None
) -> list[dict[str, Any]]:
    """``[{repo?, file, at:[…]}]`` in first-seen order; ``repo`` only when it differs from the header's."""
    index: dict[tuple[str, str], dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for row, entry in zip(rows, entries, strict=True):
        key = (row["repository"], row["file_path"])
        group = index.get(key)
        if group is None:
            group = {}
            if row["repository"] != hoisted_repository:
                group["repo"] = row["repository"]
            group["file"] = row["file_path"]
            group["at"] = []
            index[key] = group
            out.append(group)
        group["at"].append(entry)
    return out


def default_repository(rows: Sequence[dict[str, Any]], column: str = "repository") -> str | None:
    """The repository most rows share (the first seen on a tie), hoisted as the page's default.

    Groups name their own ``repo`` only when it differs from this default
    (docs/surface.md §6.2, and §6.3 item 1 for how this differs from the
    reference system). A repository that only one row of several carries is
    not worth a header field, so none is returned then.
    """
    counts: dict[str, int] = {}
    for row in rows:
        value = row.get(column)
        if isinstance(value, str) and value:
            counts[value] = counts.get(value, 0) + 1
    if not counts:
        return None
    best = max(counts, key=lambda repo: counts[repo])  # max keeps the first of equal counts
    return best if counts[best] >= 2 or len(counts) == 1 else None


def smallest(*shapes: Any) -> Any:
    """The shape that serializes smallest; the earliest on a tie."""
    best = shapes[0]
    size = encoded_size(best)
    for shape in shapes[1:]:
        candidate = encoded_size(shape)
        if candidate < size:
            best, size = shape, candidate
    return best


def implied_package(package: str, qualified_names: Iterable[str]) -> bool:
    """Whether every qualified name spells the package as its prefix (``pkg`` or ``pkg.…``)."""
    return bool(package) and all(qn == package or qn.startswith(package + ".") for qn in qualified_names)
