"""Declarations that answer as one symbol: a stub and the implementation it stands for (docs/surface.md §4.6).

The indexer records ``STANDS_FOR`` edges (feature 7): a type stub (``m.pyi``) towards the implementation of its
module, the name a ``try`` block imports towards the one its ``except ImportError`` fallback imports. A checker
binds every use to the first (the stub, or the import it reads); the run time runs the other. So for the
question "who uses it", the uses of either are the uses of both: the tools ask for the whole group and say on
each row which declaration it was bound to.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

from snapshot_format import keys
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import CONTAINMENT_KINDS, REFERENCE_KINDS, EdgeKind

STANDS_FOR_KINDS: frozenset[int] = frozenset({int(EdgeKind.STANDS_FOR)})
USE_KINDS: frozenset[int] = frozenset(int(k) for k in REFERENCE_KINDS - CONTAINMENT_KINDS)
# A group is a stub, its implementation and a fallback or two; a bound keeps a pathological graph cheap.
MAX_GROUP = 16
STUB_SUFFIX = ".pyi"


def is_stub(sym: Symbol) -> bool:
    """Whether the declaration is in a type stub file."""
    return sym.path.endswith(STUB_SUFFIX)


def _ties(gen: Generation, key: str) -> Iterator[str]:
    """The declarations one STANDS_FOR edge ties to ``key``, either way (a seek to that kind, not a scan of all
    the edges of a much-used declaration)."""
    for e in gen.edges_out(key, STANDS_FOR_KINDS):
        yield e.target
    for e in gen.edges_in(key, STANDS_FOR_KINDS):
        yield e.source


def counterparts(gen: Generation, subject: Symbol) -> list[Symbol]:
    """The declarations ``STANDS_FOR`` ties to the subject, either way and transitively (the subject left out),
    in (repository, path, line) order."""
    seen = {subject.key}
    queue = collections.deque([subject.key])
    while queue and len(seen) < MAX_GROUP:
        for other in _ties(gen, queue.popleft()):
            if other not in seen and len(seen) < MAX_GROUP:
                seen.add(other)
                queue.append(other)
    seen.discard(subject.key)
    if not seen:
        return []
    found = gen.symbols_by_raw(sorted(keys.key_to_bytes(k) for k in seen))
    return sorted(found, key=lambda s: (s.repository, s.path, s.start_line, s.key))


def stands_for_something(gen: Generation, sym: Symbol) -> bool:
    """Whether the declaration stands for another (a stub, or the import a checker reads before a fallback)."""
    return next(iter(gen.edges_out(sym.key, STANDS_FOR_KINDS)), None) is not None


def role(gen: Generation, sym: Symbol) -> str:
    """``stub`` (a .pyi declaration), ``primary`` (a run-time declaration a fallback backs up) or ``implementation``."""
    if is_stub(sym):
        return "stub"
    return "primary" if stands_for_something(gen, sym) else "implementation"


def implementation_of(gen: Generation, group: list[Symbol]) -> Symbol:
    """The declaration a bare name means among one group: a run-time one before a stub, the one standing for
    nothing (the implementation) before one that does, then the first by repository, path and line."""
    return min(
        group, key=lambda s: (is_stub(s), stands_for_something(gen, s), s.repository, s.path, s.start_line, s.key)
    )


def label(sym: Symbol, subject: Symbol) -> str:
    """How a row names the counterpart it was bound to: its qualified name, or its file when the qualified name
    is the subject's own (``m.pyi`` beside ``m.py``)."""
    if sym.qualified_name != subject.qualified_name:
        return sym.qualified_name
    return sym.path if sym.repository == subject.repository else f"{sym.repository}:{sym.path}"


def described(gen: Generation, sym: Symbol) -> str:
    """``repository:path:line qualified_name (role)``: a member of a group as a header lists it."""
    return f"{sym.repository}:{sym.path}:{sym.start_line} {sym.qualified_name} ({role(gen, sym)})"


def uses(gen: Generation, sym: Symbol) -> int:
    """How many use edges (reference kinds) reach the declaration."""
    return sum(1 for _ in gen.neighbours_raw(keys.key_to_bytes(sym.key), outgoing=False, kinds=USE_KINDS))
