"""Which rows sit in test files: the indexer's mark, or the path patterns of older generations.

From feature 5 on the indexer marks each file (``File.test``, from its language's test patterns). A
generation written before that carries no mark; for those the server applies the patterns the indexer used
at the time, frozen in the language table (``tests_before_feature_5``; they never change: a newer generation
carries its own marks, whatever patterns wrote them).
"""

from __future__ import annotations

import fnmatch

from snapshot_format import languages
from snapshot_format.reader import Generation
from snapshot_format.records import File
from snapshot_format.versions import MIN_FEATURE_FOR


def matches_test_patterns(language: str, path: str) -> bool:
    """Whether ``path`` is a test file by the frozen patterns of its language."""
    row = languages.language(language)
    return row is not None and any(fnmatch.fnmatchcase(path, p) for p in row.tests_before_feature_5)


class FileRoles:
    """Answers "is this a test file" for the rows of one call on one generation (each file looked up once)."""

    def __init__(self, gen: Generation) -> None:
        self._gen = gen
        self._marked = gen.feature_version >= MIN_FEATURE_FOR["file_test_flag"]
        self._seen: dict[tuple[str, str], bool] = {}
        self._records: dict[tuple[str, str], File | None] = {}

    def record(self, repository: str, path: str) -> File | None:
        """The file's record (looked up once per call)."""
        key = (repository, path)
        if key not in self._records:
            self._records[key] = self._gen.file(repository, path)
        return self._records[key]

    def language(self, repository: str, path: str) -> str:
        found = self.record(repository, path)
        return found.language if found is not None else ""

    def is_test(self, repository: str, path: str, language: str | None = None) -> bool:
        key = (repository, path)
        known = self._seen.get(key)
        if known is None:
            if self._marked:
                found = self.record(repository, path)
                known = bool(found is not None and found.test)
            else:
                known = matches_test_patterns(language or self.language(repository, path), path)
            self._seen[key] = known
        return known


def tests_note(rows: int, files: int, unbound: int = 0) -> str:
    """The sentence that states what was left out in test files: ``+4 in 2 test files; include_tests=true lists
    them``, and the uses that could not be bound there (``+240 unbound uses in test files``)."""
    parts = [f"+{rows} in {files} test file{'s' if files != 1 else ''}"] if rows else []
    if unbound:
        parts.append(f"+{unbound} unbound use{'s' if unbound != 1 else ''} in test files")
    return f"{', '.join(parts)}; include_tests=true lists them"
