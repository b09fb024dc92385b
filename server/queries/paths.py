"""Shortest paths from one symbol to another over the graph's edges (trace_dependencies ``to``).

A breadth-first walk outgoing from the subject (and its outermost members, as trace_dependencies starts),
level by level, keeping for every node each predecessor one level nearer: the shortest paths are the chains
of predecessors from a target back to a seed, counted exactly by dynamic programming and listed lazily, so
their number never costs their enumeration. The walk stops at the first level that reaches the target, or at
``depth``, ``max_nodes`` or the deadline. Besides the reference edges it crosses dispatch downward: a call
written against an interface method or a base method may run each method that implements or overrides it
(the IMPLEMENTS or OVERRIDES edge, followed backward, is that hop). Only edges of the confidences allowed are
followed; the others are counted, so an answer without a path can say what it did not cross.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from server.queries.traverse import DISPATCH_KINDS, TYPE_DECLARATION_KINDS, Reached, TraversalDeadline, Walk
from snapshot_format.reader import Generation


@dataclass(frozen=True)
class Hop:
    """The edge a path crosses into a node: kind, confidence, provenance; ``dispatch`` when it is a call through
    the method ``kind`` names that may run this one (the implementation or override edge, read backward)."""

    kind: int
    confidence: int
    provenance: int
    dispatch: bool = False


@dataclass
class PathSearch:
    seeds: list[bytes]
    targets: frozenset[bytes]
    found_at: int = 0  # hops of the shortest paths, 0 when none was found
    hit: list[bytes] = field(default_factory=list)  # targets reached at found_at, in discovery order
    dist: dict[bytes, int] = field(default_factory=dict)
    preds: dict[bytes, list[tuple[bytes, Hop]]] = field(default_factory=dict)
    truncated: bool = False  # max_nodes stopped discovery
    exhausted: bool = False  # the walk ran out of edges before depth
    unexpanded: int = 0  # nodes of the last level the depth bound left unexpanded
    skipped: int = 0  # edges not followed for their confidence
    levels: int = 0

    def count(self) -> int:
        """How many shortest paths there are (every seed-to-target chain of predecessors)."""
        memo: dict[bytes, int] = {}

        def ways(node: bytes) -> int:
            if node in memo:
                return memo[node]
            if self.dist.get(node) == 0:
                memo[node] = 1
                return 1
            memo[node] = sum(ways(p) for p, _hop in self.preds.get(node, []))
            return memo[node]

        return sum(ways(t) for t in self.hit)  # recursion as deep as the path is long

    def paths(self) -> Iterator[list[tuple[bytes, Hop | None]]]:
        """Every shortest path, seed first, each node with the hop into it (None for the seed)."""
        for target in self.hit:
            yield from self._back(target, [(target, None)])

    def _back(self, node: bytes, suffix: list[tuple[bytes, Hop | None]]) -> Iterator[list[tuple[bytes, Hop | None]]]:
        if self.dist.get(node) == 0:
            yield list(suffix)
            return
        for pred, hop in self.preds.get(node, []):
            head = suffix[0]
            suffix[0] = (head[0], hop)
            yield from self._back(pred, [(pred, None), *suffix])
            suffix[0] = head

    def as_walk(self) -> Walk:
        """The nodes reached as a traversal walk (first predecessor), for blind spots and completeness."""
        reached = []
        for node, d in self.dist.items():
            first = self.preds.get(node)
            if d > 0 and first:
                pred, hop = first[0]
                reached.append(Reached(node, d, hop.kind, hop.confidence, hop.provenance, pred))
        return Walk(reached, len(self.dist), self.truncated)


def shortest_paths(
    gen: Generation,
    seeds: list[bytes],
    targets: frozenset[bytes],
    *,
    depth: int,
    max_nodes: int,
    kinds: frozenset[int],
    confidences: frozenset[int],
    deadline: float | None = None,
) -> PathSearch:
    """The shortest paths from ``seeds`` to any of ``targets`` within ``depth`` hops (module docstring)."""
    search = PathSearch(seeds=list(dict.fromkeys(seeds)), targets=targets)
    dist = search.dist
    for seed in search.seeds:
        dist[seed] = 0
    frontier = list(search.seeds)
    steps = 0
    for level in range(1, depth + 1):
        search.levels = level
        nxt: list[bytes] = []

        def arrive(node: bytes, other: bytes, hop: Hop, level: int = level, nxt: list[bytes] = nxt) -> None:
            known = dist.get(other)
            if known is not None:
                if known == level and all(p != node for p, _h in search.preds[other]):
                    search.preds[other].append((node, hop))
                return
            if len(dist) >= max_nodes:
                search.truncated = True
                return
            dist[other] = level
            search.preds[other] = [(node, hop)]
            nxt.append(other)

        for node in frontier:
            for kind, other, prov, conf in gen.neighbours_raw(node, outgoing=True, kinds=kinds):
                steps += 1
                if deadline is not None and steps % 512 == 0 and time.monotonic() > deadline:
                    raise TraversalDeadline()
                if conf not in confidences:
                    search.skipped += 1
                    continue
                arrive(node, other, Hop(kind, conf, prov))
            sym = gen.symbol_by_raw(node)
            if sym is None or sym.kind in TYPE_DECLARATION_KINDS:
                continue
            for kind, other, prov, conf in gen.neighbours_raw(node, outgoing=False, kinds=DISPATCH_KINDS):
                steps += 1
                if conf not in confidences:
                    search.skipped += 1
                    continue
                other_sym = gen.symbol_by_raw(other)
                if other_sym is None or other_sym.kind in TYPE_DECLARATION_KINDS:
                    continue  # a type implementing an interface type is no call
                arrive(node, other, Hop(kind, conf, prov, dispatch=True))
        hit = [n for n in nxt if n in targets]
        if hit:
            search.found_at = level
            search.hit = hit
            return search
        if not nxt:
            search.exhausted = not search.truncated
            return search
        frontier = nxt
    search.unexpanded = len(frontier)
    return search
