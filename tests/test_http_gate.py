"""The pieces in front of the HTTP transport: addresses, Host and Origin rules, the rate limit, the token store
and its CLI, and (in process, on a real socket) that a client that leaves leaves nothing behind."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest

from server.app import ServeOptions
from server.http import (
    HostRules,
    HttpAddressError,
    HttpOptions,
    RateLimiter,
    RunningHttp,
    TokenBook,
    parse_address,
    serve_http,
)
from snapshot_format.layout import StateLayout
from snapshot_format.tokens import TokenStoreError, create_token, read_store, revoke_token, tokens_path
from tests.helpers import run_kivgraph
from tests.http_kit import mcp_session
from tests.server_fixtures import standard_graph


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        (":8765", ("127.0.0.1", 8765)),
        ("8765", ("127.0.0.1", 8765)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        ("[::1]:9000", ("::1", 9000)),
    ],
)
def test_an_address_is_host_and_port_with_a_loopback_default(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["localhost", "host:port", "1.2.3.4:70000", "[::1]9000", ""])
def test_a_bad_address_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(HttpAddressError, match="--http"):
        parse_address(text)


def test_only_loopback_hosts_are_answered_unless_more_are_allowed() -> None:
    rules = HostRules(())
    assert rules.host_ok("127.0.0.1:8765") and rules.host_ok("localhost:1") and rules.host_ok("[::1]:2")
    assert not rules.host_ok("attacker.example") and not rules.host_ok("attacker.example:8765")
    assert not rules.host_ok(None) and not rules.host_ok("")
    assert rules.origin_ok("http://localhost:3000") and not rules.origin_ok("http://attacker.example")
    assert not rules.origin_ok("null") and not rules.origin_ok("file://")
    team = HostRules(("kivgraph.example.com", "proxy.internal:8443"))
    assert team.host_ok("kivgraph.example.com") and team.host_ok("kivgraph.example.com:443")
    assert team.host_ok("proxy.internal:8443") and not team.host_ok("proxy.internal:9999")
    assert team.origin_ok("https://kivgraph.example.com")
    with pytest.raises(HttpAddressError, match="--allowed-host"):
        HostRules(("http://x/",))


def test_the_rate_limit_lets_a_burst_through_then_says_when_to_retry() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    assert [limiter.wait("t", now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.wait("t", now=100.0) == pytest.approx(0.5)
    assert limiter.wait("other", now=100.0) == 0.0  # per token
    assert limiter.wait("t", now=100.5) == 0.0  # one refilled after half a second
    assert RateLimiter(rate=0, burst=1).wait("t") == 0.0  # 0: no limit


def test_the_store_keeps_a_salted_hash_never_the_token(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    record, token = create_token(path, "alice", "index", ("beta", "rust:*"))
    assert token.startswith("kvg_") and token not in path.read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert read_store(path) == (record,)
    book = TokenBook(path)
    assert book.lookup(token) == record
    assert book.lookup(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert record.sees("beta") and record.sees("rust:serde") and not record.sees("alpha")
    with pytest.raises(TokenStoreError, match="exists"):
        create_token(path, "alice", "read")
    revoke_token(path, "alice")
    assert book.lookup(token) is None  # the server reads the store again when it changes
    with pytest.raises(TokenStoreError, match="no token named"):
        revoke_token(path, "alice")


@pytest.mark.parametrize(
    ("name", "scope", "repositories", "message"),
    [
        ("bad name", "read", (), "token name"),
        ("ok", "admin", (), "scope"),
        ("ok", "read", ("a*b",), "may only end"),
        ("ok", "read", ("../x",), "invalid"),
    ],
)
def test_bad_token_fields_are_refused_naming_the_field(
    tmp_path: Path, name: str, scope: str, repositories: tuple[str, ...], message: str
) -> None:
    with pytest.raises(TokenStoreError, match=message):
        create_token(tmp_path / "tokens.json", name, scope, repositories)
    assert not (tmp_path / "tokens.json").exists()


def test_a_damaged_store_refuses_every_token_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    _record, token = create_token(path, "alice", "read")
    path.write_text("{not json")
    with pytest.raises(TokenStoreError, match=str(path)):
        read_store(path)
    assert TokenBook(path).lookup(token) is None


@pytest.mark.e2e
def test_the_token_commands_print_the_token_once_on_the_last_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = run_kivgraph(home, "token", "create", "--name", "alice", "--repository", "beta", timeout=60)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    assert token.startswith("kvg_") and made.stdout.count(token) == 1
    listed = run_kivgraph(home, "token", "list", timeout=60)
    assert "alice" in listed.stdout and "beta" in listed.stdout and "never" in listed.stdout
    assert token not in listed.stdout and token[-20:] not in listed.stdout
    again = run_kivgraph(home, "token", "create", "--name", "alice", timeout=60)
    assert again.returncode == 1 and "exists" in again.stderr
    gone = run_kivgraph(home, "token", "revoke", "alice", timeout=60)
    assert gone.returncode == 0 and json.loads(run_kivgraph(home, "token", "list", "--json").stdout) == {"tokens": []}


@pytest.mark.anyio
async def test_sessions_that_close_or_expire_leave_nothing_behind(tmp_path: Path) -> None:
    graph = standard_graph(tmp_path)
    _record, token = create_token(tokens_path(graph.layout), "alice", "read")
    layout = StateLayout(config_path=graph.layout.config_path, state_dir=graph.layout.state_dir)
    running: list[RunningHttp] = []
    ready = anyio.Event()

    def on_ready(server: RunningHttp) -> None:
        running.append(server)
        ready.set()

    http = HttpOptions(port=0, session_idle_seconds=0.5)
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_http, layout, http, ServeOptions(poll_interval=0.05, verify_digest=False), on_ready)
        with anyio.fail_after(30):
            await ready.wait()
        server = running[0]
        for _ in range(5):
            async with mcp_session(server.url, token) as session:
                assert not (await session.call_tool("graph_status", {})).is_error
                assert server.app.connected_clients() >= 1
        with anyio.fail_after(30):  # each client's DELETE (or the idle timeout) ends its connection
            while server.app.connected_clients():
                await anyio.sleep(0.1)
        server.stop()
