"""End to end: a real `kivgraph serve --http`, real tokens from `kivgraph token`, the SDK's streamable HTTP client.

The twelve tools through a token; tools/list_changed to every session when a generation appears; a token
limited to some repositories answering, in every tool, exactly what its in-process view answers; and the
attacks: no token, a wrong one, a revoked one, a limited token probing another repository by name,
qualified name, stable key, path and cursor, an oversized body, a foreign Host and Origin, a flood past the
rate limit. Each is the documented answer, and no tool runs for a refused request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from server.access import Access, view_of
from server.app import encode_answer
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from tests.helpers import copy_fixture, run_kivgraph
from tests.http_kit import create_token, http_serve, mcp_session, text_of
from tests.server_fixtures import GraphBuilder, StandardGraph, build_standard
from tests.test_serve_imports import FORBIDDEN, imported_modules

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

READ_TOOLS_LISTED = sorted([*READ_TOOLS, "index_project"])
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def publish_standard(home: Path, src: Path) -> StandardGraph:
    builder = build_standard(GraphBuilder(src))
    layout = StateLayout(config_path=home / "kivgraph.toml", state_dir=home / "state")
    return StandardGraph(builder=builder, layout=layout, result=builder.publish(layout))


def sample_calls(graph: StandardGraph) -> dict[str, dict[str, Any]]:
    """One call of each read tool on the standard graph."""
    square = graph.key("alpha", "pkg.shapes.make_square")
    return {
        "find_references": {"name": "make_square", "repository": "alpha", "path": "pkg/shapes.py"},
        "get_blast_radius": {"stable_key": square},
        "trace_dependencies": {"stable_key": graph.key("alpha", "pkg.use.main")},
        "find_cross_repo_consumers": {"stable_key": square},
        "find_by_intent": {"query": "square area"},
        "find_symbol": {"name": "helper"},
        "get_source": {"symbols": [{"stable_key": square}]},
        "get_symbol": {"qualified_name": "app.run.run"},
        "get_file_outline": {"repository": "beta", "path": "app/run.py"},
        "list_repositories": {},
        "graph_status": {},
    }


def comparable(text: str) -> Any:
    """An answer without the fields that depend on the moment it was made."""
    try:
        out = json.loads(text)
    except ValueError:
        return text
    if isinstance(out, dict):
        out.pop("snapshot_age_ms", None)
        out.pop("size_tokens", None)  # its estimate follows snapshot_age_ms's digits in the full view
        if isinstance(out.get("results"), dict):
            out["results"].pop("snapshot_age_ms", None)
    return out


def calls_logged(home: Path) -> int:
    """Tool calls in the server's event log (one line per call)."""
    path = home / "state" / "logs" / "serve.jsonl"
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"tool":' in line)


async def test_the_twelve_tools_answer_through_a_token_as_they_do_in_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    graph = publish_standard(home, tmp_path / "src")
    token = create_token(home, "alice")
    with http_serve(home) as served:
        async with mcp_session(served.url, token) as session:
            listed = await session.list_tools()
            assert sorted(t.name for t in listed.tools) == READ_TOOLS_LISTED
            generation = open_current(graph.layout)
            try:
                for tool, arguments in sample_calls(graph).items():
                    result = await session.call_tool(tool, arguments)
                    assert not result.is_error, text_of(result)
                    local = READ_TOOLS[tool](generation, arguments)
                    expected = encode_answer(local)  # as served: with its size
                    assert comparable(text_of(result)) == comparable(expected), tool
                    if not isinstance(local, str):
                        assert isinstance(json.loads(text_of(result))["size_tokens"], int), tool
            finally:
                generation.close()
            # index_project needs the index scope: a read token is refused before any consent is asked
            refused = await session.call_tool("index_project", {"name": "x", "path": str(tmp_path), "confirmed": True})
            assert refused.is_error and text_of(refused).startswith("PERMISSION_DENIED: ")
            assert "index scope" in text_of(refused)
    audited = [json.loads(x) for x in (home / "state" / "logs" / "audit.jsonl").read_text().splitlines()]
    refusal = [(x["token"], x["outcome"], x["projects"]) for x in audited if x["event"] == "index_project"]
    assert refusal == [("alice", "PERMISSION_DENIED", [{"name": "x"}])]  # refused calls are audited too
    assert served.process.returncode == 0  # SIGTERM ends the server cleanly
    assert "HTTP server stopped" in "".join(served.stderr)
    uses = json.loads(run_kivgraph(home, "token", "list", "--json").stdout)["tokens"]
    assert [(u["name"], u["scope"], bool(u["last_used_at"])) for u in uses] == [("alice", "read", True)]
    assert token not in (home / "state" / "tokens.json").read_text()


async def test_an_index_token_indexes_over_http_and_the_call_is_audited(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = copy_fixture("pyrepo_b", tmp_path)
    token = create_token(home, "ci-bot", "--scope", "index")
    with http_serve(home) as served:
        async with mcp_session(served.url, token) as session:
            assert [t.name for t in (await session.list_tools()).tools] == ["index_project"]
            project = {"name": "drawing", "path": str(repo), "languages": ["python"]}
            asked = await session.call_tool("index_project", project)
            assert asked.is_error and text_of(asked).startswith("PERMISSION_REQUIRED: ")
            done = await session.call_tool("index_project", {**project, "confirmed": True})
            assert not done.is_error, text_of(done)
            assert json.loads(text_of(done))["snapshot_id"] == 1
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == READ_TOOLS_LISTED
    lines = [json.loads(x) for x in (home / "state" / "logs" / "audit.jsonl").read_text().splitlines()]
    audited = [x for x in lines if x["event"] == "index_project"]
    assert [(x["token"], x["outcome"], [p["name"] for p in x["projects"]]) for x in audited] == [
        ("ci-bot", "PERMISSION_REQUIRED", ["drawing"]),
        ("ci-bot", "OK", ["drawing"]),
    ]
    assert token not in (home / "state" / "logs" / "audit.jsonl").read_text()


async def test_every_session_hears_list_changed_when_a_generation_is_published(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tokens = [create_token(home, "alice"), create_token(home, "bob", "--repository", "beta")]
    with http_serve(home) as served:
        heard = [anyio.Event(), anyio.Event()]

        def handler(i: int) -> Any:
            async def handle(message: object) -> None:
                if getattr(message, "method", None) == "notifications/tools/list_changed":
                    heard[i].set()

            return handle

        async with (
            mcp_session(served.url, tokens[0], handler(0)) as first,
            mcp_session(served.url, tokens[1], handler(1)) as second,
        ):
            assert [t.name for t in (await first.list_tools()).tools] == ["index_project"]
            assert [t.name for t in (await second.list_tools()).tools] == ["index_project"]
            publish_standard(home, tmp_path / "src")
            with anyio.fail_after(30):
                await heard[0].wait()
                await heard[1].wait()
            for session in (first, second):
                assert sorted(t.name for t in (await session.list_tools()).tools) == READ_TOOLS_LISTED
            status = json.loads(text_of(await second.call_tool("graph_status", {})))
            assert status["results"]["repositories"] == 1


async def test_a_limited_token_answers_in_every_tool_as_its_view_does(tmp_path: Path) -> None:
    """Over HTTP, each tool gives a token limited to beta exactly what server/access.py's view gives."""
    home = tmp_path / "home"
    graph = publish_standard(home, tmp_path / "src")
    token = create_token(home, "bob", "--repository", "beta")
    access = Access(token="bob", scope="read", repositories=("beta",))
    calls = sample_calls(graph)
    calls["find_symbol_hidden"] = {"name": "make_square"}
    with http_serve(home) as served:
        async with mcp_session(served.url, token) as session:
            generation = open_current(graph.layout)
            try:
                view = view_of(generation, access)
                for label, arguments in calls.items():
                    tool = label.removesuffix("_hidden")
                    result = await session.call_tool(tool, arguments)
                    try:
                        local: Any = READ_TOOLS[tool](view, arguments)
                        expected = encode_answer(local)  # as served: with its size
                    except Exception as exc:  # a ToolError: compare its wire text
                        expected = getattr(exc, "text", str(exc))
                    assert comparable(text_of(result)) == comparable(expected), label
                    if not result.is_error:  # an error may echo the name asked for, as for any unknown name
                        assert "alpha" not in text_of(result) and "gamma" not in text_of(result), label
            finally:
                generation.close()


async def test_a_limited_token_cannot_tell_a_hidden_repository_from_one_that_does_not_exist(tmp_path: Path) -> None:
    home = tmp_path / "home"
    graph = publish_standard(home, tmp_path / "src")
    admin, bob = create_token(home, "admin"), create_token(home, "bob", "--repository", "beta")
    hidden = graph.builder.sym("alpha", "pkg.shapes.make_square")
    absent_key = "A" * 26
    with http_serve(home) as served:
        async with mcp_session(served.url, admin) as seeing, mcp_session(served.url, bob) as limited:

            async def both(tool: str, probe: dict[str, Any], control: dict[str, Any]) -> tuple[str, str]:
                a = await limited.call_tool(tool, probe)
                b = await limited.call_tool(tool, control)
                return text_of(a), text_of(b)

            # by name, qualified name and stable key, in every symbol tool
            for tool in ("get_symbol", "find_references", "get_blast_radius", "trace_dependencies"):
                for probe, control, spelled in (
                    ({"name": "make_square"}, {"name": "make_squarf"}, ("make_square", "make_squarf")),
                    (
                        {"qualified_name": "pkg.shapes.make_square"},
                        {"qualified_name": "pkg.shapes.make_squarf"},
                        ("make_square", "make_squarf"),
                    ),
                    ({"stable_key": hidden.key}, {"stable_key": absent_key}, (hidden.key, absent_key)),
                    (
                        {"qualified_name": "pkg.shapes.make_square", "repository": "alpha"},
                        {"qualified_name": "pkg.shapes.make_square", "repository": "alphb"},
                        ('"alpha"', '"alphb"'),
                    ),
                ):
                    seen, absent = await both(tool, probe, control)
                    assert seen.split(":")[0] in ("SYMBOL_NOT_FOUND", "REPOSITORY_NOT_FOUND"), seen
                    assert seen.replace(*spelled) == absent, (tool, probe)
            # by path: an outline of the hidden repository's file
            seen, absent = await both(
                "get_file_outline",
                {"repository": "alpha", "path": "pkg/shapes.py"},
                {"repository": "alphb", "path": "pkg/shapes.py"},
            )
            assert seen.startswith("REPOSITORY_NOT_FOUND: ") and seen.replace('"alpha"', '"alphb"') == absent
            # by filter: the same counts as for a repository that does not exist
            seen, absent = await both(
                "find_symbol", {"name": "helper", "in_repository": "alpha"}, {"name": "helper", "in_repository": "x"}
            )
            assert seen.replace('"alpha"', '"x"').replace("'alpha'", "'x'") == absent
            # by cursor: a cursor the seeing token was given resumes nothing for the limited one
            page = json.loads(text_of(await seeing.call_tool("list_repositories", {"limit": 1})))
            other = json.loads(
                text_of(await limited.call_tool("find_symbol", {"name": "r", "mode": "substring", "limit": 1}))
            )
            seen, absent = await both(
                "list_repositories",
                {"limit": 1, "cursor": page["next_cursor"]},
                {"limit": 1, "cursor": other["next_cursor"]},
            )
            assert seen.startswith("CURSOR_INVALID: ") and seen == absent
            # and the index tools count only what it sees
            status = json.loads(text_of(await limited.call_tool("graph_status", {})))["results"]
            assert status["repositories"] == 1 and [r["name"] for r in status["repository_freshness"]] == ["beta"]


async def test_requests_without_a_valid_token_are_refused_before_any_tool_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish_standard(home, tmp_path / "src")
    token = create_token(home, "carol")
    with http_serve(home) as served:
        async with httpx2.AsyncClient(timeout=30) as http:
            before = calls_logged(home)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "graph_status"}}
            wrong = "kvg_" + "0" * 12 + "_" + "A" * 43
            answers = {
                "none": await http.post(served.url, json=call, headers=JSON_HEADERS),
                "malformed": await http.post(
                    served.url, json=call, headers={**JSON_HEADERS, "Authorization": "Bearer x"}
                ),
                "basic": await http.post(
                    served.url, json=call, headers={**JSON_HEADERS, "Authorization": f"Basic {token}"}
                ),
                "wrong": await http.post(
                    served.url, json=call, headers={**JSON_HEADERS, "Authorization": f"Bearer {wrong}"}
                ),
                "tampered": await http.post(
                    served.url, json=call, headers={**JSON_HEADERS, "Authorization": f"Bearer {token[:-1]}x"}
                ),
            }
            for label, response in answers.items():
                assert response.status_code == 401, label
                assert response.headers["www-authenticate"].startswith('Bearer realm="kivgraph"'), label
                assert token not in response.text and "carol" not in response.text and "kvg_" not in response.text
            assert answers["none"].json()["error"] == "invalid_request"
            bad = {label: answers[label].json() for label in ("malformed", "basic", "wrong", "tampered")}
            assert all(
                body == {"error": "invalid_token", "error_description": "the bearer token is not valid"}
                for body in bad.values()
            )
            assert calls_logged(home) == before


async def test_a_revoked_token_is_refused_from_its_next_request_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish_standard(home, tmp_path / "src")
    token = create_token(home, "dave")
    with http_serve(home) as served:
        async with mcp_session(served.url, token) as session:
            assert not (await session.call_tool("graph_status", {})).is_error
            revoked = run_kivgraph(home, "token", "revoke", "dave", timeout=60)
            assert revoked.returncode == 0, revoked.stderr
            before = calls_logged(home)
            with anyio.fail_after(30), pytest.raises(MCPError):
                await session.call_tool("graph_status", {})
            assert calls_logged(home) == before
        async with httpx2.AsyncClient(timeout=30) as http:
            again = await http.post(
                served.url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": f"Bearer {token}"}
            )
            assert again.status_code == 401 and again.json()["error"] == "invalid_token"
    listed = json.loads(run_kivgraph(home, "token", "list", "--json").stdout)["tokens"]
    assert listed == []


async def test_foreign_host_and_origin_oversized_bodies_and_floods_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish_standard(home, tmp_path / "src")
    token = create_token(home, "erin")
    auth = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    with http_serve(home, "--rate-limit", "0.001", "--burst", "6", "--max-body-bytes", "65536") as served:
        async with httpx2.AsyncClient(timeout=30) as http:
            before = calls_logged(home)
            host = await http.post(served.url, json=INITIALIZE, headers={**auth, "Host": "attacker.example"})
            assert host.status_code == 421 and host.json()["error"] == "host_not_allowed"
            origin = await http.post(served.url, json=INITIALIZE, headers={**auth, "Origin": "http://attacker.example"})
            assert origin.status_code == 403 and origin.json()["error"] == "origin_not_allowed"
            local_origin = await http.post(
                served.url, json=INITIALIZE, headers={**auth, "Origin": "http://localhost:1"}
            )
            assert local_origin.status_code == 200  # a loopback page is allowed (the token still decides)
            big = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 70000}}
            oversized = await http.post(served.url, json=big, headers=auth)
            assert oversized.status_code == 413
            # a flood: the burst of six passes (two requests above counted; refused Hosts and Origins did not),
            # then every request is 429 with Retry-After (a refill takes a thousand seconds here)
            statuses = [(await http.post(served.url, json={}, headers=auth)).status_code for _ in range(6)]
            assert statuses == [400, 400, 400, 400, 429, 429]  # 400: the SDK answering the empty body
            flood = await http.post(served.url, json=INITIALIZE, headers=auth)
            assert flood.status_code == 429 and int(flood.headers["retry-after"]) >= 1
            assert flood.json()["error"] == "rate_limited" and token not in flood.text
            assert calls_logged(home) == before


async def test_idle_sessions_expire_and_a_session_belongs_to_its_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish_standard(home, tmp_path / "src")
    alice, mallory = create_token(home, "alice"), create_token(home, "mallory")
    with http_serve(home, "--session-idle-timeout", "0.5") as served:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(
                served.url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": f"Bearer {alice}"}
            )
            assert opened.status_code == 200
            session_id = opened.headers["mcp-session-id"]
            ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
            stolen = await http.post(
                served.url,
                json=ping,
                headers={**JSON_HEADERS, "Authorization": f"Bearer {mallory}", "mcp-session-id": session_id},
            )
            assert stolen.status_code == 404  # as if the session did not exist
            with anyio.fail_after(30):
                while True:
                    again = await http.post(
                        served.url,
                        json=ping,
                        headers={**JSON_HEADERS, "Authorization": f"Bearer {alice}", "mcp-session-id": session_id},
                    )
                    if again.status_code == 404:
                        break
                    await anyio.sleep(1.0)  # longer than the idle timeout: a request in flight resets it


async def test_serve_http_never_imports_the_indexer_tree_sitter_or_watchfiles(tmp_path: Path) -> None:
    home = tmp_path / "home"
    graph = publish_standard(home, tmp_path / "src")
    token = create_token(home, "alice")
    with http_serve(home, python_flags=("-X", "importtime")) as served:
        async with mcp_session(served.url, token) as session:
            for tool, arguments in sample_calls(graph).items():
                assert not (await session.call_tool(tool, arguments)).is_error, tool
    modules = imported_modules("".join(served.stderr))
    assert {"uvicorn", "mcp.server.streamable_http_manager", "server.http", "server.access"} <= modules
    assert sorted(m for m in modules if FORBIDDEN.match(m)) == []
