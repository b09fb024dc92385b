"""Shaping rows for the compact view (docs/surface.md §6.2, §13.1).

First tier: a column on which every row of the page agrees is stated once in
a header and removed from the rows. Rows are grouped by file and written as
labels (``qualified_name@start[-end]``) followed by the values of the columns
that are left, in the order the page names once (``columns``: ``finish``), a
value the header states left empty. Second tier: rows are bucketed by their remaining
tuple, and the grouped page replaces the flat one only when it serializes
smaller.

Where this server's compact shape is tighter than the reference system's own
(docs/surface.md §6.3 describes the same list; each keeps the same facts, and
``view: "full"`` keeps the reference system's full shape):

- the header: the repository most rows share is hoisted as the page's default
  (``repository``) even when a minority disagrees, and so is the value more
  rows share than any other in a closed-vocabulary column every row fills
  (kind, edge kind, confidence, hop, export state: ``hoist(defaults=…)``); a row that
  differs says its own in its tail. The reference system hoists a column only
  when every row agrees.
- file groups: ``{path: [entry, …]}``, a file of another repository keyed
  ``repository:path`` (``group_key``), instead of ``[{repo?, file, at}]``.
- find_references ``view: "files"``: ``files: {repo: tree}``, the paths of a
  repository as a directory tree (``path_tree``), instead of
  ``[{file: "<repo>/<path>", count}]``.
- the subject: ``qn`` is left off when the request spelled that very name
  (``subject_head``), on find_references and find_cross_repo_consumers.
- find_symbol: a locator, rows grouped by file as ``qn@start[-end]`` labels
  with a tail (name when not implied, kind when not the header's, exported);
  a signature only where two rows share a qualified name.
- get_blast_radius: ``affected`` is left off (it is the envelope's
  ``total``), ``depth`` when the request gave it; ``by_depth`` and
  ``by_repository`` are left off when the page holds every affected symbol
  (they are its rows counted), and ``by_kind`` when it is also its rows' via
  kinds counted; ``by_package`` is ``{package: n}``, a package of another
  repository than the root's keyed ``repo:package``; a hop-1 row omits
  ``reached_from`` (always the root).
- find_cross_repo_consumers: the subject as find_references states it; a
  consuming declaration is a label in ``files: {path: [entry, …]}`` with a
  tail (category, edge_kind, kind, confidence, provenance, evidence_kind,
  ``line:col``); ``pkg: {path: package}`` only where the qualified names do
  not spell it; a coarser grouping key without ``edge_kind`` is tried beside
  the reference system's.
- get_file_outline of one file: the labels sit under ``at`` directly (the
  header's ``path`` is the file) instead of a one-file ``files`` object.
- find_by_intent (not in the reference system): a ranked list of files; a file whose matched symbols share a
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
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from snapshot_format.languages import language
from snapshot_format.records import Symbol

_json = msgspec.json.Encoder()
_DISCRIMINATOR = re.compile(r"#\d+$")


def encoded_size(value: Any) -> int:
    """Bytes of the compact JSON encoding (what the client receives), rows written as ``finish`` writes them."""
    return len(_json.encode(finish(value) if isinstance(value, dict) else _written(value, page_columns(value))))


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
    keeps its name, and so does a name no prefix spells (Go's ``Type.Method``, Rust's paths): in Go a file's
    name is no prefix (``stack.Format`` in stack.go is the method of the type ``stack``).
    """
    qn = sym.qualified_name
    row = language(sym.language)
    by_path = row is not None and row.module_names == "file_path" and "." in sym.path.rsplit("/", 1)[-1]
    dotted = sym.path.rsplit(".", 1)[0].replace("/", ".") if by_path else ""
    prefixes = [p for p in (sym.package, dotted) if p and qn.startswith(p + ".")]
    if not prefixes:
        return qn
    return qn[len(max(prefixes, key=len)) + 1 :]


def subject_head(subject: Symbol, asked: str | None) -> dict[str, Any]:
    """The compact header's subject: ``subject`` (``repo:path:line``) and ``qn``, unless the request spelled
    that very qualified name (an echo tells the caller nothing; a shorter form it typed is answered with the
    name it resolved to)."""
    head: dict[str, Any] = {"subject": f"{subject.repository}:{subject.path}:{subject.start_line}"}
    if asked != subject.qualified_name:
        head["qn"] = subject.qualified_name
    return head


def exported_is_implied(sym: Symbol) -> bool:
    """Whether the name already says if the symbol is exported, by its language's export rule (Python and Dart: no
    leading ``_``; Go: a capital)."""
    name = sym.name
    row = language(sym.language)
    if not name or row is None:
        return False
    if row.export_rule == "underscore":
        return sym.exported == (not name.startswith("_"))
    if row.export_rule == "capital":
        return sym.exported == name[0].isupper()
    return False


def export_state(sym: Symbol) -> str:
    """A compact row's export column: ``exported`` or ``unexported``, or nothing where the name says it."""
    if exported_is_implied(sym):
        return ""
    return "exported" if sym.exported else "unexported"


def readable(columns: dict[str, Any]) -> dict[str, Any]:
    """Header or group columns as an answer writes them: the export state as a boolean ``exported``."""
    if "exported" not in columns:
        return columns
    return {**columns, "exported": columns["exported"] == "exported"}


def module_label(sym: Symbol) -> str:
    """The compact label of a declaration: ``module_relative(sym)@start[-end]``."""
    return label(module_relative(sym), sym.start_line, sym.end_line)


def name_is_implied(name: str, qualified_name: str) -> bool:
    """Whether the qualified name (minus a ``#<digits>`` discriminator) ends with the name."""
    return _DISCRIMINATOR.sub("", qualified_name).endswith(name)


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def hoist(rows: Sequence[dict[str, Any]], columns: Iterable[str], defaults: Iterable[str] = ()) -> dict[str, Any]:
    """The header: the columns every row agrees on (with a non-empty value), and for a column of ``defaults``
    that every row fills, the value more rows share than any other (at least two of them).

    A header column is each row's value unless the row's tail says otherwise (``tail_entry`` leaves out a
    value equal to the header's). Only a column every row fills can carry a default, so a missing value never
    reads as the default.
    """
    header: dict[str, Any] = {}
    if not rows:
        return header
    majority = set(defaults)
    for column in columns:
        values = [row.get(column) for row in rows]
        first = values[0]
        if _present(first) and all(v == first for v in values):
            header[column] = first
        elif column in majority and all(_present(v) for v in values):
            ranked = Counter(values).most_common(2)
            if ranked[0][1] >= 2 and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
                header[column] = ranked[0][0]
    return header


class Row:
    """A compact row before its page's columns are known: its values by column, in the tool's column order.

    ``finish`` writes every row of a page as ``[at, value, …]`` in the page's ``columns`` (the tool's columns
    that some row of the page fills), so a position means one column on the whole page.
    """

    __slots__ = ("order", "values")

    def __init__(self, order: tuple[str, ...], values: dict[str, str]) -> None:
        self.order = order
        self.values = values


def tail_entry(
    head: str,
    row: dict[str, Any],
    tail_columns: Sequence[str],
    skip: Iterable[str],
    header: dict[str, Any] | None = None,
) -> Row:
    """The row ``head`` (its ``at``) with the row's other columns as strings: a column in ``skip`` is never
    written, a column of ``header`` only where the row's value differs from it (empty where the header's
    default applies)."""
    skipped = set(skip)
    defaults = header or {}
    values: dict[str, str] = {"at": head}
    for column in tail_columns:
        if column in skipped:
            continue
        value = row.get(column)
        if not _present(value) or (column in defaults and value == defaults[column]):
            continue
        values[column] = _as_text(value)
    return Row(("at", *tail_columns), values)


ROW_HOLDERS = ("files", "groups", "at", "tests")  # the fields a page's rows sit under, first to last


def _rows_in(value: Any, out: list[Row]) -> None:
    if isinstance(value, Row):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _rows_in(v, out)
    elif isinstance(value, list):
        for v in value:
            _rows_in(v, out)


def page_columns(value: Any) -> list[str]:
    """The columns of a page's rows: ``at``, then the tool's columns that some row of the page fills, those more
    rows fill first (fewer empty cells before a row's last value), the tool's order on a tie."""
    rows: list[Row] = []
    _rows_in(value, rows)
    if not rows:
        return []
    order = rows[0].order
    filled = Counter(c for r in rows for c in r.values if c != "at")
    rest = sorted((c for c in order if c in filled), key=lambda c: (-filled[c], order.index(c)))
    return ["at", *rest]


def _written(value: Any, columns: list[str]) -> Any:
    if isinstance(value, Row):
        cells = [value.values.get(c, "") for c in columns]
        while len(cells) > 1 and cells[-1] == "":
            cells.pop()
        return cells[0] if len(cells) == 1 else cells
    if isinstance(value, dict):
        return {k: _written(v, columns) for k, v in value.items()}
    if isinstance(value, list):
        return [_written(v, columns) for v in value]
    return value


def finish(page: dict[str, Any]) -> dict[str, Any]:
    """The page as an answer writes it: ``columns`` named once before its rows, and each row ``[at, value, …]``
    in that order, ``""`` where a header (the page's or its group's) states the value, trailing empty values
    left off, and a row of ``at`` alone written as its label."""
    columns = page_columns(page)
    if not columns:
        return _written(page, columns)
    out: dict[str, Any] = {}
    for key, value in page.items():
        if key in ROW_HOLDERS and "columns" not in out:
            out["columns"] = columns
        out[key] = _written(value, columns)
    if "columns" not in out:
        out["columns"] = columns
    return out


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


def group_key(repository: str, path: str, hoisted_repository: str | None) -> str:
    """The key of a file group: its path, or ``repository:path`` when the repository is not the header's.

    A path of the header's repository that holds a colon is keyed with its repository too, so a key holding a
    colon always reads as ``repository:path`` (split at the first colon: a repository name has none).
    """
    if repository != hoisted_repository or ":" in path:
        return f"{repository}:{path}"
    return path


def split_group_key(key: str, hoisted_repository: str | None) -> tuple[str | None, str]:
    """(repository, path) of a file group's key (``group_key`` read back)."""
    if ":" in key:
        repository, _, path = key.partition(":")
        return repository, path
    return hoisted_repository, key


def file_groups(
    rows: Sequence[dict[str, Any]], entries: Sequence[Any], hoisted_repository: str | None
) -> dict[str, list[Any]]:
    """``{path: [entry, …]}`` in first-seen order, keyed ``repository:path`` for another repository's file."""
    out: dict[str, list[Any]] = {}
    for row, entry in zip(rows, entries, strict=True):
        out.setdefault(group_key(row["repository"], row["file_path"], hoisted_repository), []).append(entry)
    return out


def path_tree(counts: dict[str, Any]) -> dict[str, Any]:
    """Paths as a directory tree: a directory holding at least two of them is a key ending in ``/`` whose value
    is its own tree; a directory chain with one entry at each level is written as one key (``src/click/``).

    Leaves keep their values (``{"src/click/": {"core.py": 6, "utils.py": 2}, "setup.py": 1}``); joining the
    keys on the way down gives each path back.
    """
    by_head: dict[str | None, list[tuple[str, Any]]] = {}
    for path, value in counts.items():
        head, sep, rest = path.partition("/")
        by_head.setdefault(head if sep and rest else None, []).append((rest, value) if sep and rest else (path, value))
    out: dict[str, Any] = {}
    for head, items in by_head.items():
        if head is None or len(items) < 2:
            for rest, value in items:
                out[f"{head}/{rest}" if head is not None else rest] = value
            continue
        sub = path_tree(dict(items))
        if len(sub) == 1:
            ((only, value),) = sub.items()
            if only.endswith("/"):
                out[f"{head}/{only}"] = value
                continue
        out[f"{head}/"] = sub
    return out


def tree_paths(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``path_tree`` read back: ``{path: value}``."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if key.endswith("/") and isinstance(value, dict):
            out.update(tree_paths(value, prefix + key))
        else:
            out[prefix + key] = value
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


def page_repository(rows_default: str | None, subject_repository: str | None) -> tuple[str | None, dict[str, str]]:
    """(the repository an unprefixed file key is in, the header field that states it).

    A page about one subject (find_references, the traversals, hierarchies) writes its ``repository`` only when
    it is not the subject's: the subject (``repo:path:line``) already spells that one, so a key without
    ``repo:`` is in the header's ``repository``, else in the subject's (docs/surface.md §6.2).
    """
    default = rows_default or subject_repository
    if rows_default is None or rows_default == subject_repository:
        return default, {}
    return default, {"repository": rows_default}


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
