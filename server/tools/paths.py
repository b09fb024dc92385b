"""trace_dependencies with ``to``: the shortest bounded confirmed paths from the subject to a target
(docs/surface.md §11.8.1).

Confirmed: by default only edges of exact confidence are followed. When no such path exists within the bounds,
the answer says which bounds and blind spots could hide one (the depth limit and the nodes it left
unexpanded, ``max_nodes``, the CANDIDATE edges not crossed, uses nothing bound inside the symbols walked,
dispatch the type checker left undecided, repositories analysed without their checker) and lists the shortest
paths over CANDIDATE edges if there are any; only a walk that ran out of edges with none of those is
``UNREACHABLE``, a checked absence.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from server.args import Args
from server.cursor import scope
from server.declarations import Selector
from server.envelope import Coverage
from server.errors import TRAVERSAL_LIMIT_REACHED, ToolError, invalid
from server.queries import counterparts, traverse
from server.queries.paths import Hop, PathSearch, shortest_paths
from server.selector import parse_selector, resolve
from server.tools.common import provenance_name, read_paging, read_view, truncation_guidance, wrap
from server.tools.unbound import unbound_groups
from server.tools.walk import DEADLINE_SECONDS, read_walk_args
from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import Confidence, EdgeKind

EXACT = frozenset(int(c) for c in Confidence if c.is_exact)
EVERY = frozenset(int(c) for c in Confidence)
CANDIDATE_PATHS_LISTED = 3
DISPATCH_CHECKS = 500  # walked members whose undecided dispatch a no-path answer looks for


def _target(gen: Generation, raw: object) -> Symbol:
    if not isinstance(raw, dict):
        raise invalid("to must be an object naming the target like the subject: name, qualified_name or stable_key")
    return resolve(gen, parse_selector(Args(raw, Selector, where="to")))


def _targets(gen: Generation, target: Symbol) -> frozenset[bytes]:
    """The target, the declarations answering as one with it, and a type's outermost members."""
    out = {keys.key_to_bytes(target.key), *(keys.key_to_bytes(s.key) for s in counterparts.counterparts(gen, target))}
    if target.kind in traverse.TYPE_DECLARATION_KINDS and target.kind not in ("module", "namespace", "package"):
        out.update(traverse.members_of(gen, target))
    return frozenset(out)


def _at(sym: Symbol) -> str:
    return f"{sym.repository}:{sym.path}:{sym.start_line}"


def _hop_names(hop: Hop) -> tuple[str, str]:
    kind = EdgeKind(hop.kind).name if hop.kind in EdgeKind._value2member_map_ else f"KIND_{hop.kind}"
    confidence = Confidence(hop.confidence).name if hop.confidence in Confidence._value2member_map_ else "?"
    return kind, confidence


def _spell(path: list[tuple[bytes, Hop | None]], symbols: dict[bytes, Symbol], *, full: bool) -> list[dict[str, Any]]:
    out = []
    for key16, hop in path:
        sym = symbols[key16]
        step: dict[str, Any] = {}
        if hop is not None:
            kind, confidence = _hop_names(hop)
            step["via"] = kind
            step["confidence"] = confidence
            if hop.dispatch:
                step["dispatch"] = True  # a call through the method it implements or overrides may run it
            if full:
                step["provenance"] = provenance_name(hop.provenance)
        step["qn"] = sym.qualified_name
        step["at"] = _at(sym) if not full else f"{sym.repository}:{sym.path}:{sym.start_line}-{sym.end_line}"
        if full:
            step.update({"stable_key": sym.key, "kind": sym.kind, "language": sym.language})
        out.append(step)
    return out


def _listed(gen: Generation, search: PathSearch, start: int, count: int, *, full: bool) -> list[list[dict[str, Any]]]:
    chosen = list(itertools.islice(search.paths(), start, start + count))
    wanted = list(dict.fromkeys(k for path in chosen for k, _h in path))
    symbols = {keys.key_to_bytes(s.key): s for s in gen.symbols_by_raw(wanted)}
    return [_spell(p, symbols, full=full) for p in chosen if all(k in symbols for k, _h in p)]


def _hoist_confidence(paths: list[list[dict[str, Any]]]) -> str | None:
    values = {step["confidence"] for path in paths for step in path if "confidence" in step}
    if len(values) != 1:
        return None
    (only,) = values
    for path in paths:
        for step in path:
            step.pop("confidence", None)
    return only


def _no_path(
    gen: Generation, search: PathSearch, confirmed: PathSearch, walk_args: Any, *, compact: bool
) -> tuple[dict[str, Any], int]:
    """Why no path was found within the bounds, from the widest search run; (block, unbound uses counted)."""
    block: dict[str, Any] = {"depth": walk_args.depth, "reached": len(search.dist) - len(search.seeds)}
    reasons = []
    if search.unexpanded:
        block["unexpanded"] = search.unexpanded  # nodes at the depth bound whose edges were not followed
        reasons.append("depth")
    if search.truncated:
        block["traversal_truncated"] = True
        reasons.append("max_nodes")
    # edges of a confidence left out: a reason when no wider search crossed them, or when one found a path
    if confirmed.skipped and (search is confirmed or search.hit):
        block["edges_not_followed"] = confirmed.skipped
        reasons.append("confidence")
    walk = search.as_walk()
    blind = traverse.unbound_inside(gen, search.seeds, walk, walk_args.depth + 1)
    block.update(unbound_groups(gen, blind, include_tests=True, repository=None).fields(compact=compact))
    if blind:
        reasons.append("unbound uses")
    members = [
        sym
        for sym in gen.symbols_by_raw([r.key16 for r in walk.reached][:DISPATCH_CHECKS])
        if sym.kind not in traverse.TYPE_DECLARATION_KINDS
    ]
    dispatch = next((why for why in (traverse.undecided_dispatch(gen, s) for s in members) if why), "")
    if dispatch:
        block["dispatch_unknown"] = dispatch
        reasons.append("dispatch")
    walked_repos = {
        (s.repository, s.language) for s in gen.symbols_by_raw([*search.seeds, *(r.key16 for r in walk.reached)])
    }
    not_exact = []
    for repository, language in sorted(walked_repos):
        repo = gen.repository(repository)
        for a in repo.analyses if repo is not None else ():
            if a.language == language and a.mode != "exact":
                not_exact.append(f"{repository} ({language}): {a.reason or a.mode}")
    if not_exact:
        block["not_exact"] = not_exact
        reasons.append("analysis without a type checker")
    unreachable = search.exhausted and not reasons
    block = {"verdict": "UNREACHABLE" if unreachable else "NOT_FOUND_WITHIN_BOUNDS", **block}
    if not unreachable:
        block["could_hide_one"] = reasons or ["depth"]
    return block, len(blind)


def trace_path(gen: Generation, args: Args) -> dict[str, Any]:
    """The shortest confirmed paths from the subject to ``to`` (module docstring)."""
    for field in ("in_repository", "in_language", "include_derived"):
        if args.raw(field) not in (None, "", False):
            raise invalid(f"{field} filters walk rows; with to the answer is paths, which it does not filter")
    selector = parse_selector(args)
    walk_args = read_walk_args(args)
    view = read_view(args, files_allowed=False)
    paging = read_paging(args, gen)
    root = resolve(gen, selector)
    target = _target(gen, args.raw("to"))
    root16 = keys.key_to_bytes(root.key)
    seeds = [root16, *traverse.members_of(gen, root)]
    targets = _targets(gen, target)
    if root.key == target.key or targets & set(seeds):
        raise invalid("to names the subject or a part of it: name another symbol")
    follow = traverse.WALK_KINDS if walk_args.kinds is None else walk_args.kinds & traverse.WALK_KINDS
    allowed = frozenset({int(Confidence[walk_args.confidence])}) if walk_args.confidence else EXACT
    deadline = time.monotonic() + DEADLINE_SECONDS

    def search_over(confidences: frozenset[int]) -> PathSearch:
        return shortest_paths(
            gen,
            seeds,
            targets,
            depth=walk_args.depth,
            max_nodes=walk_args.max_nodes,
            kinds=follow,
            confidences=confidences,
            deadline=deadline,
        )

    try:
        search = search_over(allowed)
        wider = search_over(EVERY) if not search.hit and walk_args.confidence is None else None
    except traverse.TraversalDeadline:
        raise ToolError(
            TRAVERSAL_LIMIT_REACHED,
            f"the path search did not finish within {DEADLINE_SECONDS:g} seconds; lower depth or max_nodes, or "
            "narrow edge_kinds",
        ) from None
    total = search.count() if search.hit else 0
    cursor_scope = scope(
        "trace_dependencies",
        "paths-v1",
        subject=root.key,
        target=target.key,
        depth=walk_args.depth,
        max_nodes=walk_args.max_nodes,
        edge_kinds=walk_args.kinds_identity,
        confidence=walk_args.confidence,
    )

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        full = view == "full"
        paths = _listed(gen, search, start, end - start, full=full) if total else []
        results: dict[str, Any] = {"root": _at(root), "to": _at(target)}
        if selector.qualified_name != root.qualified_name:
            results["qn"] = root.qualified_name
        results["to_qn"] = target.qualified_name
        if not walk_args.depth_asked or full:
            results["depth"] = walk_args.depth
        if full:
            results.update({"root_key": root.key, "to_key": target.key, "max_nodes": walk_args.max_nodes})
        coverage = Coverage()
        guidance = None
        if total:
            results["hops"] = search.found_at
            if not full:
                hoisted = _hoist_confidence(paths)
                if hoisted is not None:
                    results["confidence"] = hoisted
            results["paths"] = paths
            for path in paths:
                for step in path[1:]:
                    coverage.count_confidence(int(Confidence[str(step.get("confidence") or results.get("confidence"))]))
            if len(paths) < total:
                guidance = truncation_guidance(len(paths), total, "depth or edge_kinds")
        else:
            widest = wider if wider is not None else search
            block, blind = _no_path(gen, widest, search, walk_args, compact=not full)
            coverage.unresolved_related += blind
            results["paths"] = []
            results["no_path"] = block
            if wider is not None and wider.hit:
                results["candidate_paths"] = _listed(gen, wider, 0, CANDIDATE_PATHS_LISTED, full=full)
                results["candidate_hops"] = wider.found_at
                guidance = (
                    "no path of exact edges within the bounds, but candidate_paths cross CANDIDATE edges (resolved "
                    "by name, not by a type checker): confirm them before relying on them"
                )
            elif block["verdict"] == "UNREACHABLE":
                guidance = (
                    "the target is unreachable from the subject: the walk followed every edge of these kinds and "
                    "ran out, with no blind spot on the way"
                )
            else:
                guidance = (
                    "no path within the bounds; no_path.could_hide_one says what could hide one (raise depth or "
                    "max_nodes, or look at the unbound uses)"
                )
        return wrap(
            gen,
            compact=not full,
            total=total,
            returned=len(paths),
            next_cursor=next_cursor,
            coverage=coverage,
            results=results,
            guidance=guidance,
        )

    return paging.fit(gen, total, cursor_scope, answer, tool="trace_dependencies", narrow_with="depth or edge_kinds")
