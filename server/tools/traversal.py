"""trace_dependencies (outgoing) and get_blast_radius (incoming): bounded breadth-first walks.

The walk is computed whole, then filtered, sorted and sliced; aggregates are
over the whole walk and never paged. ``traversal_truncated`` (max_nodes
stopped discovery) is stated apart from page truncation. A walk that outlives
the server's deadline is TRAVERSAL_LIMIT_REACHED, never a partial answer.
"""

from __future__ import annotations

from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import GetBlastRadius, TraceDependencies
from server.queries import counterparts, traverse
from server.queries.repositories import is_derived
from server.selector import check_repository, parse_selector, resolve
from server.tools.changes import blast_radius_of_changes
from server.tools.common import merged_with, read_in_language, read_paging, read_symbol_kinds, read_view, wrap
from server.tools.paths import trace_path
from server.tools.tree import tree_answer
from server.tools.unbound import unbound_groups
from server.tools.walk import (
    NARROW_WITH,
    Row,
    blast_row_filter,
    compact_blast_head,
    compact_nodes,
    completeness_block,
    full_aggregates,
    full_node,
    kind_filters,
    load_rows,
    read_walk_args,
    rows_coverage,
    run_walk,
    tests_last,
    tree_head,
    walk_guidance,
)
from snapshot_format import keys
from snapshot_format.reader import Generation

# --- trace_dependencies -----------------------------------------------------------------------------------------


def trace_dependencies(gen: Generation, arguments: object) -> dict[str, Any]:
    """What the symbol (and its members) reaches, outgoing, breadth first."""
    args = Args(arguments, TraceDependencies)
    if args.raw("to") is not None:
        return trace_path(gen, args)
    repo = args.string("in_repository")
    selector = parse_selector(args, repo_filter=repo)
    walk_args = read_walk_args(args)
    language = read_in_language(args, gen)
    include_derived = args.boolean("include_derived")
    view = read_view(args, files_allowed=False, tree_allowed=True)
    paging = read_paging(args, gen)
    check_repository(gen, repo)
    root = resolve(gen, selector)
    root16 = keys.key_to_bytes(root.key)
    seeds = [root16, *traverse.members_of(gen, root)]
    walked = run_walk(gen, seeds, outgoing=True, walk_args=walk_args)
    known = {root16: root}
    rows = [
        r
        for r in load_rows(gen, walked, known)
        if (repo is None or r.symbol.repository == repo)
        and (language is None or r.symbol.language == language)
        and (include_derived or repo is not None or not is_derived(r.symbol.repository))
    ]
    rows.sort(key=Row.sort_key)
    cursor_scope = scope(
        "trace_dependencies",
        "dependencies-v1",
        subject=root.key,
        depth=walk_args.depth,
        max_nodes=walk_args.max_nodes,
        repo=repo,
        language=language,
        edge_kinds=walk_args.kinds_identity,
        confidence=walk_args.confidence,
        include_derived=include_derived,
    )
    total = len(rows)
    if view == "tree":
        blind = traverse.unbound_inside(gen, seeds, walked, walk_args.depth)
        extra = tree_head(root, walk_args)
        extra.update(unbound_groups(gen, blind, include_tests=True, repository=None).fields(compact=True))
        members = {keys.key_to_bytes(s.key): s for s in gen.symbols_by_raw(seeds[1:])}
        return tree_answer(
            gen,
            roots=[{root16: root, **members}],
            rows=rows,
            all_rows=load_rows(gen, walked, known),
            outgoing=True,
            walk_args=walk_args,
            extra=extra,
            cursor_given=args.raw("cursor") is not None,
            truncated_walk=walked.truncated,
            unresolved=len(blind),
        )

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        head: dict[str, Any] = {
            "root_key": root.key,
            "root_repository": root.repository,
            "depth": walk_args.depth,
            "max_nodes": walk_args.max_nodes,
            "reached": len(walked.reached),
            "deepest_depth": max((r.reached.depth for r in rows), default=0),
        }
        if view == "full":
            results: dict[str, Any] = {
                **head,
                "traversal_truncated": walked.truncated,
                "nodes": [full_node(r) for r in page],
            }
        else:
            if walked.truncated:
                head["traversal_truncated"] = True
            header, body = compact_nodes(page, subject_repository=root.repository)
            results = views.finish({**head, **header, **body})
        # What the walk could not follow: uses inside the declarations it went on from that nothing bound.
        blind = traverse.unbound_inside(gen, seeds, walked, walk_args.depth)
        results.update(
            unbound_groups(
                gen, blind, include_tests=True, repository=results.get("repository", root.repository)
            ).fields(compact=view != "full")
        )
        coverage = rows_coverage(rows)
        coverage.unresolved_related += len(blind)
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            guidance=walk_guidance(total, len(page), walked.truncated, walk_args.max_nodes),
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="trace_dependencies", narrow_with=NARROW_WITH)


def get_blast_radius(gen: Generation, arguments: object) -> dict[str, Any]:
    """What a change to the symbol reaches: the incoming walk, with aggregates and a completeness verdict.

    Affected symbols in test files are a group of their own (``tests``), after the others in the paging
    order: they say which tests to run, not what else breaks.
    """
    args = Args(arguments, GetBlastRadius)
    if args.raw("changes") is not None:
        return blast_radius_of_changes(gen, args)
    repo = args.string("in_repository")
    selector = parse_selector(args, repo_filter=repo)
    walk_args = read_walk_args(args)
    kinds, kinds_echo = read_symbol_kinds(args)
    language = read_in_language(args, gen)
    include_derived = args.boolean("include_derived")
    view = read_view(args, files_allowed=False, tree_allowed=True)
    paging = read_paging(args, gen)
    check_repository(gen, repo)
    root = resolve(gen, selector)
    root16 = keys.key_to_bytes(root.key)
    # A stub and the implementation it stands for answer as one symbol (docs/surface.md §4.6): the walk starts
    # from both, and a hop-one row reached from a counterpart says so in reached_from.
    group = counterparts.counterparts(gen, root)
    seeds = {root16: root, **{keys.key_to_bytes(s.key): s for s in group}}
    walked = run_walk(gen, list(seeds), outgoing=False, walk_args=walk_args)
    kept = blast_row_filter(kinds, kinds_echo, repo, language, include_derived)
    rows, in_tests = tests_last(gen, [r for r in load_rows(gen, walked, seeds) if kept(r)])
    agg = traverse.aggregate([(r.reached, r.symbol) for r in rows], walked.relation_kinds)
    verdict = traverse.completeness(gen, root, walked, walk_args.depth, also=group)
    cursor_scope = scope(
        "get_blast_radius",
        "blast-radius-v2",
        subject=root.key,
        depth=walk_args.depth,
        max_nodes=walk_args.max_nodes,
        edge_kinds=walk_args.kinds_identity,
        confidence=walk_args.confidence,
        kinds=kinds_echo,
        repo=repo,
        language=language,
        include_derived=include_derived,
    )
    total = len(rows)
    if view == "tree":
        extra = tree_head(root, walk_args)
        if kinds_echo is not None:
            extra["symbol_kinds"] = kinds_echo
        if group:
            extra["merged_with"] = merged_with(gen, group, full=False)
        if walked.dispatch_through:
            extra["dispatch_through"] = [s.qualified_name for s in gen.symbols_by_raw(walked.dispatch_through)]
        return tree_answer(
            gen,
            roots=[seeds],
            rows=rows,
            all_rows=load_rows(gen, walked, seeds),
            outgoing=False,
            walk_args=walk_args,
            extra=extra,
            cursor_given=args.raw("cursor") is not None,
            truncated_walk=walked.truncated,
            completeness=completeness_block(verdict, gen, compact=True),
            unresolved=verdict.unresolved_count,
        )

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        page_main = [r for r in page if id(r) not in in_tests]
        page_tests = [r for r in page if id(r) in in_tests]
        filters = kind_filters(kinds_echo, view)
        deepest = max((r.reached.depth for r in rows), default=0)
        if view == "full":
            results: dict[str, Any] = {
                "root_key": root.key,
                "root_repository": root.repository,
                "depth": walk_args.depth,
                "max_nodes": walk_args.max_nodes,
                **filters,
                "affected": total,
                "affected_in_tests": len(in_tests),
                "deepest_depth": deepest,
                "traversal_truncated": walked.truncated,
                "symbols": [full_node(r) for r in page_main],
                "tests": [full_node(r) for r in page_tests],
                **full_aggregates(agg),
                "by_package": [
                    {
                        "package_key": f"package:{lang}:{repo_}:{pkg}",
                        "package_name": pkg,
                        "repository": repo_,
                        "count": n,
                    }
                    for (lang, repo_, pkg), n in sorted(agg.by_package.items())
                ],
            }
        else:
            results = compact_blast_head(root, walk_args, filters, rows, len(page), deepest, walked.truncated, agg)
            header, body = compact_nodes(
                page_main, implied_from=root.qualified_name, tests=page_tests, subject_repository=root.repository
            )
            results = views.finish({**results, **header, **body})
        if group:
            results["merged_with"] = merged_with(gen, group, full=view == "full")
        if walked.dispatch_through or walked.dispatch_outside:
            # Calls written against these methods may run the root (or a member reached): their callers are rows.
            results["dispatch_through"] = [
                *(s.qualified_name for s in gen.symbols_by_raw(walked.dispatch_through)),
                *walked.dispatch_outside,
            ]
        coverage = rows_coverage(rows)
        coverage.unresolved_related += verdict.unresolved_count
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            completeness=completeness_block(verdict, gen, compact=view != "full"),
            guidance=walk_guidance(total, len(page), walked.truncated, walk_args.max_nodes),
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="get_blast_radius", narrow_with=NARROW_WITH)
