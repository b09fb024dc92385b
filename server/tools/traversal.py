"""trace_dependencies (outgoing) and get_blast_radius (incoming): bounded breadth-first walks.

The walk is computed whole, then filtered, sorted and sliced; aggregates are
over the whole walk and never paged. ``traversal_truncated`` (max_nodes
stopped discovery) is stated apart from page truncation. A walk that outlives
the server's deadline is TRAVERSAL_LIMIT_REACHED, never a partial answer.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server import views
from server.args import Args
from server.cursor import scope
from server.declarations import GetBlastRadius, TraceDependencies
from server.envelope import Coverage
from server.errors import TRAVERSAL_LIMIT_REACHED, ToolError, invalid
from server.queries import counterparts, traverse
from server.queries.references import REFERENCE_VOCABULARY
from server.queries.repositories import is_derived
from server.selector import check_repository, parse_selector, resolve
from server.testfiles import FileRoles
from server.tools.common import (
    merged_with,
    provenance_name,
    read_in_language,
    read_paging,
    read_symbol_kinds,
    read_view,
    truncation_guidance,
    wrap,
)
from server.tools.unbound import unbound_groups
from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import Confidence, EdgeKind

# Seconds a walk may run before it is refused with TRAVERSAL_LIMIT_REACHED (the SDK does not expose the
# client's request timeout to a tool, so the server keeps its own, well under the usual client timeouts).
DEADLINE_SECONDS = 5.0

CONFIDENCES = tuple(c.name for c in Confidence)
NARROW_WITH = "depth, max_nodes, edge_kinds or confidence"
# Compact rows leave the provenance of the first edge to view full (as find_references does). Their columns:
# the hop, the node reached from (``from``), the method a dispatched call was written against, and the edge
# kind and confidence of the edge that reached the row.
_HOISTABLE = ("kind", "hop", "from", "dispatch_via", "edge_kind", "confidence")
_TAIL = ("name", "kind", "hop", "from", "dispatch_via", "edge_kind", "confidence")
_GROUP_KEY = ("kind", "hop", "dispatch_via", "edge_kind", "confidence")
_DEFAULTS = ("kind", "hop", "edge_kind", "confidence")  # every row has them: the most common is hoisted


@dataclass(frozen=True)
class WalkArgs:
    depth: int
    max_nodes: int
    kinds: frozenset[int] | None  # None: every reference kind
    kinds_identity: list[str]
    confidence: str | None
    depth_asked: bool = False  # the request spelled depth (a compact header leaves the echo off)


@dataclass(frozen=True)
class Row:
    symbol: Symbol
    reached: traverse.Reached
    reached_from: Symbol | None
    # The method the caller wrote its call against, when it reaches the root by dispatch.
    dispatch_via: Symbol | None = None

    @property
    def dispatch_name(self) -> str:
        """The method the call was written against ("" for a direct edge), a method outside the graph too."""
        return self.dispatch_via.qualified_name if self.dispatch_via is not None else self.reached.dispatch_outside

    def sort_key(self) -> tuple[object, ...]:
        s = self.symbol
        return (self.reached.depth, s.repository, s.path, s.start_line, s.start_col, s.qualified_name, s.key)


def read_walk_args(args: Args) -> WalkArgs:
    depth = args.integer("depth")
    max_nodes = args.integer("max_nodes")
    raw = args.string_list("edge_kinds")
    if not raw:
        kinds, identity = None, ["*"]
    elif "*" in raw:
        if len(set(raw)) != 1:
            raise invalid('edge_kinds ["*"] means every kind and must stand alone')
        kinds, identity = None, ["*"]
    else:
        unknown = [k for k in raw if k not in REFERENCE_VOCABULARY]
        if unknown:
            raise invalid(
                f"edge_kinds: {unknown[0]!r} is not a reference kind; accepted: "
                f'{", ".join(REFERENCE_VOCABULARY)} or ["*"]'
            )
        identity = sorted(set(raw))
        kinds = frozenset(int(EdgeKind[k]) for k in identity)
    confidence = args.enum("confidence")
    asked = args.raw("depth") not in (None, 0)  # zero is the default
    return WalkArgs(depth, max_nodes, kinds, identity, confidence, depth_asked=asked)


def run_walk(
    gen: Generation, seeds: list[bytes], *, outgoing: bool, walk_args: WalkArgs, deadline: float | None = None
) -> traverse.Walk:
    """The walk, refused with TRAVERSAL_LIMIT_REACHED past ``deadline`` (default: the server's, from now)."""
    deadline = deadline if deadline is not None else time.monotonic() + DEADLINE_SECONDS
    try:
        return traverse.walk(
            gen,
            seeds,
            outgoing=outgoing,
            depth=walk_args.depth,
            max_nodes=walk_args.max_nodes,
            kinds=walk_args.kinds,
            confidence=Confidence[walk_args.confidence] if walk_args.confidence else None,
            deadline=deadline,
        )
    except traverse.TraversalDeadline:
        raise ToolError(
            TRAVERSAL_LIMIT_REACHED,
            f"the walk did not finish within {DEADLINE_SECONDS:g} seconds; lower depth or max_nodes, or narrow "
            "edge_kinds or confidence",
        ) from None


def load_rows(gen: Generation, walked: traverse.Walk, known: dict[bytes, Symbol]) -> list[Row]:
    """Records for every reached node (and the node it was reached from), in walk order."""
    symbols = dict(known)
    wanted = list(
        dict.fromkeys(
            k for r in walked.reached for k in (r.key16, r.reached_from, r.dispatch_via) if k and k not in symbols
        )
    )
    found = list(gen.symbols_by_raw(wanted))
    if len(found) == len(wanted):  # every key has its record (the invariant): pair them without re-encoding keys
        symbols.update(zip(wanted, found, strict=True))
    else:
        symbols.update((keys.key_to_bytes(sym.key), sym) for sym in found)
    rows = []
    for r in walked.reached:
        sym = symbols.get(r.key16)
        if sym is not None:
            rows.append(
                Row(sym, r, symbols.get(r.reached_from), symbols.get(r.dispatch_via) if r.dispatch_via else None)
            )
    return rows


def _via(row: Row) -> tuple[str, str, str]:
    r = row.reached
    return EdgeKind(r.via_kind).name, Confidence(r.via_confidence).name, provenance_name(r.via_provenance)


def _coverage(rows: list[Row]) -> Coverage:
    coverage = Coverage()
    for row in rows:
        coverage.count_confidence(row.reached.via_confidence)
    return coverage


def full_node(row: Row) -> dict[str, Any]:
    s = row.symbol
    kind, confidence, provenance = _via(row)
    node: dict[str, Any] = {
        "name": s.name,
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "depth": row.reached.depth,
        "repository": s.repository,
        "language": s.language,
        "file_path": s.path,
        "start_line": s.start_line,
        "end_line": s.end_line,
        "reached_from": row.reached_from.qualified_name if row.reached_from else "",
        "via_kind": kind,
        "via_confidence": confidence,
        "via_provenance": provenance,
    }
    if row.dispatch_name:
        node["dispatch_via"] = row.dispatch_name
    if s.callable:
        node["callable"] = True
    node["stable_key"] = s.key
    node["reached_from_key"] = keys.key_from_bytes(row.reached.reached_from)
    return node


def _relative_to(other: Symbol, row: Symbol) -> str:
    """``other``'s qualified name as a row of ``row``'s file group writes it: its label's name when the two
    share the file (the group names the module), else whole."""
    if other.repository == row.repository and other.path == row.path:
        return views.module_relative(other)
    return other.qualified_name


def compact_nodes(
    page: list[Row], implied_from: str | None = None, tests: list[Row] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(hoisted header, {"files": …} or {"groups": …}, plus ``tests``) whichever serializes smaller.

    ``implied_from``: a ``reached_from`` left off the rows because the header already implies it (blast radius:
    every hop-1 row is reached from the root). The repository most rows share is the page's default, and a file
    group names its ``repo`` only when it differs. ``tests``: rows in test files, listed apart as file groups
    (the header's hoisted columns hold for them too).
    """
    test_rows = tests or []
    rows = []
    for row in [*page, *test_rows]:
        s = row.symbol
        kind, confidence, _provenance = _via(row)
        reached_from = row.reached_from.qualified_name if row.reached_from else ""
        rows.append(
            {
                "repository": s.repository,
                "file_path": s.path,
                "kind": s.kind,
                "hop": row.reached.depth,
                "from": ""
                if implied_from is not None and reached_from == implied_from and row.reached.depth == 1
                else reached_from,
                # How the row's own entry writes it (hoisting and grouping compare the whole name).
                "from_in_file": _relative_to(row.reached_from, s) if row.reached_from else "",
                "dispatch_via": row.dispatch_name,
                "edge_kind": kind,
                "confidence": confidence,
                "label": views.module_label(s),
                "name": "" if views.name_is_implied(s.name, s.qualified_name) else s.name,
            }
        )
    header = views.hoist(rows, _HOISTABLE, defaults=_DEFAULTS)
    repository = views.default_repository(rows)
    if repository is not None:
        header = {"repository": repository, **header}

    def at(members: list[dict[str, Any]], skip: tuple[str, ...]) -> dict[str, list[Any]]:
        entries = [
            views.tail_entry(
                m["label"],
                {**m, "from": "" if "from" in header else m["from"] and m["from_in_file"]},
                _TAIL,
                skip,
                header,
            )
            for m in members
        ]
        return views.file_groups(members, entries, repository)

    main, apart = rows[: len(page)], rows[len(page) :]
    extra: dict[str, Any] = {"tests": at(apart, ())} if apart else {}
    flat: dict[str, Any] = {"files": at(main, ()), **extra}
    loose = tuple(c for c in _GROUP_KEY if c not in header)
    split = views.buckets(main, loose) if loose else []
    if len(split) <= 1:
        return header, flat
    groups = []
    for key, members in split:
        shared = {} if "from" in header else views.hoist(members, ("from",))
        groups.append({**key, **shared, "files": at(members, (*loose, *shared))})
    grouped = {"groups": groups, **extra}
    return header, views.smaller(flat, grouped)


def _guidance(total: int, returned: int, truncated_walk: bool, max_nodes: int) -> str | None:
    if total == 0 and not truncated_walk:
        return "the walk reached nothing within its bounds; raise depth or use find_references"
    if returned < total:
        return truncation_guidance(returned, total, NARROW_WITH)
    if truncated_walk:
        return (
            f"max_nodes {max_nodes} stopped the walk, so counts are lower bounds; raise max_nodes or "
            "narrow edge_kinds or confidence"
        )
    return None


def _at(s: Symbol) -> str:
    return f"{s.repository}:{s.path}:{s.start_line}"


# --- trace_dependencies -----------------------------------------------------------------------------------------


def trace_dependencies(gen: Generation, arguments: object) -> dict[str, Any]:
    """What the symbol (and its members) reaches, outgoing, breadth first."""
    args = Args(arguments, TraceDependencies)
    if args.raw("to") is not None:
        from server.tools.paths import trace_path

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
        from server.tools.tree import tree_answer

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
            header, body = compact_nodes(page)
            results = views.finish({**head, **header, **body})
        # What the walk could not follow: uses inside the declarations it went on from that nothing bound.
        blind = traverse.unbound_inside(gen, seeds, walked, walk_args.depth)
        results.update(
            unbound_groups(gen, blind, include_tests=True, repository=results.get("repository")).fields(
                compact=view != "full"
            )
        )
        coverage = _coverage(rows)
        coverage.unresolved_related += len(blind)
        return wrap(
            gen,
            compact=view != "full",
            total=total,
            returned=len(page),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            guidance=_guidance(total, len(page), walked.truncated, walk_args.max_nodes),
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="trace_dependencies", narrow_with=NARROW_WITH)


# --- get_blast_radius -------------------------------------------------------------------------------------------


def _unresolved_entry(u: Unresolved, *, with_file: bool, gen: Generation | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"reason": u.reason, "repository": u.repository}
    if with_file:
        entry["file_path"] = u.path
        entry["start_line"] = u.line
        holder = _holder(gen, u) if gen is not None else None
        if holder is not None:  # the declaration the unbound use is written in: the caller the walk missed
            entry["in"] = holder.qualified_name
    entry["requested_symbol"] = u.name
    entry["requested_package"] = u.package
    entry["detail"] = u.detail
    return entry


def _holder(gen: Generation, u: Unresolved) -> Symbol | None:
    """The declaration ``u`` is written in, when the indexer recorded it."""
    return gen.symbol(u.source) if u.source else None


def _compact_spot(u: Unresolved, gen: Generation | None) -> dict[str, Any]:
    """A blind spot in the compact row grammar: ``at`` is ``repo:path:line``, ``in`` the holder's label name
    (the file names its module), empty fields are absent and ``requested_symbol`` only when ``detail`` does not
    end with it."""
    entry: dict[str, Any] = {"at": f"{u.repository}:{u.path}:{u.line}", "reason": u.reason}
    holder = _holder(gen, u) if gen is not None else None
    if holder is not None:
        entry["in"] = views.module_relative(holder) if holder.path == u.path else holder.qualified_name
    if u.name and not u.detail.endswith(u.name):
        entry["requested_symbol"] = u.name
    for field_name, value in (("requested_package", u.package), ("detail", u.detail)):
        if value:
            entry[field_name] = value
    return entry


def completeness_block(
    c: traverse.Completeness, gen: Generation | None = None, *, compact: bool = False
) -> dict[str, Any]:
    """The verdict and what makes it a lower bound (a compact view writes blind spots as ``_compact_spot``)."""
    block: dict[str, Any] = {"verdict": c.verdict}
    if c.blind_spots:
        block["blind_spots"] = [
            _compact_spot(u, gen) if compact else _unresolved_entry(u, with_file=True, gen=gen) for u in c.blind_spots
        ]
    if c.more_blind_spots:
        block["more_blind_spots"] = c.more_blind_spots
    if c.invisible_scopes:
        block["invisible_scopes"] = [_unresolved_entry(u, with_file=False) for u in c.invisible_scopes]
    if c.more_invisible_scopes:
        block["more_invisible_scopes"] = c.more_invisible_scopes
    if c.candidate_edges:
        block["candidate_edges"] = c.candidate_edges
    if c.missing_analyzers:
        block["missing_analyzers"] = [
            {"repository": r, "language": lang, "reason": reason} for r, lang, reason in c.missing_analyzers
        ]
    if c.pending_consumers:
        block["pending_consumers"] = [
            {
                "repository": consumer,
                "of": provider,
                "note": f"{consumer}'s edges into {provider} are from before {provider}'s pending edit",
            }
            for consumer, provider in c.pending_consumers
        ]
    if c.dispatch_unknown:
        block["dispatch_unknown"] = c.dispatch_unknown
    if c.implements_outside:
        block["implements_outside"] = c.implements_outside
    if c.fallback is not None:
        block["fallback"] = c.fallback
    return block


def _compact_blast_head(
    root: Symbol,
    walk_args: WalkArgs,
    filters: dict[str, Any],
    rows: list[Row],
    returned: int,
    deepest: int,
    truncated: bool,
    agg: traverse.Aggregates,
) -> dict[str, Any]:
    """The compact blast-radius header: root, bounds, filters and the aggregates that say something.

    Deviations from the reference system's compact header (docs/surface.md §6.3 item 4), each keeping the facts:
    ``affected`` is left off (it always equals the envelope's ``total``), so is ``max_nodes`` at its default and
    ``deepest_depth`` on a whole page, and ``depth`` when the request spelled it; ``by_kind`` when it is the
    whole page's via kinds counted; ``by_depth`` and ``by_repository`` are left off when the page holds every affected symbol (each row states its hop and its repository, so
    they are the rows counted), and so is ``by_package``, otherwise ``{package: n}``, a package of another
    repository than the root's keyed ``repo:package``.
    """
    whole = returned == len(rows)
    head: dict[str, Any] = {"root": _at(root)}
    if not walk_args.depth_asked:  # the caller knows the depth it asked for; a default is stated
        head["depth"] = walk_args.depth
    if walk_args.max_nodes != traverse.DEFAULT_MAX_NODES:  # the default bound is the schema's
        head["max_nodes"] = walk_args.max_nodes
    head.update(filters)
    if not whole:  # on a whole page each row states its hop
        head["deepest_depth"] = deepest
    if truncated:
        head["traversal_truncated"] = True
    if agg.by_depth and not whole:
        head["by_depth"] = {str(d): n for d, n in agg.by_depth.items()}
    # by_kind counts a symbol once per different kind of edge linking it to the walk: the rows' own via
    # kinds say it only when no symbol is linked two ways
    if agg.by_kind and not (whole and dict(agg.by_kind) == dict(Counter(_via(r)[0] for r in rows))):
        head["by_kind"] = dict(agg.by_kind)
    if agg.by_repository and not whole:
        head["by_repository"] = dict(sorted(agg.by_repository.items()))
    if agg.by_package and not whole:
        head["by_package"] = {
            (pkg if repo == root.repository else f"{repo}:{pkg}"): n
            for (_lang, repo, pkg), n in sorted(agg.by_package.items())
        }
    return head


def full_aggregates(agg: traverse.Aggregates) -> dict[str, Any]:
    """A full view's counts of the affected symbols by repository, by hop and by relation kind."""
    return {
        "by_repository": [{"key": k, "count": n} for k, n in sorted(agg.by_repository.items())],
        "by_depth": [{"depth": d, "count": n} for d, n in agg.by_depth.items()],
        "by_kind": [{"key": k, "count": n} for k, n in agg.by_kind.items()],
    }


def tree_head(root: Symbol, walk_args: WalkArgs) -> dict[str, Any]:
    """What a tree view states before its tree: the root, and the depth when the request did not give it."""
    head: dict[str, Any] = {"root": _at(root)}
    if not walk_args.depth_asked:
        head["depth"] = walk_args.depth
    return head


def tests_last(gen: Generation, rows: list[Row]) -> tuple[list[Row], set[int]]:
    """The rows in paging order, those in test files last, and the ids of those."""
    roles = FileRoles(gen)
    in_tests = {id(r) for r in rows if roles.is_test(r.symbol.repository, r.symbol.path, r.symbol.language)}
    return sorted(rows, key=lambda r: (id(r) in in_tests, *Row.sort_key(r))), in_tests


def blast_row_filter(
    kinds: frozenset[str] | None,
    kinds_echo: list[str] | None,
    repo: str | None,
    language: str | None,
    include_derived: bool,
) -> Callable[[Row], bool]:
    """Whether a reached row is reported: its kind (``symbol_kinds``, else the default: no data variables or
    fields), its repository and language; filters on rows, never on the walk."""

    def kept(r: Row) -> bool:
        return (
            (
                r.symbol.kind in kinds
                if kinds is not None
                else kinds_echo is not None or traverse.listed_by_default(r.symbol)
            )
            and (include_derived or repo is not None or not is_derived(r.symbol.repository))
            and (repo is None or r.symbol.repository == repo)
            and (language is None or r.symbol.language == language)
        )

    return kept


def kind_filters(kinds_echo: list[str] | None, view: str) -> dict[str, Any]:
    """What a blast radius says of its symbol-kind filter: the kinds asked for, or (full view) those left out."""
    if kinds_echo is not None:
        return {"symbol_kinds": kinds_echo}
    if view == "full":
        return {"symbol_kinds_default_excluded": list(traverse.BLAST_DEFAULT_EXCLUDED_KINDS)}
    return {}


def get_blast_radius(gen: Generation, arguments: object) -> dict[str, Any]:
    """What a change to the symbol reaches: the incoming walk, with aggregates and a completeness verdict.

    Affected symbols in test files are a group of their own (``tests``), after the others in the paging
    order: they say which tests to run, not what else breaks.
    """
    args = Args(arguments, GetBlastRadius)
    if args.raw("changes") is not None:
        from server.tools.changes import blast_radius_of_changes

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
        from server.tools.tree import tree_answer

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
            results = _compact_blast_head(root, walk_args, filters, rows, len(page), deepest, walked.truncated, agg)
            header, body = compact_nodes(page_main, implied_from=root.qualified_name, tests=page_tests)
            results = views.finish({**results, **header, **body})
        if group:
            results["merged_with"] = merged_with(gen, group, full=view == "full")
        if walked.dispatch_through or walked.dispatch_outside:
            # Calls written against these methods may run the root (or a member reached): their callers are rows.
            results["dispatch_through"] = [
                *(s.qualified_name for s in gen.symbols_by_raw(walked.dispatch_through)),
                *walked.dispatch_outside,
            ]
        coverage = _coverage(rows)
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
            guidance=_guidance(total, len(page), walked.truncated, walk_args.max_nodes),
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="get_blast_radius", narrow_with=NARROW_WITH)
