"""``view: "tree"`` of get_blast_radius and trace_dependencies: the walk nested by hop (docs/surface.md §6.4).

Each reached symbol is spelled once, under the node the walk first reached it from (so a node's depth in the
tree is its hop); every other edge the walk's edge kinds hold between two symbols of the tree is a reference
to the node spelled elsewhere (``{"ref": id}``), so a call tree's diamonds and cycles are stated, not
repeated. A node that a row filter leaves out (a variable between a caller and the root, by default) is not
spelled: what it reached hangs under the nearest node above it that is, with its ``hop``. The tree is the
whole walk, bounded by ``max_nodes`` as the walk is (and references by the same number); it is not paged.
"""

from __future__ import annotations

from typing import Any

from server import views
from server.errors import invalid
from server.queries import traverse
from server.tools.common import wrap
from server.tools.walk import Row, WalkArgs, row_via, rows_coverage
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import Confidence, EdgeKind

_COLUMNS = ("kind", "via", "confidence")


def _at(sym: Symbol, repository: str | None) -> str:
    where = f"{sym.path}:{sym.start_line}" + (f"-{sym.end_line}" if sym.end_line > sym.start_line else "")
    return where if sym.repository == repository else f"{sym.repository}:{where}"


def tree_answer(
    gen: Generation,
    *,
    roots: list[dict[bytes, Symbol]],
    rows: list[Row],
    outgoing: bool,
    walk_args: WalkArgs,
    extra: dict[str, Any],
    cursor_given: bool,
    truncated_walk: bool,
    all_rows: list[Row] | None = None,
    completeness: dict[str, Any] | None = None,
    unresolved: int = 0,
) -> dict[str, Any]:
    """The envelope of a tree view: one tree per root (its seeds: the root first, then its counterparts or
    members), over the kept ``rows``; ``all_rows`` (default ``rows``) are every node the walk reached, for the
    parents of a node whose own parent is left out."""
    if cursor_given:
        raise invalid("view tree is one answer, not paged: repeat the question without cursor")
    kept = {r.reached.key16: r for r in rows}
    every = {r.reached.key16: r for r in (all_rows if all_rows is not None else rows)}
    seed_owner: dict[bytes, int] = {}
    for index, seeds in enumerate(roots):
        for key16 in seeds:
            seed_owner.setdefault(key16, index)

    def anchor(row: Row) -> bytes:
        """The node the row hangs under: its parent when spelled (or a seed), else the nearest one above."""
        parent = row.reached.reached_from
        hops = 0
        while parent not in kept and parent not in seed_owner and parent in every and hops < 64:
            parent = every[parent].reached.reached_from
            hops += 1
        return parent

    children: dict[bytes, list[Row]] = {}
    for row in rows:
        children.setdefault(anchor(row), []).append(row)
    spelled: list[dict[str, Any]] = []  # every node record, to hoist the columns they share
    node_of: dict[bytes, dict[str, Any]] = {}
    repository = views.default_repository([{"repository": r.symbol.repository} for r in rows])

    def node(row: Row, parent_depth: int, from_seed: Symbol | None) -> dict[str, Any]:
        kind, confidence, _provenance = row_via(row)
        n: dict[str, Any] = {"qn": row.symbol.qualified_name, "at": _at(row.symbol, repository)}
        n["kind"], n["via"], n["confidence"] = row.symbol.kind, kind, confidence
        if row.reached.depth != parent_depth + 1:
            n["hop"] = row.reached.depth
        if row.dispatch_via is not None:
            n["dispatch_via"] = row.dispatch_via.qualified_name
        if from_seed is not None:
            n["from"] = from_seed.qualified_name
        spelled.append(n)
        node_of[row.reached.key16] = n
        below = children.get(row.reached.key16, [])
        if below:
            n["children"] = [node(c, row.reached.depth, None) for c in below]
        return n

    trees: list[dict[str, Any]] = []
    for index, seeds in enumerate(roots):
        items = list(seeds.items())
        if not items:
            continue
        root_key, root = items[0]
        top: dict[str, Any] = {"qn": root.qualified_name, "at": _at(root, repository)}
        below: list[dict[str, Any]] = []
        for key16, seed in items:
            for row in children.get(key16, []):
                if seed_owner.get(key16) == index:
                    below.append(node(row, 0, seed if key16 != root_key else None))
        if below:
            top["children"] = below
        trees.append(top)
    references = _references(gen, rows, kept, node_of, outgoing, walk_args)
    header = views.hoist(spelled, _COLUMNS, defaults=_COLUMNS)
    for n in spelled:
        for column in _COLUMNS:
            if column in header and n.get(column) == header[column]:
                del n[column]
    head: dict[str, Any] = {**extra}
    if repository is not None:
        head["repository"] = repository
    head.update(header)
    if truncated_walk:
        head["traversal_truncated"] = True
    if references.left_out:
        head["more_references"] = references.left_out
    results: dict[str, Any] = {
        **head,
        ("tree" if len(trees) == 1 and "roots" not in extra else "trees"): (
            trees[0] if len(trees) == 1 and "roots" not in extra else trees
        ),
    }
    coverage = rows_coverage(rows)
    coverage.unresolved_related += unresolved
    guidance = None
    if not rows:
        guidance = "the walk reached nothing within its bounds; raise depth or use find_references"
    elif truncated_walk:
        guidance = (
            f"max_nodes {walk_args.max_nodes} stopped the walk, so the tree is a lower bound; raise max_nodes or "
            "narrow edge_kinds or confidence"
        )
    return wrap(
        gen,
        compact=True,
        total=len(rows),
        returned=len(rows),
        next_cursor=None,
        coverage=coverage,
        results=results,
        completeness=completeness,
        guidance=guidance,
    )


class _References:
    def __init__(self) -> None:
        self.left_out = 0


def _references(
    gen: Generation,
    rows: list[Row],
    kept: dict[bytes, Row],
    node_of: dict[bytes, dict[str, Any]],
    outgoing: bool,
    walk_args: WalkArgs,
) -> _References:
    """Add ``{"ref": id, "via": kind}`` to each spelled node for the edges to spelled nodes it is not the parent
    of (incoming walks: the node's other callers; outgoing: its other callees); ids go to referenced nodes."""
    out = _References()
    follow = traverse.WALK_KINDS if walk_args.kinds is None else walk_args.kinds & traverse.WALK_KINDS
    budget = walk_args.max_nodes
    confidence = int(Confidence[walk_args.confidence]) if walk_args.confidence else None
    ids: dict[bytes, int] = {}
    spelled_parents = {key: r.reached.reached_from for key, r in kept.items()}
    for row in rows:
        here = row.reached.key16
        seen: set[bytes] = set()
        refs: list[dict[str, Any]] = []
        for kind, other, _prov, conf in gen.neighbours_raw(here, outgoing=outgoing, kinds=follow):
            if confidence is not None and conf != confidence:
                continue
            if other == here or other not in kept or other in seen or spelled_parents.get(other) == here:
                continue
            seen.add(other)
            if budget <= 0:
                out.left_out += 1
                continue
            budget -= 1
            target = ids.setdefault(other, len(ids) + 1)
            refs.append({"ref": target, "via": _kind_name(kind)})
        if refs:
            node_of[here].setdefault("children", []).extend(refs)
    for key16, number in ids.items():
        node = node_of.get(key16)
        if node is not None:
            # the id first, so a reader meets it before the node's fields
            items = list(node.items())
            node.clear()
            node["id"] = number
            node.update(items)
    return out


def _kind_name(kind: int) -> str:
    try:
        return EdgeKind(kind).name
    except ValueError:
        return f"KIND_{kind}"
