"""Fault suite, server side: hostile .git state, protocol garbage, hostile index_project calls, a killed serve."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from server.errors import ToolError
from server.indexing import parse_index_request
from snapshot_format.gitstate import read_head
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from tests.fault_kit import exits, indexed_home, layout_of, no_analyzer_env
from tests.fault_kit import index as run_index
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph, write_repo
from tests.server_fixtures import stdio_serve

pytestmark = [pytest.mark.e2e]

SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.05", "--no-verify-digest"]
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- fault 5: a FIFO or a ref loop in .git -----------------------------------------------------------------


def _git_dir(root: Path, head: str = "ref: refs/heads/main\n") -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head)
    return git


@pytest.mark.parametrize("planted", ["HEAD", "refs/heads/main", "packed-refs", "commondir"])
def test_a_fifo_anywhere_git_state_is_read_is_refused_without_blocking(tmp_path: Path, planted: str) -> None:
    git = _git_dir(tmp_path)
    if planted == "HEAD":
        (git / "HEAD").unlink()
    os.mkfifo(git / planted)  # nobody ever writes it: opening it for reading would block forever
    head = read_head(tmp_path)
    assert head.commit == ""
    assert "not a regular file" in head.error or "has no commit" in head.error


@pytest.mark.parametrize("loop", [["refs/heads/main"], ["refs/heads/a", "refs/heads/b"]], ids=["self", "two"])
def test_a_symbolic_ref_loop_is_an_error_not_a_recursion(tmp_path: Path, loop: list[str]) -> None:
    git = _git_dir(tmp_path, f"ref: {loop[0]}\n")
    for i, ref in enumerate(loop):
        (git / ref).write_text(f"ref: {loop[(i + 1) % len(loop)]}\n")
    head = read_head(tmp_path)
    assert head.commit == "" and "loop" in head.error


def test_a_short_chain_of_symbolic_refs_still_resolves(tmp_path: Path) -> None:
    git = _git_dir(tmp_path, "ref: refs/heads/a\n")
    (git / "refs" / "heads" / "a").write_text("ref: refs/heads/b\n")
    (git / "refs" / "heads" / "b").write_text(SHA + "\n")
    assert read_head(tmp_path).commit == SHA


@pytest.mark.anyio
async def test_a_fifo_head_does_not_hang_the_server_for_anyone(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    git = _git_dir(tmp_path / "repo")
    (git / "HEAD").unlink()
    os.mkfifo(git / "HEAD")
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for tool in ("list_repositories", "graph_status"):
            is_error, text = await peer.call(tool, timeout=30)
            assert not is_error, text
        _e, text = await peer.call("list_repositories")
        assert "not a regular file" in text
        is_error, _text = await peer.call("find_symbol", {"name": "helper"}, timeout=30)
        assert not is_error
    assert peer.process.returncode == 0


# --- fault 8: protocol inputs that used to get no answer ------------------------------------------------------

BAD_LINES: list[tuple[bytes, object, int]] = [
    (b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2,3]}', 11, -32602),
    (
        b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"find_symbol","arguments":{"name":"\\ud800"}}}',
        12,
        -32600,
    ),
    (
        b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"find_symbol","arguments":'
        + b'{"a":' * 1000
        + b"1"
        + b"}" * 1000
        + b"}}",
        13,
        -32600,
    ),
    (
        b'{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"find_symbol","arguments":'
        + b'{"a":' * 80
        + b"1"
        + b"}" * 80
        + b"}}",
        18,
        -32600,
    ),
    (b"[" * 1000 + b"]" * 1000, None, -32600),
    (b'{"jsonrpc":"2.0","id":14,"method":', None, -32700),
    (b"\xff\xfe not utf-8", None, -32700),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, -32600),
    (b'[{"jsonrpc":"2.0","id":15,"method":"tools/list"}]', None, -32600),
    (b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":5}}', 16, -32602),
    (b'{"jsonrpc":"1.0","id":17,"method":"tools/list"}', 17, -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, -32600),
    (b'"just a string"', None, -32600),
]


@pytest.mark.anyio
async def test_every_malformed_request_gets_a_json_rpc_error_and_the_server_stays_up(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for line, reply_id, code in BAD_LINES:
            await peer.send_raw(line)
            response = await peer.response_for(reply_id, timeout=30)
            assert response["error"]["code"] == code, (line[:80], response)
            is_error, _text = await peer.call("graph_status")  # still answering, in order
            assert not is_error
    assert peer.process.returncode == 0
    assert b"Traceback" not in peer.stderr


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.anyio
async def test_a_fifty_megabyte_message_is_refused_and_memory_returns_to_its_level(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        await peer.call("graph_status")
        before = _rss_kb(peer.process.pid)
        huge = (
            b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"find_symbol","arguments":{"name":"'
            + b"x" * (50 << 20)
            + b'"}}}'
        )
        await peer.send_raw(huge)
        response = await peer.response_for(None, timeout=120)
        assert response["error"]["code"] == -32600 and "limit" in response["error"]["message"]
        is_error, _text = await peer.call("find_symbol", {"name": "helper"})
        assert not is_error
        after = _rss_kb(peer.process.pid)
        assert after - before < 16 * 1024, f"RSS grew from {before} kB to {after} kB"
    assert peer.process.returncode == 0


# --- fault 9: hostile index_project paths and names; a serve killed while it indexes -------------------------


@pytest.mark.parametrize("path", ["/", "/proc", "/proc/self", "/sys/kernel", "STATE", "STATE/generations"])
def test_index_project_refuses_paths_that_are_never_a_project(tmp_path: Path, path: str) -> None:
    state = tmp_path / "home" / "state"
    (state / "generations").mkdir(parents=True)
    raw = path.replace("STATE", str(state))
    with pytest.raises(ToolError) as info:
        parse_index_request({"name": "p", "path": raw, "languages": ["python"]}, tmp_path, state)
    assert info.value.code == "INVALID_ARGUMENT"
    assert info.value.text.startswith("INVALID_ARGUMENT: path") and "cannot be indexed" in info.value.text


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["my project", "-dash", "ünï", "a" * 0, "tab\tname"])
async def test_a_name_the_indexer_would_reject_is_refused_before_consent_is_asked(tmp_path: Path, name: str) -> None:
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    home = tmp_path / "home"
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize({"elicitation": {}})
        peer.elicitation_answer = {"action": "accept", "content": {"confirmed": True}}
        is_error, text = await peer.call("index_project", {"name": name, "path": str(repo), "languages": ["python"]})
        assert is_error and text.startswith("INVALID_ARGUMENT: name")
        assert peer.server_requests == []  # the user was never asked
    assert not (home / "kivgraph.toml").exists()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.anyio
async def test_a_serve_killed_while_index_project_runs_leaves_no_registration_behind(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    config_before = (home / "kivgraph.toml").read_bytes()
    other = write_repo(tmp_path / "other", {"o.py": "def other():\n    return 1\n"})
    env = kivgraph_env(home, KIVGRAPH_FAULT_STOP_AT="extract", **no_analyzer_env())
    async with stdio_serve(SERVE, env, REPO_ROOT) as peer:
        await peer.initialize()
        call = {"name": "other", "path": str(other), "languages": ["python"], "confirmed": True}

        async def index_project() -> None:
            # serve is killed mid-call on purpose: the call may see it exit before the cancel below reaches it
            with contextlib.suppress(RuntimeError):
                await peer.request("tools/call", {"name": "index_project", "arguments": call}, timeout=120)

        async with anyio.create_task_group() as tg:
            tg.start_soon(index_project)
            # the child indexer registers the project, takes the lock and stops at its first extraction
            with anyio.fail_after(120):
                while True:
                    holder = layout_of(home).publish_lock.read_text().strip()
                    if holder and b"other" in (home / "kivgraph.toml").read_bytes():
                        break
                    await anyio.sleep(0.05)
            child = int(holder)
            with anyio.fail_after(120):
                while _state(child) != "T":  # stopped by the fault hook (not our child: no waitid)
                    await anyio.sleep(0.05)
            peer.process.kill()  # SIGKILL: serve gets no chance to clean up
            await peer.process.wait()
            tg.cancel_scope.cancel()
    os.kill(child, signal.SIGCONT)
    assert exits(child, timeout=120)
    assert (home / "kivgraph.toml").read_bytes() == config_before
    assert run_index(home).returncode == 0  # the lock was released too


# --- fault 7: one bad file or one moved repository does not block the others -----------------------------------


def test_a_file_with_a_huge_string_literal_is_indexed_and_publishes(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/big.py": "BIG = '" + "a" * 900_000 + "'\n\n\ndef use_big():\n    return BIG\n"}
    home = indexed_home(tmp_path, files=files)
    with open_current(layout_of(home)) as gen:
        assert gen.symbols_by_name("use_big")


def test_a_moved_repository_fails_alone_and_the_others_are_indexed(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    moved = write_repo(tmp_path / "moved", {"m.py": "def m():\n    return 1\n"})
    assert run_kivgraph(home, "init", str(moved), "--languages", "python").returncode == 0
    moved.rename(tmp_path / "elsewhere")
    result = run_index(home)
    assert result.returncode == 0, result.stderr
    assert "repository moved is not indexed" in result.stderr and "does not exist" in result.stderr
    with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as gen:
        assert gen.symbols_by_name("helper")
        failed = gen.repository("moved")
        assert failed is not None and failed.files == 0
        (analysis,) = failed.analyses
        assert analysis.mode == "failed" and "does not exist" in analysis.reason
