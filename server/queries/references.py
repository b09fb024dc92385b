"""find_references: one hop of edges into (incoming) or out of (outgoing) a symbol.

Rows are the other end of each edge. The dispatch bridge adds, for an incoming
query on a method that implements an interface method or overrides a base
method (transitively upward), the uses written against that method, marked
``via``: a call through the interface may run the subject. The reference
system bridges only a sole implementation, and so answered "nothing
references this" for a method with a sibling implementation
(docs/surface.md §12).

Incoming, a stub and the implementation it stands for answer as one symbol
(``server/queries/counterparts.py``): the uses bound to a counterpart are rows
too, marked ``bound_to`` with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.envelope import Coverage
from server.queries import counterparts, traverse
from server.queries.repositories import is_derived
from snapshot_format.keys import key_to_bytes
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol, Unresolved
from snapshot_format.vocab import Confidence, EdgeKind, outside_name

REFERENCE_VOCABULARY: tuple[str, ...] = (
    "IMPORTS_SYMBOL",
    "EXPORTS",
    "REEXPORTS",
    "REFERENCES",
    "CALLS_DIRECT",
    "PASSES_AS_CALLBACK",
    "ASSIGNS_FUNCTION",
    "RETURNS_FUNCTION",
    "TYPE_USES",
    "IMPLEMENTS",
    "EXTENDS",
    "EMBEDS",
    "OVERRIDES",
    "PART_OF",
)
# Left out by default, and said so: they forward a name (exports) or tie a part file to its library without using it.
DEFAULT_EXCLUDED: tuple[str, ...] = ("EXPORTS", "REEXPORTS", "PART_OF")
DEFAULT_KINDS = frozenset(EdgeKind[k] for k in REFERENCE_VOCABULARY if k not in DEFAULT_EXCLUDED)
ALL_KINDS = frozenset(EdgeKind[k] for k in REFERENCE_VOCABULARY)


@dataclass(frozen=True)
class Reference:
    """One observed fact: the other end, the edge kind, its confidence and provenance."""

    other: Symbol
    kind: int
    confidence: int
    provenance: int
    line: int
    col: int
    count: int
    via: str = ""
    # The counterpart of the subject the edge was bound to (a stub the checker read), None for the subject.
    bound_to: Symbol | None = None

    def sort_key(self) -> tuple[object, ...]:
        o = self.other
        return (
            o.repository,
            o.path,
            o.start_line,
            o.start_col,
            o.qualified_name,
            o.key,
            self.kind,
            self.provenance,
            self.via,
            self.bound_to.key if self.bound_to is not None else "",
        )


@dataclass
class References:
    """The whole matching set, sorted, with coverage over all of it."""

    rows: list[Reference]
    coverage: Coverage
    dispatch_through: list[str] = field(default_factory=list)
    # Unresolved records touching the question (counted in coverage.unresolved_related too).
    unbound: list[Unresolved] = field(default_factory=list)
    # Declarations answering as one symbol with the subject (a stub and its implementation): incoming only.
    merged_with: list[Symbol] = field(default_factory=list)
    # Interface methods outside the graph the subject implements (incoming): code there may call it.
    implements_outside: list[str] = field(default_factory=list)


def _hop(
    gen: Generation, key: str, *, outgoing: bool, kinds: frozenset[int], via: str = "", bound_to: Symbol | None = None
) -> list[Reference]:
    edges = list(gen.edges_out(key, kinds) if outgoing else gen.edges_in(key, kinds))
    if not edges:
        return []
    others = {
        s.key: s
        for s in gen.symbols_by_raw(dict.fromkeys(key_to_bytes(e.target if outgoing else e.source) for e in edges))
    }
    out = []
    for e in edges:
        other = others.get(e.target if outgoing else e.source)
        if other is not None:
            out.append(Reference(other, e.kind, e.confidence, e.provenance, e.line, e.col, e.count, via, bound_to))
    return out


def dispatch_targets(gen: Generation, subject: Symbol) -> list[Symbol]:
    """The methods the subject implements or overrides, nearest first (calls through them may run it)."""
    return list(gen.symbols_by_raw(traverse.dispatch_targets(gen, key_to_bytes(subject.key))))


def find_references(
    gen: Generation,
    subject: Symbol,
    *,
    outgoing: bool = False,
    kinds: frozenset[int] = DEFAULT_KINDS,
    repo: str | None = None,
    language: str | None = None,
    confidence: int | None = None,
    include_derived: bool = False,
) -> References:
    """Every reference row matching the filters, sorted, with coverage over the whole set."""
    rows = _hop(gen, subject.key, outgoing=outgoing, kinds=kinds)
    dispatch_through: list[str] = []
    group = [] if outgoing else counterparts.counterparts(gen, subject)
    if group:
        members = {subject.key, *(c.key for c in group)}
        for other in group:
            rows.extend(_hop(gen, other.key, outgoing=False, kinds=kinds, bound_to=other))
        rows = [r for r in rows if r.other.key not in members]  # a stub naming its implementation uses nothing
    if not outgoing:
        bridge_kinds = frozenset(kinds - traverse.TYPE_RELATION_KINDS)
        for target in dispatch_targets(gen, subject) if bridge_kinds else []:
            bridged = [
                r
                for r in _hop(gen, target.key, outgoing=False, kinds=bridge_kinds, via=target.qualified_name)
                if r.other.key != subject.key
            ]
            if bridged:
                dispatch_through.append(target.qualified_name)
                rows.extend(bridged)
        for name, bridged in _outside_hop(gen, subject, bridge_kinds) if bridge_kinds else ():
            dispatch_through.append(name)
            rows.extend(bridged)
    rows = [
        r
        for r in rows
        if (repo is None or r.other.repository == repo)
        and (language is None or r.other.language == language)
        and (confidence is None or r.confidence == confidence)
        and (include_derived or repo is not None or not is_derived(r.other.repository))
    ]
    rows.sort(key=Reference.sort_key)
    coverage = Coverage()
    for r in rows:
        coverage.count_confidence(r.confidence)
    unbound = unresolved_records(gen, subject, outgoing=outgoing)
    if group:
        seen = set(unbound)
        for other in group:
            for u in unresolved_records(gen, other, outgoing=False):
                if u not in seen:
                    seen.add(u)
                    unbound.append(u)
    coverage.unresolved_related += len(unbound)
    return References(
        rows=rows,
        coverage=coverage,
        dispatch_through=dispatch_through,
        unbound=unbound,
        merged_with=group,
        implements_outside=[] if outgoing else traverse.outside_names(gen, subject),
    )


def _outside_hop(gen: Generation, subject: Symbol, kinds: frozenset[int]) -> list[tuple[str, list[Reference]]]:
    """Per interface method outside the graph that the subject implements, the uses written against it as
    dispatch rows (one per declaration and edge kind, its uses folded into ``count``), ``via`` that method."""
    out = []
    for relation in traverse.outside_implemented(gen, subject):
        via = outside_name(relation.package, relation.name)
        folded: dict[tuple[str, int], tuple[Unresolved, int, int]] = {}
        for u in traverse.outside_uses(gen, relation):
            kind, provenance = traverse.outside_edge(u)
            if kind not in kinds or u.source == subject.key:
                continue
            first, _p, n = folded.get((u.source, kind), (u, provenance, 0))
            folded[(u.source, kind)] = (first, provenance, n + 1)
        others = {s.key: s for s in gen.symbols_by_raw(dict.fromkeys(key_to_bytes(k) for k, _ in folded))}
        rows = [
            Reference(others[key], kind, int(Confidence.EXACT_TYPECHECKED), provenance, u.line, u.col, n, via)
            for (key, kind), (u, provenance, n) in folded.items()
            if key in others
        ]
        if rows:
            out.append((via, rows))
    return out


def unresolved_records(gen: Generation, subject: Symbol, *, outgoing: bool) -> list[Unresolved]:
    """Unresolved records touching the question: naming the subject, the places its type is handed to code
    outside the graph, or its undecided type relations (incoming), or made inside it (outgoing); relations to
    what is outside the graph are not failures (``traverse.failures_only``)."""
    if outgoing:
        return [
            u
            for u in traverse.failures_only(gen.unresolved_in(subject.repository, subject.path))
            if u.path == subject.path and u.source == subject.key
        ]
    # a relation the type checker left undecided: implementations (or callers through an interface) missed
    return list(dict.fromkeys([*traverse.blind_to(gen, subject), *traverse.undecided_relations(gen, subject)]))
