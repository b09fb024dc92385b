"""Bounded breadth-first walks: trace_dependencies (outgoing) and get_blast_radius (incoming).

The walk works on raw 16-byte keys straight from the edge sub-databases, builds
no record until a row is returned, counts each node once, and records the
first edge that reached it. Limits are declared, never hidden: ``max_nodes``
stops discovery (``truncated``), a deadline raises TraversalDeadline.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from server.pending import waiting_consumers
from snapshot_format import keys, languages
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import (
    CONTAINMENT_KINDS,
    DECLARATION_ROWS,
    DISPATCH_UNDECIDED,
    EXTERNAL_CONVERSION,
    EXTERNAL_IMPLEMENTS,
    EXTERNAL_INTERFACE_CALL,
    EXTERNAL_RELATIONS,
    EXTERNAL_USES,
    REFERENCE_KINDS,
    Confidence,
    EdgeKind,
    Provenance,
    outside_name,
)

DEFAULT_DEPTH = 3
MAX_DEPTH = 5
DEFAULT_MAX_NODES = 5000
MAX_NODES = 25_000
WALK_KINDS: frozenset[int] = frozenset(int(k) for k in REFERENCE_KINDS - CONTAINMENT_KINDS)
BLAST_DEFAULT_EXCLUDED_KINDS = ("field", "variable")
_EXCLUDED = frozenset(BLAST_DEFAULT_EXCLUDED_KINDS)
COMPLETENESS_LIST_CAP = 20
# A method that implements or overrides another is reached by the calls written against that other one.
DISPATCH_KINDS: frozenset[int] = frozenset({EdgeKind.IMPLEMENTS, EdgeKind.OVERRIDES})
# Type relations: a sibling implementation or a subclass is no caller, so a dispatch bridge never follows them.
TYPE_RELATION_KINDS: frozenset[int] = frozenset(
    {EdgeKind.IMPLEMENTS, EdgeKind.OVERRIDES, EdgeKind.EXTENDS, EdgeKind.EMBEDS}
)
# Declarations whose IMPLEMENTS edges are type-level (a struct satisfies an interface): no dispatch through them.
TYPE_DECLARATION_KINDS: frozenset[str] = frozenset(
    {
        "class",
        "interface",
        "struct",
        "type",
        "type_alias",
        "enum",
        "trait",
        "union",
        "mixin",
        "extension",
        "extension_type",
        "namespace",
        "module",
        "package",
    }
)


def listed_by_default(sym: Symbol) -> bool:
    """Whether get_blast_radius lists a reached symbol without ``symbol_kinds``: any kind but a data variable or
    field; a variable holding a function, a class or another callable is listed (docs/surface.md §11.9)."""
    return sym.kind not in _EXCLUDED or sym.callable


class TraversalDeadline(Exception):
    """The caller's deadline passed before the walk finished."""


@dataclass(frozen=True)
class Reached:
    key16: bytes
    depth: int
    via_kind: int
    via_confidence: int
    via_provenance: int
    reached_from: bytes
    # The method a call was written against when the node was reached by dispatch (b"" for a direct edge).
    dispatch_via: bytes = b""
    # The same for a method of an interface outside the graph, as answers name it (``io.Writer.Write``).
    dispatch_outside: str = ""


@dataclass
class Walk:
    reached: list[Reached]
    visited: int  # nodes counted against max_nodes, seeds included
    truncated: bool
    # Distinct relation kinds through which each reached node touches the visited set.
    relation_kinds: dict[bytes, set[int]] = field(default_factory=dict)
    candidate_edges: int = 0
    # Methods whose callers were bridged in (dispatch), in the order first used.
    dispatch_through: list[bytes] = field(default_factory=list)
    # Interface methods outside the graph whose callers were bridged in, as answers name them.
    dispatch_outside: list[str] = field(default_factory=list)


def dispatch_targets(gen: Generation, key16: bytes) -> list[bytes]:
    """The methods ``key16`` implements or overrides, transitively upward (nearest first).

    A call written against any of them may run ``key16``. Type-level IMPLEMENTS edges (a struct that
    satisfies an interface) bridge nothing: only members dispatch.
    """
    first = [other for _k, other, _p, _c in gen.neighbours_raw(key16, outgoing=True, kinds=DISPATCH_KINDS)]
    if not first:
        return []
    sym = gen.symbol_by_raw(key16)
    if sym is None or sym.kind in TYPE_DECLARATION_KINDS:
        return []
    seen = {key16}
    out: list[bytes] = []
    queue = collections.deque(first)
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        out.append(node)
        queue.extend(o for _k, o, _p, _c in gen.neighbours_raw(node, outgoing=True, kinds=DISPATCH_KINDS))
    return out


# The edge a use written against an interface method outside the graph stands for (the rows are Go's).
_OUTSIDE_EDGES = {EXTERNAL_INTERFACE_CALL: (int(EdgeKind.CALLS_DIRECT), int(Provenance.GO_AST_CALL))}
_OUTSIDE_VALUE_EDGE = (int(EdgeKind.REFERENCES), int(Provenance.GO_TYPES_USE))


def outside_implemented(gen: Generation, sym: Symbol) -> list[Unresolved]:
    """The interface methods outside the graph that a method implements (``EXTERNAL_IMPLEMENTS`` rows on it).

    No declaration of the graph stands for them (the standard library's ``io.Writer``, a module nobody
    registered), so the relation is a row on the implementing method, at its declaration, naming the
    interface method by package and qualified name.
    """
    if sym.kind in TYPE_DECLARATION_KINDS or not sym.container:
        return []
    return [
        u
        for u in gen.unresolved_on_lines(sym.repository, sym.path, sym.start_line, sym.end_line)
        if u.reason == EXTERNAL_IMPLEMENTS and u.source == sym.key
    ]


def outside_uses(gen: Generation, relation: Unresolved) -> list[Unresolved]:
    """The uses written against the interface method outside the graph that ``relation`` names, anywhere."""
    return [
        u
        for u in gen.unresolved_by_name(relation.name)
        if u.reason in EXTERNAL_USES and u.package == relation.package and u.source and _family(u) == _family(relation)
    ]


def outside_edge(u: Unresolved) -> tuple[int, int]:
    """(edge kind, provenance) of a use written against an interface method outside the graph."""
    return _OUTSIDE_EDGES.get(u.reason, _OUTSIDE_VALUE_EDGE)


class OutsideDispatch:
    """Dispatch through interface methods outside the graph, for one walk: the callers written against a method
    that a reached node implements reach the node, as IMPLEMENTS edges bridge in-graph interfaces."""

    def __init__(self, gen: Generation) -> None:
        self.gen = gen
        self.enabled = any(e.key == EXTERNAL_IMPLEMENTS and e.count for e in gen.breakdown().unresolved_by_reason)

    def implemented(self, node: bytes) -> list[Unresolved]:
        """The interface methods outside the graph the node implements (``outside_implemented``)."""
        if not self.enabled:
            return []
        sym = self.gen.symbol_by_raw(node)
        return outside_implemented(self.gen, sym) if sym is not None else []

    def users(self, relation: Unresolved) -> list[tuple[int, bytes, int, int]]:
        """The uses written against the interface method ``relation`` names, as edges (kind, source, provenance,
        confidence) into the method that implements it."""
        out = []
        for u in outside_uses(self.gen, relation):
            kind, provenance = outside_edge(u)
            out.append((kind, keys.key_to_bytes(u.source), provenance, int(Confidence.EXACT_TYPECHECKED)))
        return out


# A module reached only because it imports (or exports) a name: its own importers import the module, not that
# name (a use of the name through the module binds to the name itself), so an incoming walk stops there.
_IMPORT_ONLY = frozenset({int(EdgeKind.IMPORTS_SYMBOL), int(EdgeKind.EXPORTS)})
_MODULE_KINDS = frozenset({"module", "namespace", "package", "file"})


def _import_leaf(gen: Generation, node: bytes, relations: set[int]) -> bool:
    if not relations <= _IMPORT_ONLY:
        return False
    sym = gen.symbol_by_raw(node)
    return sym is not None and sym.kind in _MODULE_KINDS


def walk(
    gen: Generation,
    seeds: list[bytes],
    *,
    outgoing: bool,
    depth: int = DEFAULT_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
    kinds: frozenset[int] | None = None,
    confidence: int | None = None,
    deadline: float | None = None,
    dispatch: bool = True,
) -> Walk:
    """BFS from ``seeds`` (depth 0, never rows) up to ``depth`` hops and ``max_nodes`` visited nodes.

    Incoming walks also cross dispatch (``dispatch``): the users of a method that a node implements or
    overrides reach the node too, one hop on, with ``dispatch_via`` naming the method they wrote against. A
    module reached only through its imports is a row but not walked on (``_import_leaf``).
    """
    follow = WALK_KINDS if kinds is None else kinds & WALK_KINDS
    # Past the seeds, an override or implementation of a reached node does not use it: only uses propagate.
    # (A subclass still propagates through EXTENDS: it inherits the members it does not override.)
    onward = frozenset(follow - DISPATCH_KINDS) if not outgoing else follow
    bridge_kinds = frozenset(follow - TYPE_RELATION_KINDS)
    visited: set[bytes] = set(seeds)
    reached: list[Reached] = []
    relations: dict[bytes, set[int]] = collections.defaultdict(set)
    frontier = list(dict.fromkeys(seeds))
    bridged: set[bytes] = set()
    through: list[bytes] = []
    outside = OutsideDispatch(gen) if not outgoing and dispatch and bridge_kinds else None
    bridged_outside: set[str] = set()
    through_outside: list[str] = []
    truncated = False
    candidates = 0
    steps = 0

    def visit(
        level: int,
        node: bytes,
        edges: Iterable[tuple[int, bytes, int, int]],
        via: bytes,
        nxt: list[bytes],
        via_outside: str = "",
    ) -> bool:
        """Record the unvisited ends of ``edges``; True when any of them was new."""
        nonlocal truncated, candidates, steps
        used = False
        for kind, other, prov, conf in edges:
            steps += 1
            if deadline is not None and steps % 512 == 0 and time.monotonic() > deadline:
                raise TraversalDeadline()
            if confidence is not None and conf != confidence:
                continue
            if other in visited:
                if other in relations:
                    relations[other].add(kind)
                continue
            if len(visited) >= max_nodes:
                truncated = True
                continue
            visited.add(other)
            relations[other].add(kind)
            if conf == Confidence.CANDIDATE:
                candidates += 1
            reached.append(Reached(other, level, kind, conf, prov, node, via, via_outside))
            nxt.append(other)
            used = True
        return used

    for level in range(1, depth + 1):
        if deadline is not None and time.monotonic() > deadline:
            raise TraversalDeadline()
        nxt: list[bytes] = []
        for node in frontier:
            visit(
                level,
                node,
                gen.neighbours_raw(node, outgoing=outgoing, kinds=follow if level == 1 else onward),
                b"",
                nxt,
            )
            if outgoing or not dispatch or not bridge_kinds:
                continue
            for target in dispatch_targets(gen, node):
                if target in bridged or target in visited:  # a visited method's users are walked directly
                    continue
                bridged.add(target)
                if visit(level, node, gen.neighbours_raw(target, outgoing=False, kinds=bridge_kinds), target, nxt):
                    through.append(target)
            if outside is None:
                continue
            for relation in outside.implemented(node):
                name = outside_name(relation.package, relation.name)
                if name in bridged_outside:
                    continue
                bridged_outside.add(name)
                users = [e for e in outside.users(relation) if e[0] in bridge_kinds and e[1] != node]
                if visit(level, node, users, b"", nxt, name):
                    through_outside.append(name)
        if not outgoing:
            nxt = [n for n in nxt if not _import_leaf(gen, n, relations[n])]
        if not nxt:
            break
        frontier = nxt
    return Walk(reached, len(visited), truncated, dict(relations), candidates, through, through_outside)


def members_of(gen: Generation, root: Symbol) -> list[bytes]:
    """The outermost members of the root: declarations it contains, and methods declared outside it (METHOD_OF)."""
    out: dict[bytes, None] = {}
    for sym in gen.declarations(root.repository, root.path):
        if sym.key != root.key and sym.container == root.key:
            out[keys.key_to_bytes(sym.key)] = None
    for edge in gen.edges_in(root.key, (EdgeKind.METHOD_OF,)):
        out[keys.key_to_bytes(edge.source)] = None
    out.pop(keys.key_to_bytes(root.key), None)
    return list(out)


@dataclass
class Completeness:
    verdict: str  # COMPLETE | LOWER_BOUND
    blind_spots: list[Unresolved]
    more_blind_spots: int
    invisible_scopes: list[Unresolved]
    more_invisible_scopes: int
    candidate_edges: int
    missing_analyzers: list[tuple[str, str, str]]  # (repository, language, reason)
    fallback: dict[str, object] | None
    # Why callers through a base class or an interface could not be decided ("" when they could).
    dispatch_unknown: str = ""
    # The interface methods outside the graph the root implements (``io.Writer.Write``): code there may call it.
    implements_outside: list[str] = field(default_factory=list)
    # (consumer, provider): a repository whose edges into a repository of the walk are from before that one's
    # pending edit (server.pending.waiting_consumers).
    pending_consumers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def unresolved_count(self) -> int:
        """Blind spots plus invisible scopes, the lists' remainders included."""
        return len(self.blind_spots) + self.more_blind_spots + len(self.invisible_scopes) + self.more_invisible_scopes


def scope_directory(detail: str) -> str:
    """The directory a scope failure names: the text after the last " in " of its detail, if any."""
    at = detail.rfind(" in ")
    return detail[at + 4 :].strip() if at >= 0 else ""


def expanded(gen: Generation, root: Symbol, walk_result: Walk, depth: int, also: Iterable[Symbol] = ()) -> list[Symbol]:
    """The symbols whose users the walk looked for: the root (and ``also``, the other seeds) and every node
    reached before the last hop.

    A reference that failed to bind and names one of them is a user the walk could not see; nodes on the
    last hop are the depth limit, not a blind spot (their users are outside the question).
    """
    out = [root, *also]
    for r in walk_result.reached:
        if r.depth < depth:
            sym = gen.symbol_by_raw(r.key16)
            if sym is not None and sym.kind not in _MODULE_KINDS:
                out.append(sym)
    return out


def unbound_inside(gen: Generation, seeds: list[bytes], walk_result: Walk, depth: int) -> list[Unresolved]:
    """The uses no analyzer could bind inside the declarations an outgoing walk went on from (the seeds and every
    node before the last hop): each may reach something the walk could not see."""
    nodes = [*seeds, *(r.key16 for r in walk_result.reached if r.depth < depth)]
    by_file: dict[tuple[str, str], set[str]] = {}
    for sym in gen.symbols_by_raw(list(dict.fromkeys(nodes))):
        by_file.setdefault((sym.repository, sym.path), set()).add(sym.key)
    return [
        u
        for (repository, path), holders in sorted(by_file.items())
        for u in failures_only(gen.unresolved_in(repository, path))
        if u.path == path and u.source in holders
    ]


def completeness(
    gen: Generation, root: Symbol, walk_result: Walk, depth: int = 1, *, also: Iterable[Symbol] = ()
) -> Completeness:
    """COMPLETE only when no recorded failure could touch the walk; otherwise the blind spots and a grep.

    Blind spots are failed references naming the root, or any symbol the walk went on from (``depth`` is the
    walk's hop limit: a blast radius of two hops is blind where a caller of a hop-one caller failed to bind);
    invisible scopes are failures that name no file (a package or module that could not be read) in the
    root's repository. CANDIDATE edges on the walk and repositories whose analyzer was missing also make the
    answer a lower bound. ``also``: the walk's other seeds (declarations answering as one with the root).
    """
    nodes = expanded(gen, root, walk_result, depth, also)
    found: dict[tuple[str, str, int, int, str, str], Unresolved] = {}
    blind_names = [root.name]  # the names a grep for what the graph could not see looks for
    index = BlindIndex(gen)
    taken: set[tuple[str, str]] = set()  # (name, family) whose shared rows are in ``found`` already
    for sym in nodes:
        shared, own = index.rows(sym)
        named = (sym.name, family(sym.language))
        rows = [*own, *index.conversions(sym)]
        if named not in taken:
            taken.add(named)
            rows = [*shared, *rows]
        elif shared:
            blind_names.append(sym.name)
        for u in rows:
            found.setdefault((u.repository, u.path, u.line, u.col, u.reason, u.name), u)
            blind_names.append(sym.name)
    spots = [found[k] for k in sorted(found)]
    scopes = sorted(
        (u for u in gen.unresolved_scopes(root.repository) if not u.path), key=lambda u: (u.package, u.reason, u.detail)
    )
    missing = [
        (repo.name, a.language, a.reason)
        for repo in gen.repositories()
        for a in repo.analyses
        if a.mode == "failed" and a.language == root.language
    ]
    dispatch_unknown = next((why for why in (undecided_dispatch(gen, sym) for sym in nodes) if why), "")
    waiting = waiting_consumers(gen)
    touched = {sym.repository for sym in nodes}
    pending_consumers = sorted((c, p) for p in touched if p in waiting for c in waiting[p])
    lower = bool(spots or scopes or walk_result.candidate_edges or missing or dispatch_unknown or pending_consumers)
    fallback = None
    if lower:
        roots = {r.name: r.root for r in gen.repositories()}
        files = {(u.repository, u.path) for u in spots if u.path}
        paths = dict.fromkeys(sorted({on_disk(roots, repository, path) for repository, path in files}))
        for u in scopes:
            directory = scope_directory(u.detail)
            if directory:
                paths.setdefault(
                    directory if directory.startswith("/") else on_disk(roots, u.repository, directory), None
                )
        for repo_name, _language, _reason in missing:
            if roots.get(repo_name):
                paths.setdefault(roots[repo_name], None)
        if not paths:
            paths[on_disk(roots, root.repository, "")] = None
        fallback = bounded_fallback([escape_pattern(n) for n in blind_names], list(paths), roots.values())
    return Completeness(
        verdict="LOWER_BOUND" if lower else "COMPLETE",
        blind_spots=spots[:COMPLETENESS_LIST_CAP],
        more_blind_spots=max(len(spots) - COMPLETENESS_LIST_CAP, 0),
        invisible_scopes=scopes[:COMPLETENESS_LIST_CAP],
        more_invisible_scopes=max(len(scopes) - COMPLETENESS_LIST_CAP, 0),
        candidate_edges=walk_result.candidate_edges,
        missing_analyzers=missing,
        fallback=fallback,
        dispatch_unknown=dispatch_unknown,
        implements_outside=outside_names(gen, root),
        pending_consumers=pending_consumers,
    )


def bounded_fallback(
    names: Iterable[str], paths: Iterable[str], floors: Iterable[str], more: int = 0
) -> dict[str, Any]:
    """The fallback grep, bounded: at most ``COMPLETENESS_LIST_CAP`` names (the first ones: the root's, then the
    walk's in order; ``more_names`` counts the others, and ``more`` already left out, which the grep then does not
    look for) and at most as many
    paths, files lifted to their directories, the deepest first and never above a ``floor`` (a repository's
    root), until they are few enough; the lifted paths still hold every file (names are regex-escaped)."""
    unique = list(dict.fromkeys(n for n in names if n))
    shown = unique[:COMPLETENESS_LIST_CAP]
    pattern = shown[0] if len(shown) == 1 else "(" + "|".join(shown) + ")"
    out: dict[str, Any] = {"pattern": rf"\b{pattern}\b", "paths": coarse_paths(paths, floors, COMPLETENESS_LIST_CAP)}
    if len(unique) - len(shown) + more:
        out["more_names"] = len(unique) - len(shown) + more
    return out


def coarse_paths(paths: Iterable[str], floors: Iterable[str], cap: int) -> list[str]:
    """At most ``cap`` grep paths covering ``paths`` where lifting allows: the deepest lifted to their directory
    first, never above a floor (with no floor known, never to the empty path); nested ones dropped."""
    bottoms = {f.rstrip("/") for f in floors if f}

    def parent(path: str) -> str | None:
        up = path.rstrip("/").rpartition("/")[0]
        if not up:
            return None
        if bottoms and not any(up == f or up.startswith(f + "/") for f in bottoms):
            return None
        return up

    current = list(dict.fromkeys(paths))
    while len(current) > cap:
        liftable = [p.count("/") for p in current if parent(p) is not None]
        if not liftable:
            break
        deepest = max(liftable)
        lifted = list(dict.fromkeys((parent(p) or p) if p.count("/") == deepest else p for p in current))
        held = set(lifted)
        current = [p for p in lifted if not any(a in held for a in _ancestors(p))]
    return current


def _ancestors(path: str) -> Iterator[str]:
    head = path.rstrip("/")
    while "/" in head:
        head = head.rpartition("/")[0]
        if head:
            yield head


def outside_names(gen: Generation, sym: Symbol) -> list[str]:
    """The interface methods outside the graph ``sym`` implements, as answers name them, sorted."""
    return sorted({outside_name(u.package, u.name) for u in outside_implemented(gen, sym)})


def family(language: str) -> str:
    """The language family whose code can call each other's declarations (JavaScript's is TypeScript)."""
    return languages.family(language)


def could_reach(u: Unresolved, root: Symbol) -> bool:
    """Whether an unresolved reference could name ``root``: same language family (or no language recorded)."""
    return not u.language or languages.family(u.language) == languages.family(root.language)


def _family(u: Unresolved) -> str:
    return languages.family(u.language)


def blind_to(gen: Generation, sym: Symbol) -> list[Unresolved]:
    """The unresolved references that may be uses of ``sym`` the graph could not bind: those naming it in its
    language family (relations to what is outside the graph are not failures), and the places its type is
    converted to an interface outside the graph, whose code may then call it (``EXTERNAL_CONVERSION``), and the
    calls its language makes without naming it (an ``IMPLICIT_CALL`` row on the declaration itself)."""
    index = BlindIndex(gen)
    shared, own = index.rows(sym)
    return [*shared, *own, *index.conversions(sym)]


class BlindIndex:
    """``blind_to`` for the many declarations of one walk: the rows of a name are read and sorted once.

    A walk reaches many declarations of one name (``get``, ``run``, every override of a method), and the rows
    naming it can be hundreds; read per declaration, a deep blast radius scanned them millions of times.
    ``rows(sym)`` is (the rows any declaration of that name and language family may be blind to, those that
    speak of ``sym`` alone: the declaration rows whose source it is).
    """

    def __init__(self, gen: Generation) -> None:
        self.gen = gen
        self._named: dict[tuple[str, str], tuple[list[Unresolved], dict[str, list[Unresolved]]]] = {}

    def rows(self, sym: Symbol) -> tuple[list[Unresolved], list[Unresolved]]:
        fam = family(sym.language)
        got = self._named.get((sym.name, fam))
        if got is None:
            shared: list[Unresolved] = []
            by_source: dict[str, list[Unresolved]] = {}
            families: dict[str, str] = {}
            for u in self.gen.unresolved_by_name(sym.name):
                if u.reason in EXTERNAL_RELATIONS:
                    continue
                if (
                    u.language
                    and (families.get(u.language) or families.setdefault(u.language, family(u.language))) != fam
                ):
                    continue
                if u.reason in DECLARATION_ROWS:
                    by_source.setdefault(u.source, []).append(u)
                else:
                    shared.append(u)
            got = self._named[(sym.name, fam)] = (shared, by_source)
        return got[0], got[1].get(sym.key, [])

    def conversions(self, sym: Symbol) -> list[Unresolved]:
        """The places ``sym``'s type is converted to an interface outside the graph (``EXTERNAL_CONVERSION``):
        only a structurally typed language converts a value to an interface its type never names."""
        if sym.kind in TYPE_DECLARATION_KINDS or sym.qualified_name == sym.name or not _structural(sym.language):
            return []
        return [
            u
            for u in self.gen.unresolved_by_name(sym.qualified_name)
            if u.reason == EXTERNAL_CONVERSION and u.package == sym.package and could_reach(u, sym)
        ]


def failures_only(rows: Iterable[Unresolved]) -> list[Unresolved]:
    """Rows that are failures to bind: relations to what is outside the graph, and the conversions that hand a
    value to it, left out (they say nothing about what a declaration's own uses reach)."""
    return [
        u
        for u in rows
        if u.reason not in EXTERNAL_RELATIONS and u.reason != EXTERNAL_CONVERSION and u.reason not in DECLARATION_ROWS
    ]


def _structural(language_id: str) -> bool:
    """Whether the language's types implement an interface without naming it: without the type checker no
    implementation of an interface is known at all, so an answer about a type is never complete there."""
    row = languages.language(language_id)
    return row is not None and row.structural_typing


def undecided_dispatch(gen: Generation, root: Symbol) -> str:
    """Why calls through a base or an interface may reach ``root`` unseen; "" when the type checker decided it.

    Only a type checker records which method implements or overrides which; without it a member's callers
    through its base types are invisible, so the answer cannot be complete. In a structurally typed language
    the same holds for a type: which types implement an interface is known only to the checker. A relation
    the checker itself left undecided (a generic type and interface) is reported the same way.
    """
    if root.kind in TYPE_DECLARATION_KINDS:
        if not _structural(root.language) or root.kind in _MODULE_KINDS:
            return ""
        analysis = _without_checker(gen, root)
        if analysis:
            return (
                f"{root.repository} ({root.language}) was analysed without its type checker ({analysis}), so the "
                f"types that implement {root.qualified_name}, or the interfaces it implements, are not known"
            )
        return ""
    if not root.container:
        return ""
    container = gen.symbol(root.container)
    if container is None or container.kind in ("module", "namespace", "package"):
        return ""  # a top-level declaration: nothing dispatches to it
    analysis = _without_checker(gen, root)
    if analysis:
        return (
            f"{root.repository} ({root.language}) was analysed without its type checker "
            f"({analysis}), so calls through a base class or an interface that "
            f"may run {root.qualified_name} are not known"
        )
    undecided = undecided_relations(gen, root)
    if undecided:
        u = undecided[0]
        more = f" (and {len(undecided) - 1} more such relation(s))" if len(undecided) > 1 else ""
        if u.source == root.key:
            return f"{u.detail}{more}, so calls through that interface may run {root.qualified_name} or not"
        return f"{u.detail}{more}, so {root.qualified_name} may have implementations the graph does not list"
    return ""


def _without_checker(gen: Generation, root: Symbol) -> str:
    """The reason (or mode) of the root's language analysis in its repository when it was not exact, else ""."""
    repo = gen.repository(root.repository)
    for analysis in repo.analyses if repo is not None else ():
        if analysis.language == root.language and analysis.mode != "exact":
            return analysis.reason or analysis.mode
    return ""


def undecided_relations(gen: Generation, sym: Symbol) -> list[Unresolved]:
    """The type relations the type checker left undecided on ``sym``: as the implementing side (rows recorded
    on it) or as the interface side (rows naming its qualified name in its package)."""
    found = [
        u
        for u in gen.unresolved_in(sym.repository, sym.path)
        if u.reason == DISPATCH_UNDECIDED and u.path == sym.path and u.source == sym.key
    ]
    found += [
        u
        for u in gen.unresolved_by_name(sym.qualified_name)
        if u.reason == DISPATCH_UNDECIDED and u.package == sym.package and could_reach(u, sym)
    ]
    return sorted(found, key=lambda u: (u.repository, u.path, u.line, u.col, u.name))


def on_disk(roots: dict[str, str], repository: str, path: str) -> str:
    """A path the agent can grep: under the repository's registered root when it is known."""
    root = roots.get(repository, "")
    if not root:
        return path or "."
    return f"{root.rstrip('/')}/{path}" if path else root


def escape_pattern(name: str) -> str:
    """``name`` with the characters a regular expression reads as syntax escaped."""
    return "".join("\\" + ch if ch in r".^$*+?{}[]\|()" else ch for ch in name)


@dataclass
class Aggregates:
    by_repository: dict[str, int]
    by_package: dict[tuple[str, str, str], int]  # (language, repository, package) -> count
    by_depth: dict[int, int]
    by_kind: dict[str, int]


def aggregate(rows: list[tuple[Reached, Symbol]], relations: dict[bytes, set[int]]) -> Aggregates:
    """Counts over the whole walk (never paged); by_kind counts each row once per distinct relation kind."""
    by_repo: collections.Counter[str] = collections.Counter()
    by_pkg: collections.Counter[tuple[str, str, str]] = collections.Counter()
    by_depth: collections.Counter[int] = collections.Counter()
    by_kind: collections.Counter[str] = collections.Counter()
    for reached, sym in rows:
        by_repo[sym.repository] += 1
        by_pkg[(sym.language, sym.repository, sym.package)] += 1
        by_depth[reached.depth] += 1
        for kind in relations.get(reached.key16, {reached.via_kind}):
            by_kind[EdgeKind(kind).name] += 1
    return Aggregates(dict(by_repo), dict(by_pkg), dict(sorted(by_depth.items())), dict(sorted(by_kind.items())))
