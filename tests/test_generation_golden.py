"""The generation's bytes are pinned: the fixture corpus indexes to its golden digest, old generations stay readable.

See tests/generation_golden.py for what is committed and how to regenerate it on purpose.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapshot_format.versions import FEATURE_VERSION
from tests.generation_golden import GOLDEN_FILE, answers, build, committed_generations, content_digest

REGENERATE = "python -m tests.generation_golden --write"


@pytest.mark.analyzers
def test_the_fixture_corpus_indexes_to_the_golden_content_digest(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN_FILE.read_text())
    assert golden["feature_version"] == FEATURE_VERSION, (
        f"FEATURE_VERSION is {FEATURE_VERSION} but golden.json pins {golden['feature_version']}: run {REGENERATE}"
    )
    generation = build(tmp_path)
    assert content_digest(generation) == golden["content_digest"], (
        "the fixture corpus no longer indexes to the same generation bytes; if that is intended, bump "
        f"FEATURE_VERSION (snapshot_format/versions.py) and run {REGENERATE}"
    )


def test_a_generation_of_the_current_feature_version_is_committed() -> None:
    versions = {
        int(re.fullmatch(r"feature-(\d+)", p.parent.name).group(1))  # type: ignore[union-attr]
        for p in committed_generations()
    }
    assert FEATURE_VERSION in versions, (
        f"no committed generation of feature version {FEATURE_VERSION}: run {REGENERATE}"
    )


@pytest.mark.parametrize("generation", committed_generations(), ids=lambda p: p.parent.name)
def test_every_committed_generation_is_still_read_with_its_recorded_answers(generation: Path) -> None:
    expected = json.loads((generation.parent / "answers.json").read_text())
    assert answers(generation) == expected
