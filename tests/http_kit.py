"""A real `kivgraph serve --http` child process, and the SDK's own streamable HTTP client talking to it."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession, MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph

WAIT = 60.0  # seconds: the bound on waiting for the server to listen
_LISTENING = re.compile(r"listening on (http://\S+);")


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)


@contextmanager
def http_serve(home: Path, *extra: str, python_flags: tuple[str, ...] = ()) -> Iterator[Served]:
    """`kivgraph serve --http 127.0.0.1:0` on ``home``; yields once it listens, stops it (SIGTERM) after."""
    process = subprocess.Popen(
        [
            sys.executable,
            *python_flags,
            "-m",
            "kivgraph_cli",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--poll-interval",
            "0.1",
            "--no-verify-digest",
            *extra,
        ],
        env=kivgraph_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    served = Served("", process)

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            served.stderr.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while not served.url:
            line = lines.get(timeout=WAIT)
            if line is None:
                raise AssertionError("kivgraph serve --http exited: " + "".join(served.stderr))
            match = _LISTENING.search(line)
            if match:
                served.url = match.group(1)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
        reader.join(timeout=20)
        if process.stderr is not None:
            process.stderr.close()


def create_token(home: Path, name: str, *args: str) -> str:
    """A token made by the real CLI: the last line of its stdout."""
    done = run_kivgraph(home, "token", "create", "--name", name, *args, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@asynccontextmanager
async def mcp_session(
    url: str, token: str | None, on_message: MessageHandlerFnT | None = None, **headers: str
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession over streamable HTTP, sending ``Authorization: Bearer token``."""
    sent = dict(headers)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with (
        httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
