"""Running the server over stdio."""

from __future__ import annotations

import logging
import sys
from typing import cast

import anyio
from mcp.server.stdio import stdio_server

from server.app import KivgraphApp, ServeOptions
from server.wire import ScreenedStdin
from snapshot_format.layout import StateLayout

log = logging.getLogger("kivgraph.serve")


def run_stdio(
    layout: StateLayout, *, poll_interval: float = 1.0, verify_digest: bool = True, verify_delay: float = 10.0
) -> None:
    """Serve one client on stdin/stdout until it closes the connection."""

    async def main() -> None:
        app = KivgraphApp(
            layout, ServeOptions(poll_interval=poll_interval, verify_digest=verify_digest, verify_delay=verify_delay)
        )
        log.info("serving %s from %s", app.holder.current_name or "no generation yet", layout.state_dir)
        try:
            # stdin goes through ScreenedStdin (every line answered, bounded memory); the SDK keeps stdout.
            stdin = ScreenedStdin(sys.stdin.buffer)
            async with stdio_server(stdin=cast("anyio.AsyncFile[str]", stdin)) as (read_stream, write_stream):
                stdin.attach(write_stream)
                await app.server.run(read_stream, write_stream, app.server.create_initialization_options())
        finally:
            app.holder.close()

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    log.info("client closed the connection; exiting")
