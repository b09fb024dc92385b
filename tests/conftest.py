"""Shared fixtures: the real click corpus indexed once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.corpora import fetch_pypi_sdist
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current
from tests.helpers import run_kivgraph


@pytest.fixture(scope="session")
def click_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KIVGRAPH_HOME where the pinned click sdist is registered as `click` and indexed (the analyzer run is slow)."""
    home = tmp_path_factory.mktemp("click-home")
    src = fetch_pypi_sdist("click")
    assert run_kivgraph(home, "init", "--repository", f"click={src}", "--languages", "python").returncode == 0
    result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    return home


@pytest.fixture(scope="session")
def click_generation(click_home: Path) -> Iterator[Generation]:
    gen = open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(click_home)}))
    yield gen
    gen.close()
