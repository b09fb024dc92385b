"""get_source: bodies in prose, not JSON (JSON-escaping source costs more tokens).

Each entry of ``symbols`` is named and served on its own: one that names no symbol (or names several) is a
``!`` line with the error, and the others are still served.
"""

from __future__ import annotations

from server.access import ACCESS_NOTE, is_limited
from server.args import Args
from server.declarations import GetSource, Selector
from server.errors import ToolError, invalid
from server.queries.source import BYTE_CEILING, Body, get_sources
from server.selector import parse_selector, resolve
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol

MAX_SYMBOLS = 20


def _asked(entry: object) -> str:
    """How an entry named its symbol, for its error line."""
    if isinstance(entry, dict):
        for field in ("stable_key", "qualified_name", "name"):
            value = entry.get(field)
            if isinstance(value, str) and value:
                return value
    return "?"


def get_source(gen: Generation, arguments: object) -> str:
    """The code of up to twenty symbols: a header line per body, then its raw bytes."""
    args = Args(arguments, GetSource)
    entries = args.object_list("symbols", required=True) or []
    if not 1 <= len(entries) <= MAX_SYMBOLS:
        raise invalid(f"symbols must hold between 1 and {MAX_SYMBOLS} selectors; got {len(entries)}")
    context = args.integer("context_lines")
    named: list[Symbol | ToolError] = []
    for i, entry in enumerate(entries):
        try:
            named.append(resolve(gen, parse_selector(Args(entry, Selector, where=f"symbols[{i}]"))))
        except ToolError as exc:
            named.append(exc)
    answer = get_sources(gen, [s for s in named if isinstance(s, Symbol)], context_lines=context)
    errors = sum(1 for s in named if isinstance(s, ToolError))
    first = f"snapshot {gen.id}  {answer.bodies} bodies  context {context}"
    if errors:
        first += f"  {errors} not found"
    if answer.trimmed:
        first += f"  trimmed {answer.trimmed} at the {BYTE_CEILING} byte ceiling"
    if is_limited(gen):
        first += f"  ({ACCESS_NOTE})"
    out = [first + "\n"]
    items = iter(answer.items)
    for i, item_or_error in enumerate(named):
        if isinstance(item_or_error, ToolError):
            out.append(f"! symbols[{i}] {_asked(entries[i])} — {item_or_error.text}\n")
            continue
        item = next(items)
        s = item.symbol
        if isinstance(item, Body):
            header = f"@ {s.repository} {s.path}:{item.start}-{item.end} {s.kind} {s.qualified_name}"
            if item.shift is not None:
                header += f" [file changed, re-anchored {item.shift:+d}" + (f", {item.note}" if item.note else "") + "]"
            if item.trimmed:
                header += " [trimmed]"
            out.append(header + "\n")
            out.append(item.text)
        else:
            out.append(f"! {s.repository} {s.path} {s.qualified_name} — {item.reason}\n")
    return "".join(out)
