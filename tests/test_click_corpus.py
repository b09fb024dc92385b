"""The real click sources (pinned sdist from PyPI, cached, never committed) index, and status reports them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.corpora import PYPI_CORPORA, fetch_pypi_sdist
from tests.helpers import run_kivgraph


@pytest.mark.slow
def test_indexing_click_completes_and_status_reports_its_counts(click_home: Path) -> None:
    home = click_home
    src = fetch_pypi_sdist("click")
    # A second index of the unchanged corpus: everything from the fact cache, same counts.
    indexed = run_kivgraph(home, "index", "--json")
    assert indexed.returncode == 0, indexed.stderr
    result = json.loads(indexed.stdout.splitlines()[-1])["result"]
    assert result["cache"]["misses"] == 0 and result["index"]["python"]["analyzer_runs"] == 0
    status = json.loads(run_kivgraph(home, "status", "--json").stdout)
    assert status["generation"] == result["generation"]
    counts = status["counts"]
    # click 8.1.7 has 60-odd Python files and well over a thousand declarations.
    assert counts["files"] >= 60 and counts["symbols"] >= 1000
    assert counts["edges"] >= 1000 and counts["unresolved"] > 0
    assert counts == {**counts, **{k: result["counts"][k] for k in ("files", "symbols", "edges", "unresolved")}}
    (repo,) = status["repositories"]
    assert repo["languages"]["python"]["indexed"] == counts["files"]
    text = run_kivgraph(home, "status").stdout
    assert f"symbols {counts['symbols']}" in text and f"unresolved {counts['unresolved']}" in text
    assert PYPI_CORPORA["click"] in str(src)
