"""find_by_intent: which files to open for a task described in words (docs/surface.md §11.7).

Files are ranked with BM25 over the lexicon stored in the generation
(identifier sub-words, docstrings and comments, paths); each carries its
score, the query terms it matched and the few declarations that matched.
Deterministic: ties break on repository and path.
"""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import FindByIntent
from server.envelope import Coverage
from server.errors import invalid
from server.queries.intent import FileMatch, matching_symbols, query_terms
from server.queries.intent import find_by_intent as query
from server.selector import check_repository
from server.testfiles import FileRoles, tests_note
from server.tools.common import read_in_language, read_paging, read_symbol_kinds, wrap
from snapshot_format.reader import Generation

COLUMNS = ["file", "terms", "symbols"]
SYMBOL_COLUMNS = ["at", "kind"]


def _ranked_rows(page: list[FileMatch]) -> dict[str, Any]:
    """The ranked files as rows of ``columns`` (file, terms, symbols): a file of another repository than the
    header's ``repository`` is ``repository:path``; a file's matched symbols are rows of ``symbol_columns``
    (label, kind), a symbol of the header's ``kind`` written as its label alone. No rows, no columns."""
    if not page:
        return {"files": []}
    repository = views.default_repository([{"repository": m.repository} for m in page])
    kinds = [{"kind": sym.kind} for m in page for sym in m.symbols]
    kind = views.hoist(kinds, ("kind",), defaults=("kind",)).get("kind")
    header: dict[str, Any] = {}
    if repository is not None:
        header["repository"] = repository
    if kind is not None:
        header["kind"] = kind
    rows = []
    for m in page:
        symbols = [
            label if sym.kind == kind else [label, sym.kind]
            for sym in m.symbols
            for label in (views.label(sym.relative_name or sym.qualified_name, sym.start_line, sym.end_line),)
        ]
        row: list[Any] = [views.group_key(m.repository, m.path, repository), m.matched]
        if symbols:
            row.append(symbols)
        rows.append(row)
    return {**header, "columns": COLUMNS, "symbol_columns": SYMBOL_COLUMNS, "files": rows}


def find_by_intent(gen: Generation, arguments: object) -> dict[str, Any]:
    """Files ranked for a task in words, with the symbols and terms that matched."""
    args = Args(arguments, FindByIntent)
    text = args.string("query") or ""
    repository = args.string("in_repository")
    language = read_in_language(args, gen)
    kinds, kinds_echo = read_symbol_kinds(args)
    include_tests = args.boolean("include_tests")
    paging = read_paging(args, gen)
    check_repository(gen, repository)
    wanted = query_terms(text)
    if not wanted:
        raise invalid("query has no searchable word; describe the task in a few words")
    unusable = gen.lexicon_unusable()
    indexed = unusable is None
    roles = FileRoles(gen)
    ranked = (
        query(gen, text, repository=repository, language=language, kinds=kinds, is_test=roles.is_test)
        if indexed
        else []
    )
    tests = [m for m in ranked if m.test]
    if not include_tests:
        ranked = [m for m in ranked if not m.test]
    cursor_scope = scope(
        "find_by_intent",
        "intent-bm25-v1",
        terms=wanted,
        repository=repository,
        language=language,
        kind=kinds_echo,
        include_tests=include_tests,
    )
    total = len(ranked)

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = ranked[start:end]
        for match in page:
            if not match.symbols:
                match.symbols = matching_symbols(gen, match, kinds=kinds)
        results: dict[str, Any] = {"terms": wanted, **_ranked_rows(page)}
        guidance = None
        if unusable is not None:
            guidance = unusable
        elif total == 0 and not (tests and not include_tests):
            guidance = "no indexed file matches these words; try other words or a name fragment with find_symbol mode substring"
        left_out = 0 if include_tests else len(tests)
        return wrap(
            gen,
            compact=True,
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=Coverage(),
            results=results,
            guidance=guidance,
            tests=tests_note(left_out, left_out) if left_out else None,
        )

    return paging.fit(
        gen,
        total,
        cursor_scope,
        answer,
        tool="find_by_intent",
        narrow_with="in_repository, in_language or symbol_kinds",
    )
