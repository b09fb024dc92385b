"""A bare MCP SDK server over stdio with one tool: the reference point of benchmarks/bench_startup.py.

It is what the SDK's own documentation would have one write (the low-level server, the stdio transport,
the SDK imported as usual), and answers ``ping`` with ``pong``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_PING = types.Tool(name="ping", description="Answers pong.", input_schema={"type": "object", "properties": {}})


async def list_tools(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_PING])


async def call_tool(_ctx: ServerRequestContext[Any], _params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="pong")])


async def main() -> None:
    server: Server[Any] = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
