"""What every JSON tool shares: paging with cursors, the view and response_format arguments."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from server.access import ACCESS_NOTE, access_tag, is_limited, language_counts
from server.args import Args
from server.cursor import Cursor, CursorScope, decode_cursor, encode_cursor, within_view
from server.envelope import Coverage, envelope
from server.errors import invalid
from server.pending import pending_exact
from server.queries import counterparts
from server.testfiles import FileRoles, tests_note
from server.views import encoded_size
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import SYMBOL_KINDS, Provenance

VIEWS = ("compact", "full", "files", "tree")
T = TypeVar("T")


@dataclass(frozen=True)
class Paging:
    """A page request: where the cursor resumes and how many rows."""

    limit: int
    cursor: Cursor | None

    def window(self, gen: Generation, total: int, cursor_scope: CursorScope) -> tuple[int, int, str | None]:
        """(start, end, next_cursor) of the page within ``total`` rows (a cursor serves one view of one snapshot)."""
        cursor_scope = within_view(cursor_scope, access_tag(gen))
        start = self.cursor.offset_for(cursor_scope, total) if self.cursor is not None else 0
        end = min(total, start + self.limit)
        next_cursor = encode_cursor(gen.id, end, cursor_scope) if end < total else None
        return start, end, next_cursor

    def fit(
        self,
        gen: Generation,
        total: int,
        cursor_scope: CursorScope,
        build: Callable[[int, int, str | None], dict[str, Any]],
        *,
        tool: str,
        narrow_with: str,
    ) -> dict[str, Any]:
        """The answer for the page, cut at a row boundary when it is over the tool's answer budget.

        ``build(start, end, next_cursor)`` makes the whole answer of the rows ``[start, end)``. When the page's
        answer encodes larger than ``ANSWER_BYTE_BUDGET[tool]``, the answer is the most rows from ``start`` that
        fit (at least one: a single row is never cut), with the cursor of the row after the last one and
        guidance that says so; the rows are never truncated mid-row.
        """
        start, end, next_cursor = self.window(gen, total, cursor_scope)
        answer = build(start, end, next_cursor)
        budget = ANSWER_BYTE_BUDGET[tool]
        room = budget - SIZE_FIELD_BYTES  # the size estimate is added to the answer once it is chosen
        if end - start <= 1 or encoded_size(answer) <= room:
            return answer
        scoped = within_view(cursor_scope, access_tag(gen))

        def cut_at(rows: int) -> dict[str, Any]:
            note = (
                f"cut after {rows} of the {end - start} rows asked for (of {total}) to keep this answer within the "
                f"tool's budget of {budget} bytes; pass next_cursor for the next rows, or narrow with {narrow_with}"
            )
            return with_guidance(build(start, start + rows, encode_cursor(gen.id, start + rows, scoped)), note)

        low, high = 1, end - start - 1
        best: dict[str, Any] | None = None
        while low <= high:  # the most rows that fit: the answer grows with its rows
            mid = (low + high) // 2
            candidate = cut_at(mid)
            if encoded_size(candidate) <= room:
                best, low = candidate, mid + 1
            else:
                high = mid - 1
        return best if best is not None else cut_at(1)


FILES_VIEW_LIMIT = 500  # the files view's default page: paths and counts are small, so it lists more of them


def read_paging(args: Args, gen: Generation, *, files_view: bool = False) -> Paging:
    """Limit (the declared default, or the files view's) and cursor; a cursor of another snapshot fails here,
    before any lookup."""
    limit = args.limit(FILES_VIEW_LIMIT if files_view else None)
    token = args.string("cursor")
    return Paging(limit=limit, cursor=decode_cursor(token, gen.id) if token is not None else None)


def read_view(args: Args, *, files_allowed: bool, tree_allowed: bool = False) -> str:
    view = args.one_of("view", VIEWS, args.spec("view").default)
    if view == "files" and not files_allowed:
        also = ", full or tree" if tree_allowed else " or full"
        raise invalid(f"view files is only accepted by find_references and get_file_outline; use compact{also}")
    if view == "tree" and not tree_allowed:
        also = ", full or files" if files_allowed else " or full"
        raise invalid(f"view tree is only accepted by get_blast_radius and trace_dependencies; use compact{also}")
    return view


def served_languages(gen: Generation) -> tuple[str, ...]:
    """The languages the generation holds symbols in, in the vocabulary's order (the schemas' enum)."""
    held = {e.key for e in language_counts(gen) if e.count}
    return (*(lang for lang in LANGUAGES if lang in held), *sorted(held - set(LANGUAGES)))


def read_in_language(args: Args, gen: Generation) -> str | None:
    """``in_language``: one of the languages this generation holds (any other would silently match nothing)."""
    value = args.string("in_language")
    if value is None:
        return None
    served = served_languages(gen)
    if value not in served:
        raise invalid(
            f"{args.name('in_language')} must be one of the languages this graph holds "
            f"({', '.join(served) or 'none yet'}); got {value!r}"
        )
    return value


def read_symbol_kinds(args: Args) -> tuple[frozenset[str] | None, list[str] | None]:
    """``symbol_kinds``: (None, None) when absent, else (the kinds, or None for ``["*"]``; the sorted echo)."""
    raw = args.string_list("symbol_kinds")
    if not raw:
        return None, None
    if "*" in raw:
        if len(set(raw)) != 1:
            raise invalid('symbol_kinds ["*"] means every kind and must stand alone')
        return None, ["*"]
    unknown = [k for k in raw if k not in SYMBOL_KINDS]
    if unknown:
        raise invalid(
            f'symbol_kinds: {unknown[0]!r} is not a symbol kind; accepted: {", ".join(sorted(SYMBOL_KINDS))} or ["*"]'
        )
    chosen = sorted(set(raw))
    return frozenset(chosen), chosen


@dataclass(frozen=True)
class SplitByTests:
    """Rows with those in test files left out (unless asked for), and what was left out."""

    kept: list[Any]
    test_rows: int = 0
    test_files: int = 0

    def note(self) -> str | None:
        return tests_note(self.test_rows, self.test_files) if self.test_rows else None


def split_tests(
    gen: Generation, rows: Sequence[T], where: Callable[[T], tuple[str, str, str]], include_tests: bool
) -> SplitByTests:
    """Leave out the rows whose (repository, path, language) is a test file, counting them; all with include_tests."""
    if include_tests:
        return SplitByTests(list(rows))
    roles = FileRoles(gen)
    kept: list[T] = []
    files: set[tuple[str, str]] = set()
    dropped = 0
    for row in rows:
        repository, path, language = where(row)
        if roles.is_test(repository, path, language):
            dropped += 1
            files.add((repository, path))
        else:
            kept.append(row)
    return SplitByTests(kept, dropped, len(files))


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
    tests: str | None = None,
) -> dict[str, Any]:
    """The envelope of this generation around ``results``; a limited token's answer says what it covers."""
    limited = is_limited(gen)
    if limited and completeness is not None:
        completeness = {**completeness, "within": ACCESS_NOTE}
    return envelope(
        compact=compact,
        snapshot_id=gen.id,
        built_at_ns=gen.built_at_ns,
        total=total,
        returned=returned,
        next_cursor=next_cursor,
        coverage=coverage,
        results=results,
        guidance=guidance,
        completeness=completeness,
        tests=tests,
        pending=pending_exact(gen),
        access=ACCESS_NOTE if limited else None,
    )


# Bytes one answer of a tool may take (its encoded JSON; about a quarter as many tokens): a page over it is cut
# at a row boundary with a cursor (``Paging.fit``). The walks' budget stays under the result size their
# tools/list entry announces (anthropic/maxResultSizeChars); the others keep an answer well inside the
# result sizes clients show an agent whole.
ANSWER_BYTE_BUDGET: dict[str, int] = {
    "find_references": 48_000,
    "find_symbol": 48_000,
    "get_file_outline": 64_000,
    "find_cross_repo_consumers": 48_000,
    "find_by_intent": 32_000,
    "trace_dependencies": 100_000,
    "get_blast_radius": 100_000,
    "list_repositories": 48_000,
}


SIZE_FIELD_BYTES = 32  # "size_tokens":N, with room to spare


def with_guidance(answer: dict[str, Any], note: str) -> dict[str, Any]:
    """The answer with ``guidance`` set to ``note``, in the envelope's place for it (before ``results``)."""
    out: dict[str, Any] = {}
    for key, value in answer.items():
        if key == "guidance":
            continue
        if key in ("tests", "pending_exact", "access", "results") and "guidance" not in out:
            out["guidance"] = note
        out[key] = value
    out.setdefault("guidance", note)
    return out


def truncation_guidance(returned: int, total: int, narrow_with: str) -> str:
    return f"showing {returned} of {total}; narrow with {narrow_with}, or pass the cursor for the next page"


def provenance_name(code: int) -> str:
    """A provenance code's name; a code this build does not know (a newer indexer's) is named by number."""
    try:
        return Provenance(code).name
    except ValueError:
        return f"PROVENANCE_{code}"


def subject_full(s: Symbol) -> dict[str, Any]:
    """The subject as a full view states it."""
    return {
        "stable_key": s.key,
        "name": s.name,
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "repository": s.repository,
        "file_path": s.path,
        "start_line": s.start_line,
    }


def merged_with(gen: Generation, group: list[Symbol], *, full: bool) -> list[Any]:
    """The declarations answering with the subject (docs/surface.md §4.6): ``repository:path:line qn (role)``,
    or in the full view objects with the stable key."""
    if not full:
        return [counterparts.described(gen, s) for s in group]
    return [
        {
            "stable_key": s.key,
            "qualified_name": s.qualified_name,
            "repository": s.repository,
            "file_path": s.path,
            "start_line": s.start_line,
            "role": counterparts.role(gen, s),
        }
        for s in group
    ]
