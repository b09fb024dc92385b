"""The measuring side of ``bench_large --layers`` on a small real set: what it reports as carried, rebuilt and
linked is what the generations hold, and its server-memory probe gets answers from a real ``kivgraph serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_large_layers as bench
from tests.helpers import kivgraph_env, write_repo

pytestmark = pytest.mark.e2e


def _set(tmp_path: Path) -> tuple[Path, dict[str, tuple[bench.Repo, Path]], dict[str, str]]:
    files = {
        "prov": {"prov/__init__.py": "def helper(x):\n    return x + 1\n"},
        "cons": {"cons/app.py": "from prov import helper\n\n\ndef run():\n    return helper(1) + helper(2)\n"},
        "lone": {"lone/mod.py": "def alone():\n    return 0\n"},
    }
    roots = []
    for name, content in files.items():
        repo = bench.Repo(name, "python", "pypi", next(iter(content)))
        roots.append((repo, write_repo(tmp_path / "src" / name, content)))
    home = tmp_path / "home"
    home.mkdir()
    bench._register(home, roots)
    env = kivgraph_env(home, KIVGRAPH_SCIP_PYTHON=bench.MISSING_SCIP_PYTHON)
    return home, {r.name: (r, root) for r, root in roots}, env


def test_an_edit_is_reported_with_its_scope_and_every_other_layer_as_the_same_file(tmp_path: Path) -> None:
    home, repos, env = _set(tmp_path)
    cold = bench._index(home, env)
    assert cold["published"] and cold["published"][0]["stage"] == "exact"
    cross = bench._cross_edges(bench._current(home))
    assert cross.get("cons->prov", 0) >= 1, cross

    previous = bench._current(home)
    before = bench._layers(previous)
    bench._edit(*repos["lone"], 1)
    row = bench._run_row("edit lone", bench._index(home, env), before, bench._current(home), previous)
    assert row["rebuilt"] == ["lone"]
    assert row["layers_written"] == ["lone"] and row["written_counts_changed"] == {"lone": True}
    assert row["layers_carried"] == ["cons", "prov"]
    assert row["cross_edges_of_rebuilt"] == 0 and row["first_generation_s"] > 0

    previous = bench._current(home)
    before = bench._layers(previous)
    bench._edit(*repos["prov"], 2)
    row = bench._run_row("edit prov", bench._index(home, env), before, bench._current(home), previous)
    # the edit adds a declaration cons does not name: its view of prov is the same, so prov alone is rebuilt and
    # cons's layer is carried, its edges into prov bound again (issue 24)
    assert row["rebuilt"] == ["prov"]
    assert "prov" in row["layers_written"] and {"lone", "cons"} <= set(row["layers_carried"])
    assert row["cross_edges_of_rebuilt"] == cross["cons->prov"]


def test_the_memory_probe_reads_a_served_process_after_answers_without_errors(tmp_path: Path) -> None:
    home, _repos, env = _set(tmp_path)
    bench._index(home, env)
    plan = bench.query_plan(bench._current(home), ["prov", "cons", "lone"])
    assert {tool for tool, _ in plan} >= {"get_file_outline", "get_symbol", "find_references", "find_by_intent"}
    memory = bench.serve_memory(home, env, plan)
    assert memory["queries"] == len(plan)
    assert memory["error_answers"] == []
    after = memory["after_queries_kb"]
    assert after["VmRSS"] > 0 and after["VmHWM"] >= after["VmRSS"]
