"""The MCP SDK's own streamable HTTP server with one empty tool: the reference point of benchmarks/bench_http.py.

What the SDK's documentation would have one write: the low-level server, ``streamable_http_app()`` (its
session manager, its Host/Origin checks for 127.0.0.1), run by uvicorn, with the empty tool of
benchmarks/bare_sdk_server.py (``ping`` answers ``pong``). It prints ``listening on URL;`` to stderr once its socket listens.

    python -m benchmarks.bare_sdk_http_server
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server

from benchmarks.bare_sdk_server import call_tool, list_tools


async def main() -> None:
    server: Server[Any] = Server("bare-http", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host="127.0.0.1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp;", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)
