"""Type hierarchies: find_references ``relation`` (docs/surface.md §11.5.1).

The generation's type relations, walked transitively from the subject and bounded:

- for a type, ``EXTENDS`` (a class or interface extending another, a Rust supertrait), ``IMPLEMENTS`` (a
  class, struct or type implementing an interface or trait: TypeScript ``implements``, Rust ``impl Trait for``,
  Go's go/types satisfaction) and, in Go, ``EMBEDS`` between interfaces (an interface embedding another has
  its method set, so every implementation of it implements the other; a struct embedding a struct is no
  subtype of it);
- for a member, ``IMPLEMENTS`` and ``OVERRIDES``: the interface or base method it implements or overrides.

``supertypes`` walks them outgoing, ``subtypes`` incoming; ``implementations`` is the incoming walk keeping
the declarations that are not themselves abstract (interfaces and traits are passed through, not listed; for
a member every implementing or overriding member is listed); ``overrides`` is the outgoing walk of a member.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from server.queries.traverse import TYPE_DECLARATION_KINDS, Reached, TraversalDeadline, Walk
from snapshot_format import keys
from snapshot_format.languages import language
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import Confidence, EdgeKind

RELATIONS = ("implementations", "supertypes", "subtypes", "overrides")
MAX_LEVELS = 16  # a hierarchy deeper than this is cut, and the answer says so
MAX_NODES = 5000
TYPE_KINDS = frozenset({int(EdgeKind.EXTENDS), int(EdgeKind.IMPLEMENTS), int(EdgeKind.EMBEDS)})
MEMBER_KINDS = frozenset({int(EdgeKind.IMPLEMENTS), int(EdgeKind.OVERRIDES)})
_ABSTRACT_KINDS = frozenset({"interface", "trait", "protocol"})


def is_type(sym: Symbol) -> bool:
    return sym.kind in TYPE_DECLARATION_KINDS and sym.kind not in ("module", "namespace", "package")


def is_abstract(sym: Symbol) -> bool:
    """An interface or trait (in a structurally typed language, a type whose declaration is an interface, as Go's
    ``type Writer interface``), which implementations implement."""
    if sym.kind in _ABSTRACT_KINDS:
        return True
    row = language(sym.language)
    structural = row is not None and row.structural_typing
    return structural and sym.kind == "type" and sym.signature.rstrip().endswith("interface")


@dataclass
class Hierarchy:
    walk: Walk
    upward: bool
    levels: int  # the deepest level reached
    cut: bool  # MAX_LEVELS or MAX_NODES stopped it


def walk_hierarchy(
    gen: Generation, subject: Symbol, *, upward: bool, confidence: int | None = None, deadline: float | None = None
) -> Hierarchy:
    """The transitive type relations of ``subject``, breadth first, each node once with the first edge to it."""
    member = not is_type(subject)
    follow = MEMBER_KINDS if member else TYPE_KINDS
    start = keys.key_to_bytes(subject.key)
    visited = {start}
    reached: list[Reached] = []
    frontier = [start]
    cut = False
    candidates = 0
    level = 0
    steps = 0
    while frontier and level < MAX_LEVELS:
        level += 1
        nxt: list[bytes] = []
        for node in frontier:
            for kind, other, prov, conf in gen.neighbours_raw(node, outgoing=upward, kinds=follow):
                steps += 1
                if deadline is not None and steps % 256 == 0 and time.monotonic() > deadline:
                    raise TraversalDeadline()
                if confidence is not None and conf != confidence:
                    continue
                if other in visited:
                    continue
                if kind == EdgeKind.EMBEDS and not _interfaces(gen, node, other):
                    continue
                if len(visited) >= MAX_NODES:
                    cut = True
                    continue
                visited.add(other)
                if conf == Confidence.CANDIDATE:
                    candidates += 1
                reached.append(Reached(other, level, kind, conf, prov, node))
                nxt.append(other)
        frontier = nxt
    if frontier and level >= MAX_LEVELS:
        cut = cut or any(True for n in frontier for _ in gen.neighbours_raw(n, outgoing=upward, kinds=follow))
    walk = Walk(reached, len(visited), cut, candidate_edges=candidates)
    return Hierarchy(walk, upward, max((r.depth for r in reached), default=0), cut)


def _interfaces(gen: Generation, a: bytes, b: bytes) -> bool:
    """Whether both ends of an EMBEDS edge are interfaces (only then is it a subtype relation)."""
    found = list(gen.symbols_by_raw([a, b]))
    return len(found) == 2 and all(is_abstract(s) for s in found)
