"""Did you mean: the names nearest a name that matched nothing (docs/surface.md §4.7).

Asked only on a miss, and bounded whatever the size of the generation: the name index is read as a trie
of the names' bytes (``Generation.name_trie``), one seek per branch, at most ``SEEK_BUDGET`` seeks.

- Distance: optimal string alignment (a character dropped, added or replaced, or two neighbours swapped,
  each one edit) on text with ASCII letters folded to lower case, so 0 is equal but for case
  (``newlru`` finds ``NewLRU`` wherever it sorts). At most one edit for a word of up to four
  characters, two up to ten, three beyond.
- Best first: the branches whose prefix is nearest a prefix of the word are read first, a branch already
  farther than the bound is never read, and a name is handed out only once no unread branch could be
  nearer, so names come nearest first and the search goes on only as far as the caller reads. Once a
  name is found, at most ``AFTER_FIRST`` more seeks look for others; when the budget is spent the names
  already found are still handed out. A farther name may have been missed, never a nearer one handed out
  after a farther one.
- Then the first few names that continue the whole word but for case (``Cache`` finds
  ``CacheEntryManager``), as one more than the bound.

The caller keeps the names that have a declaration within its filters.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from snapshot_format.reader import Generation

SEEK_BUDGET = 800  # seeks of the name index per lookup
AFTER_FIRST = 150  # seeks more, once a name is found, for others as near
CONTINUATIONS = 8  # names read that continue the word but for case

_A, _Z = ord("A"), ord("Z")


def edit_bound(word: str) -> int:
    """How many edits a suggestion may be away from ``word``."""
    return 1 if len(word) <= 4 else 2 if len(word) <= 10 else 3


def _fold(byte: int) -> int:
    return byte | 0x20 if _A <= byte <= _Z else byte


def close_names(gen: Generation, word: str) -> Iterator[tuple[int, str]]:
    """(distance, name) for the names of the name index close to ``word`` (never ``word`` itself), nearest first.

    Lazy: the search goes on only as far as the caller reads, so a caller that stops at the nearest names
    pays for those alone. Distance 0 is equal but for case; the names that merely continue the word but for
    case come last, as ``edit_bound(word) + 1``.
    """
    if not word:
        return
    raw = word.encode("utf-8")
    folded = bytes(_fold(b) for b in raw)
    bound = edit_bound(word)
    far = bound + 1
    n = len(folded)
    # Branches (nearest any prefix of the word can be, 1, minus depth, prefix, its row, the row before) and
    # names found (distance, 0, 0, name): a name is handed out once no branch left could beat it.
    heap: list[tuple[int, int, int, bytes, list[int], list[int]]] = [(0, 1, 0, b"", list(range(n + 1)), [])]
    spent, budget = 0, SEEK_BUDGET
    given = {raw}
    with gen.name_trie() as trie:
        while heap:
            cost, branch, _depth, prefix, row, before = heapq.heappop(heap)
            if not branch:
                if prefix not in given:
                    given.add(prefix)
                    budget = min(budget, spent + AFTER_FIRST)
                    yield cost, prefix.decode("utf-8", "replace")
                continue
            if spent >= budget:
                continue  # the names already found are still handed out
            if row[n] == 0 and prefix:  # the whole word but for case: what continues it comes last
                for i, name in enumerate(gen.distinct_names(prefix.decode("utf-8", "replace"))):
                    if i >= CONTINUATIONS:
                        break
                    if name.encode("utf-8") != prefix:
                        heapq.heappush(heap, (far, 0, 0, name.encode("utf-8"), [], []))
                spent += CONTINUATIONS
            children = trie.children(prefix)
            spent += len(children) + 1
            last = _fold(prefix[-1]) if prefix else -1
            depth = len(prefix) + 1
            for byte in children:
                if byte == 0:
                    if prefix and row[n] <= bound:
                        heapq.heappush(heap, (row[n], 0, 0, prefix, [], []))
                    continue
                char = _fold(byte)
                # Only the band |i - j| <= bound can stay within the bound; the cells outside it read as beyond.
                low, high = max(1, depth - bound), min(n, depth + bound)
                new = [far] * (n + 1)
                new[0] = depth if depth <= bound else far
                for j in range(low, high + 1):
                    value = min(row[j] + 1, new[j - 1] + 1, row[j - 1] + (folded[j - 1] != char))
                    if before and j > 1 and folded[j - 1] == last and folded[j - 2] == char:
                        value = min(value, before[j - 2] + 1)
                    new[j] = value if value <= bound else far
                nearest = min(new[low - 1 : high + 1])
                if nearest <= bound:
                    heapq.heappush(heap, (nearest, 1, -depth, prefix + bytes((byte,)), new, row))
