"""What the incremental exact passes (TypeScript's and Python's) share: a file as its top-level statements.

Each language says what a statement is and which names it binds (``typescript/units.py``,
``python/units.py``); reading sources once per edit, comparing two versions' statements and reading every
file's statements for the next run are the same for both.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

from tree_sitter import Node

S = TypeVar("S")  # a language's statement
U = TypeVar("U", bound=Hashable)  # a language's unit of change
F = TypeVar("F")  # a language's record of one file's units


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


class SourceFiles(Generic[S]):
    """The repository's current sources, read and split into statements only when an edit's names need them.

    ``words_of`` gives the identifier-like words of a text, ``split`` a file's statements (path, bytes).
    """

    def __init__(
        self, root: Path, words_of: Callable[[str], frozenset[str]], split: Callable[[str, bytes], list[S]]
    ) -> None:
        self.root = root
        self._words_of = words_of
        self._split = split
        self._sources: dict[str, bytes] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._statements: dict[str, list[S]] = {}

    def source(self, path: str) -> bytes:
        if path not in self._sources:
            try:
                self._sources[path] = (self.root / path).read_bytes()
            except OSError:
                self._sources[path] = b""
        return self._sources[path]

    def words(self, path: str) -> frozenset[str]:
        if path not in self._words:
            self._words[path] = self._words_of(self.source(path).decode("utf-8", "replace"))
        return self._words[path]

    def statements(self, path: str) -> list[S]:
        if path not in self._statements:
            self._statements[path] = self._split(path, self.source(path))
        return self._statements[path]


def changed_units(old: Iterable[U], new: Iterable[U]) -> list[U]:
    """The statements one version has and the other has not."""
    a, b = Counter(old), Counter(new)
    return list(((a - b) + (b - a)).elements())


def read_file_units(
    root: Path,
    files: Iterable[str],
    units_of: Callable[[str, bytes], tuple[U, ...]],
    record: Callable[[str, tuple[U, ...]], F],
) -> tuple[F, ...]:
    """The top-level statements of ``files`` (what the next incremental run compares an edit with); a file
    that cannot be read is left out."""
    out = []
    for path in sorted(files):
        try:
            source = (root / path).read_bytes()
        except OSError:
            continue
        out.append(record(path, units_of(path, source)))
    return tuple(out)
