"""find_by_intent on the real click sources: written tasks and the file a developer would open."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.queries.intent import find_by_intent, matching_symbols, query_terms, rank_files
from snapshot_format.reader import Generation

# (task in a developer's words, the file they would open) — kept as the acceptance set.
TASKS = [
    ("where are shell completion scripts generated", "src/click/shell_completion.py"),
    ("how are environment variables mapped to options", "src/click/core.py"),
    ("how is a progress bar rendered in the terminal", "src/click/_termui_impl.py"),
    ("where is the help text formatted and wrapped", "src/click/formatting.py"),
    ("how are command line arguments tokenized and parsed into options", "src/click/parser.py"),
    ("where are file path parameters validated", "src/click/types.py"),
    ("how does click open files lazily", "src/click/utils.py"),
    ("where is the windows console handled", "src/click/_winconsole.py"),
    ("how are exceptions shown to the user", "src/click/exceptions.py"),
    ("how does the test runner invoke a command", "src/click/testing.py"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "expected"), TASKS)
def test_the_file_a_developer_would_open_is_in_the_top_three(
    click_generation: Generation, task: str, expected: str
) -> None:
    ranked = rank_files(click_generation, task)
    top = [m.path for m in ranked[:3]]
    assert expected in top, f"{task!r}: top three were {top}"


@pytest.mark.slow
def test_answers_name_matched_terms_and_symbols_and_are_deterministic(click_generation: Generation) -> None:
    first = rank_files(click_generation, "shell completion")
    again = rank_files(click_generation, "shell completion")
    assert [(m.path, m.score) for m in first] == [(m.path, m.score) for m in again]
    best = first[0]
    assert set(best.matched) <= set(query_terms("shell completion"))
    symbols = matching_symbols(click_generation, best)
    assert symbols and all(s.matched for s in symbols)


@pytest.mark.slow
def test_filters_narrow_by_repository_language_and_kind(click_generation: Generation) -> None:
    assert rank_files(click_generation, "progress bar", repository="nope") == []
    assert rank_files(click_generation, "progress bar", language="go") == []
    classes = find_by_intent(click_generation, "progress bar", kinds=frozenset({"class"}))
    assert classes and all(s.kind == "class" for m in classes for s in m.symbols)


def test_a_query_of_only_stop_words_matches_nothing(tmp_path: Path) -> None:
    assert query_terms("how is the of a") == []
