"""What every JSON tool shares: paging with cursors, the view and response_format arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.args import Args
from server.cursor import Cursor, CursorScope, decode_cursor, encode_cursor
from server.envelope import Coverage, envelope
from server.errors import invalid
from server.pending import pending_exact
from snapshot_format.reader import Generation
from snapshot_format.vocab import Provenance

RESPONSE_FORMATS = ("concise", "detailed")
VIEWS = ("compact", "full", "files")


@dataclass(frozen=True)
class Paging:
    """A page request: where the cursor resumes and how many rows."""

    limit: int
    cursor: Cursor | None

    def window(self, gen: Generation, total: int, cursor_scope: CursorScope) -> tuple[int, int, str | None]:
        """(start, end, next_cursor) of the page within ``total`` rows."""
        start = self.cursor.offset_for(cursor_scope, total) if self.cursor is not None else 0
        end = min(total, start + self.limit)
        next_cursor = encode_cursor(gen.id, end, cursor_scope) if end < total else None
        return start, end, next_cursor


def read_paging(args: Args, gen: Generation, default_limit: int) -> Paging:
    """Limit and cursor; a cursor of another snapshot fails here, before any lookup."""
    limit = args.limit(default_limit)
    token = args.string("cursor")
    return Paging(limit=limit, cursor=decode_cursor(token, gen.id) if token is not None else None)


def read_view(args: Args, *, files_allowed: bool) -> str:
    view = args.enum("view", VIEWS, "compact")
    if view == "files" and not files_allowed:
        raise invalid("view files is only accepted by find_references and get_file_outline; use compact or full")
    return view


def read_detailed(args: Args) -> bool:
    return args.enum("response_format", RESPONSE_FORMATS, "concise") == "detailed"


def read_path_prefix(args: Args, field: str) -> str | None:
    """A plain prefix of repository-relative paths (not normalized, so ``src/a`` also matches ``src/ab.py``)."""
    value = args.string(field)
    if value is None:
        return None
    if value.startswith("/"):
        raise invalid(f"{args.name(field)} must be repository-relative, not absolute: {value!r}")
    if ".." in value.split("/"):
        raise invalid(f"{args.name(field)} must stay inside the repository (no '..' segment): {value!r}")
    return value


def wrap(
    gen: Generation,
    *,
    compact: bool,
    total: int,
    returned: int,
    next_cursor: str | None,
    coverage: Coverage,
    results: Any,
    guidance: str | None = None,
    completeness: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The envelope of this generation around ``results``."""
    return envelope(
        compact=compact,
        snapshot_id=gen.id,
        built_at_ns=gen.manifest.built_at_ns,
        total=total,
        returned=returned,
        next_cursor=next_cursor,
        coverage=coverage,
        results=results,
        guidance=guidance,
        completeness=completeness,
        pending=pending_exact(gen),
    )


def truncation_guidance(returned: int, total: int, narrow_with: str) -> str:
    return f"showing {returned} of {total}; narrow with {narrow_with}, or pass the cursor for the next page"


def provenance_name(code: int) -> str:
    """A provenance code's name; a code this build does not know (a newer indexer's) is named by number."""
    try:
        return Provenance(code).name
    except ValueError:
        return f"PROVENANCE_{code}"
