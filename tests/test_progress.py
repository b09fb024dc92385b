"""Progress of an index run: heartbeats while an analyzer runs, phase lines with elapsed time, index_project."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from indexer.progress import Heartbeat, PhaseLines, Progress
from server.app import KivgraphApp, ServeOptions
from server.indexing import default_indexer
from snapshot_format.layout import StateLayout
from tests.helpers import run_kivgraph, write_repo
from tests.test_server_mcp import connect

FILES = {"pkg/__init__.py": "", "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n"}
LINE = re.compile(r"^\[\s*\d+\.\d\ds\] (\S+)\s+(\S+)")


def test_a_heartbeat_repeats_its_phase_with_the_time_spent_until_the_block_ends() -> None:
    seen: list[Progress] = []
    three = threading.Event()

    def emit(p: Progress) -> None:
        seen.append(p)
        if len(seen) == 3:
            three.set()

    with Heartbeat(emit, Progress("analyze.python", "click", "scip-python", 0, 1), interval=0.001):
        assert three.wait(60)
    after = len(seen)
    assert all(p.phase == "analyze.python" and p.repository == "click" for p in seen)
    assert all(re.fullmatch(r"scip-python: running for \d+s", p.detail) for p in seen)
    assert len(seen) == after  # nothing once the block has ended


def test_off_a_terminal_each_phase_ends_on_one_line_with_its_elapsed_time() -> None:
    lines: list[str] = []
    out = PhaseLines(lines.append, terminal=False)
    for done in range(1, 4):
        out.event(Progress("extract", "repo", f"{done}/3 files", done, 3, elapsed=0.1 * done))
    out.event(Progress("analyze.python", "repo", "scip-python", 0, 1, elapsed=0.4))
    out.event(Progress("analyze.python", "repo", "scip-python: running for 2s", 0, 1, elapsed=2.4))
    out.event(Progress("publish", "*", "writing the exact generation", 0, 1, elapsed=3.0))
    out.flush()
    assert lines == [
        "[   0.30s] extract          repo             3/3 files",
        "[   2.40s] analyze.python   repo             scip-python: running for 2s",
        "[   3.00s] publish          *                writing the exact generation",
    ]


def test_on_a_terminal_every_event_is_a_line() -> None:
    lines: list[str] = []
    out = PhaseLines(lines.append, terminal=True)
    for done in range(1, 4):
        out.event(Progress("extract", "repo", f"{done}/3 files", done, 3, elapsed=0.1 * done))
    assert len(lines) == 3 and lines[0].startswith("[   0.10s] extract")


@pytest.mark.e2e
def test_kivgraph_index_off_a_terminal_prints_a_line_per_phase_with_elapsed_time(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", FILES)
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    result = run_kivgraph(home, "index", KIVGRAPH_SCIP_PYTHON=str(tmp_path / "none"))
    assert result.returncode == 0, result.stderr
    phases = [m.group(1) for m in map(LINE.match, result.stderr.splitlines()) if m]
    assert phases[:2] == ["discover", "extract"] and "resolve" in phases and phases[-1] == "publish"
    assert len(phases) == len(set(phases))  # once each
    assert result.stdout.startswith("index: PASS g000001.v1")  # stdout keeps the summary alone
    again = run_kivgraph(home, "index", KIVGRAPH_SCIP_PYTHON=str(tmp_path / "none"))
    assert "nothing to publish: nothing changed since g000001.v1" in again.stdout


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _accept() -> Any:
    async def answer(_ctx: object, _params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirmed": True})

    return answer


async def _index_project(app: KivgraphApp, project: dict[str, Any]) -> list[str]:
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        del progress, total
        messages.append(message or "")

    async with connect(app, elicitation_callback=_accept()) as (client, _inbox):
        result = await client.call_tool("index_project", project, progress_callback=on_progress)
        assert not result.is_error, result.content
    return messages


@pytest.mark.e2e
@pytest.mark.anyio
async def test_index_project_reports_the_real_indexers_phases_as_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", str(tmp_path / "none"))
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    app = KivgraphApp(layout, ServeOptions(poll_interval=3600, indexer=default_indexer(), index_timeout=240))
    repo = write_repo(tmp_path / "repo", FILES)
    messages = await _index_project(app, {"name": "repo", "path": str(repo), "languages": ["python"]})
    phases = [m.split()[0] for m in messages]
    assert phases[0] == "discover" and "extract" in phases and "resolve" in phases
    assert phases[-2:] == ["publish", "published"] and messages[-1] == "published * exact generation g000001.v1"


@pytest.mark.e2e
@pytest.mark.analyzers
@pytest.mark.anyio
async def test_index_project_on_an_edited_project_reports_the_candidate_generation_then_the_exact_one(
    tmp_path: Path,
) -> None:
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    app = KivgraphApp(layout, ServeOptions(poll_interval=3600, indexer=default_indexer(), index_timeout=240))
    repo = write_repo(tmp_path / "repo", FILES)
    project = {"name": "repo", "path": str(repo), "languages": ["python"]}
    await _index_project(app, project)
    (repo / "pkg" / "more.py").write_text("from pkg.core import helper\n\n\ndef more():\n    return helper()\n")
    messages = await _index_project(app, project)
    published = [m for m in messages if m.startswith("published ")]
    assert published == ["published * candidate generation g000002.v1", "published * exact generation g000003.v1"]
    analyzing = [m for m in messages if m.startswith("analyze.python")]
    # between the two: the analyzer's run, its end with its route (an added file reaches only itself) and time
    assert re.fullmatch(r"analyze\.python repo scip-python \(incremental\): \d+\.\ds", analyzing[-1])
    assert messages.index(published[0]) < messages.index(analyzing[-1]) < messages.index(published[1])
