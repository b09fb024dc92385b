"""get_source: bodies in prose, not JSON (JSON-escaping source costs more tokens)."""

from __future__ import annotations

from server.args import Args
from server.errors import invalid
from server.queries.source import BYTE_CEILING, Body, get_sources
from server.selector import SELECTOR_FIELDS, parse_selector, resolve
from server.tools.common import read_detailed
from snapshot_format.reader import Generation

MAX_SYMBOLS = 20


def get_source(gen: Generation, arguments: object) -> str:
    """The code of up to twenty symbols: a header line per body, then its raw bytes."""
    args = Args(arguments, ("symbols", "context_lines", "response_format"))
    entries = args.object_list("symbols", required=True) or []
    if not 1 <= len(entries) <= MAX_SYMBOLS:
        raise invalid(f"symbols must hold between 1 and {MAX_SYMBOLS} selectors; got {len(entries)}")
    context = args.integer("context_lines", default=0, low=0, high=100, zero_is_default=False)
    detailed = read_detailed(args)
    selectors = [parse_selector(Args(e, SELECTOR_FIELDS, where=f"symbols[{i}]")) for i, e in enumerate(entries)]
    symbols = [resolve(gen, s) for s in selectors]
    answer = get_sources(gen, symbols, context_lines=context)
    first = f"snapshot {gen.id}  {answer.bodies} bodies  context {context}"
    if answer.trimmed:
        first += f"  trimmed {answer.trimmed} at the {BYTE_CEILING} byte ceiling"
    out = [first + "\n"]
    for item in answer.items:
        s = item.symbol
        if isinstance(item, Body):
            header = f"@ {s.repository} {s.path}:{item.start}-{item.end} {s.kind} {s.qualified_name}"
            if item.shift is not None:
                header += f" [file changed, re-anchored {item.shift:+d}]"
            if item.trimmed:
                header += " [trimmed]"
            if detailed:
                header += f" {s.key}"
            out.append(header + "\n")
            out.append(item.text)
        else:
            out.append(f"! {s.repository} {s.path} {s.qualified_name} — {item.reason}\n")
    return "".join(out)
