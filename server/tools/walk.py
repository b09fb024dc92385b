"""What the walking tools share: the walk's arguments and deadline, the rows it reached and their shapes.

``traversal`` (trace_dependencies, get_blast_radius), ``changes`` (a blast radius of a change), ``paths``
(trace_dependencies ``to``), ``tree`` (the tree view) and ``hierarchy`` build their answers from these; this
module imports none of them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server import views
from server.args import Args
from server.envelope import Coverage
from server.errors import TRAVERSAL_LIMIT_REACHED, ToolError, invalid
from server.queries import traverse
from server.queries.references import REFERENCE_VOCABULARY
from server.queries.repositories import is_derived
from server.testfiles import FileRoles
from server.tools.common import provenance_name, truncation_guidance
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


def row_via(row: Row) -> tuple[str, str, str]:
    r = row.reached
    return EdgeKind(r.via_kind).name, Confidence(r.via_confidence).name, provenance_name(r.via_provenance)


def rows_coverage(rows: list[Row]) -> Coverage:
    coverage = Coverage()
    for row in rows:
        coverage.count_confidence(row.reached.via_confidence)
    return coverage


def full_node(row: Row) -> dict[str, Any]:
    s = row.symbol
    kind, confidence, provenance = row_via(row)
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
    page: list[Row],
    implied_from: str | None = None,
    tests: list[Row] | None = None,
    subject_repository: str | None = None,
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
        kind, confidence, _provenance = row_via(row)
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
    repository, named = views.page_repository(views.default_repository(rows), subject_repository)
    header = {**named, **header}

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


def walk_guidance(total: int, returned: int, truncated_walk: bool, max_nodes: int) -> str | None:
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


def compact_blast_head(
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
    if agg.by_kind and not (whole and dict(agg.by_kind) == dict(Counter(row_via(r)[0] for r in rows))):
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
