"""find_symbol and get_symbol."""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import FindSymbol, GetSymbol
from server.envelope import Coverage
from server.queries.symbols import (
    SIGNATURE_KINDS,
    SORTING_VERSION,
    concise_signature,
    count_unresolved_named,
    first_named,
    load,
    match_symbols,
    symbol_detail,
)
from server.selector import check_repository, did_you_mean, parse_selector, resolve
from server.testfiles import FileRoles, tests_note
from server.tools.common import read_in_language, read_paging, read_path_prefix, read_symbol_kinds, read_view, wrap
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol


def find_symbol(gen: Generation, arguments: object) -> dict[str, Any]:
    """Declarations by name, in ascending stable-key order."""
    args = Args(arguments, FindSymbol)
    name = args.string("name") or ""
    mode = args.enum("mode") or ""
    kinds, kinds_echo = read_symbol_kinds(args)
    repo = args.string("in_repository")
    path_prefix = read_path_prefix(args, "in_path")
    language = read_in_language(args, gen)
    include_tests = args.boolean("include_tests")
    include_derived = args.boolean("include_derived")
    view = read_view(args, files_allowed=False)
    paging = read_paging(args, gen)
    check_repository(gen, repo)
    roles = FileRoles(gen)
    in_tests: set[tuple[str, str]] = set()
    left_out = 0

    def keep_file(repository: str, path: str) -> bool:
        nonlocal left_out
        if language is not None and roles.language(repository, path) != language:
            return False
        if not include_tests and roles.is_test(repository, path):
            left_out += 1
            in_tests.add((repository, path))
            return False
        return True

    filtering = language is not None or not include_tests
    matches = match_symbols(
        gen,
        name,
        mode=mode,
        kinds=kinds,
        repo=repo,
        path_prefix=path_prefix,
        include_derived=include_derived,
        keep_file=keep_file if filtering else None,
    )
    cursor_scope = scope(
        "find_symbol",
        SORTING_VERSION,
        name=name,
        mode=mode,
        kind=kinds_echo,
        repo=repo,
        path_prefix=path_prefix,
        language=language,
        include_tests=include_tests,
        include_derived=include_derived,  # it decides which rows exist, as on the other tools
    )

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = load(gen, matches[start:end])
        coverage = Coverage(exact=len(page), unresolved_related=count_unresolved_named(gen, name))
        if view == "full":
            results: Any = [_full_row(s) for s in page]
        else:
            results = _compact(page)
        guidance = None
        if not matches and not left_out:
            filters = {"kinds": kinds, "repo": repo, "path_prefix": path_prefix, "include_derived": include_derived}
            guidance = _unparsed_guidance(gen, name) or _close_guidance(
                gen, name, roles, language, include_tests, filters
            )
        return wrap(
            gen,
            compact=view == "compact",
            total=len(matches),
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            guidance=guidance,
            tests=tests_note(left_out, len(in_tests)) if left_out else None,
        )

    return paging.fit(
        gen, len(matches), cursor_scope, answer, tool="find_symbol", narrow_with="mode, symbol_kinds or in_repository"
    )


def _unparsed_guidance(gen: Generation, name: str) -> str | None:
    """When nothing is declared under ``name`` but it occurs on lines that do not parse, name those files."""
    files: dict[str, None] = {}
    for u in gen.unresolved_by_name(name):
        if u.reason == "SYNTAX_ERROR":
            files[f"{u.repository}:{u.path}:{u.line}"] = None
            if len(files) >= 5:
                break
    if not files:
        return None
    return (
        f"no declaration named {name!r} was found, but the name occurs on lines that do not parse, where a "
        f"declaration may be: {', '.join(files)}; open those lines, or re-index once the file parses"
    )


def _close_guidance(
    gen: Generation, name: str, roles: FileRoles, language: str | None, include_tests: bool, filters: dict[str, Any]
) -> str | None:
    """When nothing matches, the closest declarations within the same filters (docs/surface.md §4.7), if any."""

    def within(repository: str, path: str) -> bool:
        if language is not None and roles.language(repository, path) != language:
            return False
        return include_tests or not roles.is_test(repository, path)

    def declared(candidate: str, limit: int) -> list[Symbol]:
        return first_named(gen, candidate, limit, keep_file=within, **filters)

    close = did_you_mean(gen, name, declared)
    if not close:
        return None
    narrowed = language is not None or any(filters[k] is not None for k in ("kinds", "repo", "path_prefix"))
    return f"no declaration matches {name!r}{' within the filters' if narrowed else ''}; did you mean {close}?"


def _full_row(s: Symbol) -> dict[str, Any]:
    return {
        "stable_key": s.key,
        "name": s.name,
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "signature": s.signature,
        "package": s.package,
        "language": s.language,
        "exported": s.exported,
        "repository": s.repository,
        "file_path": s.path,
        "start_line": s.start_line,
        "end_line": s.end_line,
    }


_SYMBOL_TAIL = ("name", "kind", "exported", "sig")


def _compact(page: list[Symbol]) -> dict[str, Any]:
    """Declarations grouped by file as ``qn@start[-end]`` labels, shared columns hoisted.

    A deviation from the reference system's ``symbols: [{at, end?, qn?, name?, sig?}]`` objects
    (docs/surface.md §6.3 item 3): the same facts, written in the label grammar that find_references and the
    traversals use (docs/surface.md §6.2), so a path, a repository and the field names are not repeated per
    declaration. The kind most rows share is the header's, and a row of another kind states its own.

    A locator, as a language server's workspace symbols are: a row's signature is left to ``view: "full"``
    (and to get_symbol), except where two rows of the page share a qualified name (overloads, a name declared
    twice in one scope), whose signatures tell them apart. A signature shared by every such row is hoisted.
    """
    names: dict[tuple[str, str], int] = {}
    for s in page:
        names[(s.repository, s.qualified_name)] = names.get((s.repository, s.qualified_name), 0) + 1
    rows = []
    for s in page:
        sig = concise_signature(s) if names[(s.repository, s.qualified_name)] > 1 else ""
        implied = views.name_is_implied(s.name, s.qualified_name)
        rows.append(
            {
                "repository": s.repository,
                "file_path": s.path,
                "name": "" if implied else s.name,
                "kind": s.kind,
                "exported": views.export_state(s),
                "sig": sig if s.kind in SIGNATURE_KINDS and sig else "",
                "label": views.module_label(s),
            }
        )
    hoisted = views.hoist(rows, ("name", "kind", "exported", "sig"), defaults=("kind", "exported"))
    header = views.readable(hoisted)
    repository = views.default_repository(rows)
    if repository is not None:
        header = {**header, "repository": repository}

    def at(members: list[dict[str, Any]], skip: tuple[str, ...]) -> dict[str, list[Any]]:
        entries = [views.tail_entry(m["label"], m, _SYMBOL_TAIL, skip, hoisted) for m in members]
        return views.file_groups(members, entries, repository)

    shapes = [{**header, "files": at(rows, ())}]
    for key in (("kind", "exported"), ("kind", "exported", "sig")):
        loose = tuple(c for c in key if c not in header)
        split = views.buckets(rows, loose) if loose else []
        if len(split) > 1:
            groups = [{**views.readable(bucket), "files": at(members, loose)} for bucket, members in split]
            shapes.append({**header, "groups": groups})
    return views.finish(views.smallest(*shapes))


def get_symbol(gen: Generation, arguments: object) -> dict[str, Any]:
    """Every stored fact about one symbol; the envelope is always the full one."""
    args = Args(arguments, GetSymbol)
    selector = parse_selector(args)
    sym = resolve(gen, selector)
    return wrap(
        gen,
        compact=False,
        total=1,
        returned=1,
        next_cursor=None,
        coverage=Coverage(),
        results=symbol_detail(gen, sym, detailed=True),
    )
