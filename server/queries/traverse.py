"""Bounded breadth-first walks: trace_dependencies (outgoing) and get_blast_radius (incoming).

The walk works on raw 16-byte keys straight from the edge sub-databases, builds
no record until a row is returned, counts each node once, and records the
first edge that reached it. Limits are declared, never hidden: ``max_nodes``
stops discovery (``truncated``), a deadline raises TraversalDeadline.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import CONTAINMENT_KINDS, REFERENCE_KINDS, Confidence, EdgeKind, Provenance

DEFAULT_DEPTH = 3
MAX_DEPTH = 5
DEFAULT_MAX_NODES = 5000
MAX_NODES = 25_000
WALK_KINDS: frozenset[int] = frozenset(int(k) for k in REFERENCE_KINDS - CONTAINMENT_KINDS)
BLAST_DEFAULT_EXCLUDED_KINDS = ("field", "variable")
COMPLETENESS_LIST_CAP = 20


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


@dataclass
class Walk:
    reached: list[Reached]
    visited: int  # nodes counted against max_nodes, seeds included
    truncated: bool
    # Distinct relation kinds through which each reached node touches the visited set.
    relation_kinds: dict[bytes, set[int]] = field(default_factory=dict)
    candidate_edges: int = 0


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
) -> Walk:
    """BFS from ``seeds`` (depth 0, never rows) up to ``depth`` hops and ``max_nodes`` visited nodes."""
    follow = WALK_KINDS if kinds is None else kinds & WALK_KINDS
    visited: set[bytes] = set(seeds)
    reached: list[Reached] = []
    relations: dict[bytes, set[int]] = collections.defaultdict(set)
    frontier = list(dict.fromkeys(seeds))
    truncated = False
    candidates = 0
    steps = 0
    for level in range(1, depth + 1):
        if deadline is not None and time.monotonic() > deadline:
            raise TraversalDeadline()
        nxt: list[bytes] = []
        for node in frontier:
            for kind, other, prov, conf in gen.neighbours_raw(node, outgoing=outgoing, kinds=follow):
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
                reached.append(Reached(other, level, kind, conf, prov, node))
                nxt.append(other)
        if not nxt:
            break
        frontier = nxt
    return Walk(reached, len(visited), truncated, dict(relations), candidates)


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

    @property
    def unresolved_count(self) -> int:
        """Blind spots plus invisible scopes, the lists' remainders included."""
        return len(self.blind_spots) + self.more_blind_spots + len(self.invisible_scopes) + self.more_invisible_scopes


def scope_directory(detail: str) -> str:
    """The directory a scope failure names: the text after the last " in " of its detail, if any."""
    at = detail.rfind(" in ")
    return detail[at + 4 :].strip() if at >= 0 else ""


def completeness(gen: Generation, root: Symbol, walk_result: Walk) -> Completeness:
    """COMPLETE only when no recorded failure could touch the root; otherwise the blind spots and a grep.

    Blind spots are failed references naming the root's unqualified name; invisible scopes are failures
    that name no file (a package or module that could not be read) in the root's repository. CANDIDATE
    edges on the walk and repositories whose analyzer was missing also make the answer a lower bound.
    """
    spots = sorted(gen.unresolved_by_name(root.name), key=lambda u: (u.repository, u.path, u.line, u.col, u.reason))
    scopes = sorted((u for u in gen.unresolved_scopes(root.repository) if not u.path),
                    key=lambda u: (u.package, u.reason, u.detail))
    missing = [
        (repo.name, a.language, a.reason)
        for repo in gen.repositories()
        for a in repo.analyses
        if a.mode == "failed" and a.language == root.language
    ]
    lower = bool(spots or scopes or walk_result.candidate_edges or missing)
    fallback = None
    if lower:
        roots = {r.name: r.root for r in gen.repositories()}
        paths = dict.fromkeys(sorted({_on_disk(roots, u.repository, u.path) for u in spots if u.path}))
        for u in scopes:
            directory = scope_directory(u.detail)
            if directory:
                paths.setdefault(directory if directory.startswith("/") else _on_disk(roots, u.repository, directory),
                                 None)
        for repo_name, _language, _reason in missing:
            if roots.get(repo_name):
                paths.setdefault(roots[repo_name], None)
        if not paths:
            paths[_on_disk(roots, root.repository, "")] = None
        fallback = {"pattern": rf"\b{_escape(root.name)}\b", "paths": list(paths)}
    return Completeness(
        verdict="LOWER_BOUND" if lower else "COMPLETE",
        blind_spots=spots[:COMPLETENESS_LIST_CAP],
        more_blind_spots=max(len(spots) - COMPLETENESS_LIST_CAP, 0),
        invisible_scopes=scopes[:COMPLETENESS_LIST_CAP],
        more_invisible_scopes=max(len(scopes) - COMPLETENESS_LIST_CAP, 0),
        candidate_edges=walk_result.candidate_edges,
        missing_analyzers=missing,
        fallback=fallback,
    )


def _on_disk(roots: dict[str, str], repository: str, path: str) -> str:
    """A path the agent can grep: under the repository's registered root when it is known."""
    root = roots.get(repository, "")
    if not root:
        return path or "."
    return f"{root.rstrip('/')}/{path}" if path else root


def _escape(name: str) -> str:
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


def describe(reached: Reached) -> tuple[str, str, str]:
    """Names of the via edge's kind, confidence and provenance."""
    return (
        EdgeKind(reached.via_kind).name,
        Confidence(reached.via_confidence).name,
        Provenance(reached.via_provenance).name,
    )
