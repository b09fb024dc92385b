"""The main job on a real example: index the `click` sources, then ask a running `kivgraph serve`.

`make demo` runs this. It fetches the pinned click sdist from PyPI into the
cache (once), registers and indexes it in ./.kivgraph-demo, prints
`kivgraph status`, then spawns `kivgraph serve` over stdio as an MCP client
would and asks it the questions an agent asks, printing each answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.corpora import fetch_pypi_sdist

REPO_ROOT = Path(__file__).resolve().parents[1]
HOME = REPO_ROOT / ".kivgraph-demo"
MAX_LINES = 25

QUESTIONS: list[tuple[str, str, dict[str, Any]]] = [
    ("What does the graph hold?", "graph_status", {}),
    ("Where is `Context` declared?", "find_symbol", {"name": "Context"}),
    ("Who calls `invoke`? (a common name: the answer lists the candidates)", "find_references", {"name": "invoke"}),
    (
        "Who calls Context.invoke?",
        "find_references",
        {"qualified_name": "click.core.Context.invoke", "repository": "click"},
    ),
    (
        "Which files reference `echo`?",
        "find_references",
        {"qualified_name": "click.utils.echo", "repository": "click", "view": "files"},
    ),
    (
        "What does BaseCommand.main call?",
        "find_references",
        {"qualified_name": "click.core.BaseCommand.main", "repository": "click", "direction": "outgoing"},
    ),
    (
        "What is declared in exceptions.py?",
        "get_file_outline",
        {"repository": "click", "path": "src/click/exceptions.py"},
    ),
    (
        "Show me the code of `echo`.",
        "get_source",
        {"symbols": [{"qualified_name": "click.utils.echo", "repository": "click"}]},
    ),
    (
        "What breaks if I change make_default_short_help? (two hops)",
        "get_blast_radius",
        {"qualified_name": "click.utils.make_default_short_help", "repository": "click", "depth": 2},
    ),
    (
        "I don't know the name: where are shell completion scripts generated?",
        "find_by_intent",
        {"query": "where are shell completion scripts generated"},
    ),
]


def _kivgraph(*args: str) -> None:
    env = {**os.environ, "KIVGRAPH_HOME": str(HOME)}
    subprocess.run([sys.executable, "-m", "kivgraph_cli", *args], cwd=REPO_ROOT, env=env, check=True)


def _show(text: str) -> None:
    lines = text.splitlines()
    if len(lines) == 1 and text.startswith("{"):
        try:
            lines = json.dumps(json.loads(text), indent=1).splitlines()
        except json.JSONDecodeError:
            pass
    for line in lines[:MAX_LINES]:
        print(f"    {line}")
    if len(lines) > MAX_LINES:
        print(f"    … {len(lines) - MAX_LINES} more lines")


async def ask_server() -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kivgraph_cli", "serve"],
        env={"KIVGRAPH_HOME": str(HOME)},
        cwd=str(REPO_ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        print(f"\nserver {init.server_info.name}: {len(tools.tools)} tools: {', '.join(t.name for t in tools.tools)}")
        for question, tool, arguments in QUESTIONS:
            print(f"\n? {question}\n  {tool} {json.dumps(arguments)}")
            result = await session.call_tool(tool, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            _show(("ERROR " if result.is_error else "") + text)


def main() -> int:
    click_src = fetch_pypi_sdist("click")
    print(f"corpus: click sources in {click_src}")
    _kivgraph("init", "--force", "--repository", f"click={click_src}", "--languages", "python")
    _kivgraph("index")
    _kivgraph("status")
    asyncio.run(ask_server())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
