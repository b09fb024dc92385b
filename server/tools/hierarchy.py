"""find_references with ``relation``: implementations, supertypes, subtypes, overrides (docs/surface.md §11.5.1).

The rows are the hierarchy walk's nodes (``server/queries/hierarchy.py``), shaped as the walks' rows are
(kind, hop, reached from, via kind, via confidence), with a completeness verdict that says where the
hierarchy can be larger than the graph shows: a relation the type checker left undecided (Go generics),
a repository of the language analysed without its checker (Go types implement interfaces structurally,
so the fallback knows no implementation; in other languages its relations are CANDIDATE), a base-type
expression nothing bound, CANDIDATE edges, and a hierarchy deeper or wider than the walk's bounds.
"""

from __future__ import annotations

import time
from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.errors import TRAVERSAL_LIMIT_REACHED, ToolError, invalid
from server.queries import hierarchy, traverse
from server.queries.repositories import is_derived
from server.selector import check_repository, parse_selector, resolve
from server.testfiles import tests_note
from server.tools.common import (
    read_in_language,
    read_paging,
    read_view,
    split_tests,
    subject_full,
    truncation_guidance,
    wrap,
)
from server.tools.walk import (
    DEADLINE_SECONDS,
    Row,
    compact_nodes,
    completeness_block,
    full_node,
    load_rows,
    rows_coverage,
)
from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import Confidence

CONFIDENCES = tuple(c.name for c in Confidence)


def _verdict(
    gen: Generation, subject: Symbol, found: hierarchy.Hierarchy, nodes: list[Symbol]
) -> traverse.Completeness:
    """Where the hierarchy can hold more than the rows (module docstring)."""
    member = not hierarchy.is_type(subject)
    spots: dict[tuple[str, str, int, int, str, str], Unresolved] = {}
    walked = [subject, *nodes]
    if not found.upward and not member:
        # a type whose base expression nothing bound may extend any of these: unresolved names in a type's head
        for sym in walked:
            for u in gen.unresolved_by_name(sym.name):
                holder = gen.symbol(u.source) if u.source else None
                if traverse.could_reach(u, sym) and (holder is None or hierarchy.is_type(holder)):
                    spots.setdefault((u.repository, u.path, u.line, u.col, u.reason, u.name), u)
    elif found.upward and not member:
        for u in traverse.unbound_inside(gen, [keys.key_to_bytes(s.key) for s in walked], found.walk, 0):
            holder = gen.symbol(u.source) if u.source else None
            if holder is not None and hierarchy.is_type(holder):
                spots.setdefault((u.repository, u.path, u.line, u.col, u.reason, u.name), u)
    dispatch = ""
    for sym in walked:
        why = traverse.undecided_dispatch(gen, sym)
        if not why and not member:
            undecided = traverse.undecided_relations(gen, sym)
            if undecided:
                why = f"{undecided[0].detail}, so the hierarchy of {sym.qualified_name} may hold more than the graph lists"
        if why:
            dispatch = why
            break
    missing = []
    for repo in gen.repositories():
        for a in repo.analyses:
            if traverse.family(a.language) == traverse.family(subject.language) and a.mode != "exact":
                missing.append((repo.name, a.language, a.reason or a.mode))
    listed = sorted(spots.values(), key=lambda u: (u.repository, u.path, u.line, u.col, u.name))
    lower = bool(listed or dispatch or missing or found.walk.candidate_edges or found.cut)
    fallback = None
    if lower:
        roots = {r.name: r.root for r in gen.repositories()}
        paths = dict.fromkeys(traverse.on_disk(roots, u.repository, u.path) for u in listed if u.path)
        for name, _language, _reason in missing:
            if roots.get(name):
                paths.setdefault(roots[name], None)
        if not paths and roots.get(subject.repository):
            paths[roots[subject.repository]] = None
        fallback = {"pattern": rf"\b{traverse.escape_pattern(subject.name)}\b", "paths": list(paths)}
    cap = traverse.COMPLETENESS_LIST_CAP
    return traverse.Completeness(
        verdict="LOWER_BOUND" if lower else "COMPLETE",
        blind_spots=listed[:cap],
        more_blind_spots=max(len(listed) - cap, 0),
        invisible_scopes=[],
        more_invisible_scopes=0,
        candidate_edges=found.walk.candidate_edges,
        missing_analyzers=missing,
        fallback=fallback,
        dispatch_unknown=dispatch,
    )


def find_relation(gen: Generation, args: Args) -> dict[str, Any]:
    """The subject's hierarchy, transitively: the types or members above or below it (module docstring)."""
    for field, why in (("direction", "relation says which way"), ("edge_kinds", "relation says which relations")):
        if args.raw(field) not in (None, ""):
            raise invalid(f"pass relation or {field}, not both: {why}")
    repo = args.string("in_repository")
    selector = parse_selector(args, repo_filter=repo)
    relation = args.enum("relation") or ""
    language = read_in_language(args, gen)
    confidence_name = args.enum("confidence")
    include_derived = args.boolean("include_derived")
    include_tests = args.boolean("include_tests")
    view = read_view(args, files_allowed=True)
    paging = read_paging(args, gen, files_view=view == "files")
    check_repository(gen, repo)
    subject = resolve(gen, selector)
    member = not hierarchy.is_type(subject)
    if relation == "overrides" and not member:
        raise invalid(
            f"relation overrides is about a method; {subject.qualified_name} is a {subject.kind}: ask supertypes"
        )
    upward = relation in ("supertypes", "overrides")
    try:
        found = hierarchy.walk_hierarchy(
            gen,
            subject,
            upward=upward,
            confidence=int(Confidence[confidence_name]) if confidence_name else None,
            deadline=time.monotonic() + DEADLINE_SECONDS,
        )
    except traverse.TraversalDeadline:
        raise ToolError(
            TRAVERSAL_LIMIT_REACHED, "the hierarchy walk did not finish in time; narrow with confidence"
        ) from None
    subject16 = keys.key_to_bytes(subject.key)
    every = load_rows(gen, found.walk, {subject16: subject})
    verdict = _verdict(gen, subject, found, [r.symbol for r in every])
    rows = [
        r
        for r in every
        if (relation != "implementations" or member or not hierarchy.is_abstract(r.symbol))
        and (repo is None or r.symbol.repository == repo)
        and (language is None or r.symbol.language == language)
        and (include_derived or repo is not None or not is_derived(r.symbol.repository))
    ]
    split = split_tests(gen, rows, lambda r: (r.symbol.repository, r.symbol.path, r.symbol.language), include_tests)
    rows = sorted(split.kept, key=Row.sort_key)
    cursor_scope = scope(
        "find_references",
        "relation-v1",
        subject=subject.key,
        relation=relation,
        repo=repo,
        language=language,
        confidence=confidence_name,
        include_tests=include_tests,
        include_derived=include_derived,
    )
    total = len(rows)

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        page = rows[start:end]
        if view == "full":
            results: dict[str, Any] = {
                "subject": subject_full(subject),
                "relation": relation,
                "levels": found.levels,
                "traversal_truncated": found.cut,
                "nodes": [full_node(r) for r in page],
            }
        elif view == "files":
            counts: dict[str, dict[str, int]] = {}
            for r in page:
                paths = counts.setdefault(r.symbol.repository, {})
                paths[r.symbol.path] = paths.get(r.symbol.path, 0) + 1
            results = {
                **views.subject_head(subject, selector.qualified_name),
                "relation": relation,
                "files": {repository: views.path_tree(paths) for repository, paths in counts.items()},
            }
        else:
            results = {**views.subject_head(subject, selector.qualified_name), "relation": relation}
            if found.cut:
                results["traversal_truncated"] = True
            header, body = compact_nodes(
                page, implied_from=subject.qualified_name, subject_repository=subject.repository
            )
            results = views.finish({**results, **header, **body})
        coverage = rows_coverage(rows)
        coverage.unresolved_related += verdict.unresolved_count
        guidance = None
        if total and len(page) < total:
            guidance = truncation_guidance(len(page), total, "in_repository, in_language or confidence")
        elif not total and not split.test_rows:
            guidance = (
                f"the graph holds no {relation} of this symbol, and completeness says it is complete"
                if verdict.verdict == "COMPLETE"
                else f"the graph holds no {relation} of this symbol, but completeness says where it is blind: this is not "
                "proof of absence"
            )
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            completeness=completeness_block(verdict, gen, compact=view != "full"),
            guidance=guidance,
            tests=tests_note(split.test_rows, split.test_files) if split.test_rows else None,
        )

    return paging.fit(
        gen, total, cursor_scope, answer, tool="find_references", narrow_with="in_repository, in_language or confidence"
    )
