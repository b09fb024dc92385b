"""End to end: a real `kivgraph serve` over stdio, a real `kivgraph index`, a fresh and empty KIVGRAPH_HOME."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from tests.helpers import REPO_ROOT, copy_fixture, kivgraph_env, run_kivgraph
from tests.server_fixtures import StdioPeer, stdio_serve

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

READ_TOOLS = [
    "find_references",
    "find_symbol",
    "get_source",
    "get_blast_radius",
    "trace_dependencies",
    "find_cross_repo_consumers",
    "find_by_intent",
    "get_file_outline",
    "get_symbol",
    "list_repositories",
    "graph_status",
]
SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.1"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def assert_stdout_is_only_json_rpc(peer: StdioPeer) -> None:
    assert peer.stdout_lines, "the server wrote nothing"
    assert peer.unparsed == []
    for line in peer.stdout_lines:
        assert json.loads(line)["jsonrpc"] == "2.0"


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under ``root`` except serve's own logs."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and "logs" not in p.relative_to(root).parts
    }


async def wait_for_snapshot(peer: StdioPeer, snapshot_id: int) -> dict[str, object]:
    with anyio.fail_after(60):
        while True:
            is_error, text = await peer.call("graph_status")
            assert not is_error, text
            answer = json.loads(text)
            if answer["snapshot_id"] == snapshot_id:
                return answer
            await anyio.sleep(0.1)


async def test_a_fresh_server_indexes_on_consent_and_follows_an_outside_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo_a = copy_fixture("pyrepo_a", tmp_path)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        init = await peer.initialize()
        assert init["capabilities"]["tools"]["listChanged"] is True
        assert "index_project" in init["instructions"]
        assert await peer.tool_names() == ["index_project"]

        project = {"name": "shapes", "path": str(repo_a), "languages": ["python"]}
        is_error, text = await peer.call("index_project", project)
        assert is_error and text.startswith("PERMISSION_REQUIRED: ")
        assert not (home / "kivgraph.toml").exists()

        is_error, text = await peer.call(
            "index_project", {**project, "confirmed": True}, progress_token="p1", timeout=240
        )
        assert not is_error, text
        payload = json.loads(text)
        assert payload["snapshot_id"] == payload["generation_id"] == 1
        await peer.wait_for_notification("notifications/tools/list_changed")
        progress = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
        assert progress and all(p["progressToken"] == "p1" for p in progress)
        assert [p["progress"] for p in progress] == sorted({p["progress"] for p in progress})

        assert await peer.tool_names() == [*READ_TOOLS, "index_project"]
        is_error, text = await peer.call("find_symbol", {"name": "Shape"})
        assert not is_error, text
        found = json.loads(text)
        assert found["snapshot_id"] == 1 and found["total"] >= 1
        is_error, source = await peer.call("get_source", {"symbols": [{"qualified_name": "shapes.base.Shape"}]})
        assert not is_error and "class Shape:" in source

        # an edit, then an outside index: a CANDIDATE generation, then the exact one; the server follows both
        (repo_a / "src" / "shapes" / "outside.py").write_text("def outside_edit():\n    return 1\n")
        outside = await anyio.to_thread.run_sync(lambda: run_kivgraph(home, "index", "--json"))
        assert outside.returncode == 0, outside.stderr
        stages = [
            json.loads(line)["published"]["stage"]
            for line in outside.stdout.splitlines()
            if '"event":"published"' in line
        ]
        assert stages == ["candidate", "exact"]
        status = await wait_for_snapshot(peer, 3)
        assert status["results"]["status"] == "ready"  # type: ignore[index]
        is_error, text = await peer.call("find_symbol", {"name": "outside_edit"})
        assert not is_error and json.loads(text)["total"] == 1, text
    assert_stdout_is_only_json_rpc(peer)
    assert b"Traceback" not in peer.stderr
    assert peer.process.returncode == 0


async def test_a_declined_elicitation_over_stdio_is_permission_denied(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo_b = copy_fixture("pyrepo_b", tmp_path)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize({"elicitation": {}})
        peer.elicitation_answer = {"action": "decline"}
        is_error, text = await peer.call(
            "index_project", {"name": "drawing", "path": str(repo_b), "languages": ["python"], "confirmed": True}
        )
        assert is_error and text == "PERMISSION_DENIED: project indexing was not approved"
        (asked,) = [r for r in peer.server_requests if r["method"] == "elicitation/create"]
        assert "'drawing'" in asked["params"]["message"]
        assert asked["params"]["requestedSchema"]["required"] == ["confirmed"]
    assert_stdout_is_only_json_rpc(peer)
    assert not (home / "kivgraph.toml").exists()


async def test_a_server_started_on_an_existing_generation_answers_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo_a = copy_fixture("pyrepo_a", tmp_path)
    assert run_kivgraph(home, "init", "--repository", f"shapes={repo_a}", "--languages", "python").returncode == 0
    assert run_kivgraph(home, "index").returncode == 0
    before = tree_state(home)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        init = await peer.initialize()
        assert init["instructions"].startswith("kivgraph answers")
        assert await peer.tool_names() == [*READ_TOOLS, "index_project"]
        is_error, text = await peer.call("find_references", {"qualified_name": "shapes.units.legacy_to_inches"})
        assert not is_error, text
        answer = json.loads(text)
        assert answer["total"] == 0 and "guidance" in answer
        # a name that misses is answered with the closest declarations, through the shared selector
        is_error, text = await peer.call("get_blast_radius", {"name": "Legacy_To_Inch"})
        assert is_error and text.startswith('SYMBOL_NOT_FOUND: name "Legacy_To_Inch" is not declared')
        assert "did you mean shapes:src/shapes/units.py:11 shapes.units.legacy_to_inches (function" in text
        is_error, text = await peer.call("find_symbol", {"name": "build_reprot"})
        assert (
            not is_error and "shapes:src/shapes/report.py:8 shapes.report.build_report" in json.loads(text)["guidance"]
        )
    assert_stdout_is_only_json_rpc(peer)
    assert tree_state(home) == before  # serve wrote nothing but its logs
    log = home / "state" / "logs" / "serve.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(e.get("tool") == "find_references" for e in events)
