"""``kivgraph serve``: the click command. Heavy imports (the MCP SDK) happen only when it runs."""

from __future__ import annotations

import sys

import click


@click.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file that index_project registers repositories in "
    "(default: $KIVGRAPH_HOME/kivgraph.toml or ~/.config/kivgraph/kivgraph.toml).",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="State directory holding the generations and logs (default: $KIVGRAPH_HOME/state or ~/.local/state/kivgraph).",
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(min=0.01, max=3600.0),
    default=1.0,
    hidden=True,
    help="Seconds between two looks at CURRENT.",
)
@click.option(
    "--no-verify-digest", is_flag=True, hidden=True, help="Skip the background digest check of each generation served."
)
@click.option(
    "--verify-delay",
    type=click.FloatRange(min=0.0, max=3600.0),
    default=10.0,
    hidden=True,
    help="Seconds after a start or swap before the background digest check.",
)
def serve(
    config_path: str | None, state_dir: str | None, poll_interval: float, no_verify_digest: bool, verify_delay: float
) -> None:
    """Run the MCP server over stdio on the newest published generation.

    An MCP client (Claude Code, Cursor, Codex, ...) starts this command and
    talks to it on stdin/stdout; `kivgraph mcp install` writes that client
    configuration. The server only reads: it maps published generations
    read-only and never writes anything but its logs (stderr and
    STATE/logs/serve.jsonl).

    \b
    With no published generation it starts anyway and offers only
    index_project; the query tools appear (tools/list_changed) as soon as a
    generation is published, by index_project or by `kivgraph index` run
    elsewhere. A newer generation is picked up without a restart.

    \b
    Exit codes: 0 when the client closes the connection; 1 on a startup
    failure (unreadable state directory, bad option).
    """
    # The SDK's HTTP transports import uvicorn, whose reloader imports watchfiles whenever it is installed
    # (the indexer installs it). Serve speaks stdio only and never loads watchfiles
    # (docs/budgets.md §2.10): keep both out of this process (sse_starlette copes with an absent
    # uvicorn); it also shortens the start.
    for blocked in ("uvicorn", "watchfiles"):
        sys.modules.setdefault(blocked, None)  # type: ignore[assignment]
    import os

    if not os.environ.get("KIVGRAPH_SERVE_WHOLE_SDK"):  # the benchmark's comparison switch
        from server import lean_sdk

        lean_sdk.install()  # the stdio server without the SDK's client and HTTP transports (server/lean_sdk.py)
    from snapshot_format.layout import resolve_layout

    layout = resolve_layout(config_path, state_dir)
    from server.logs import setup_logging

    setup_logging(layout.log_dir)
    from server.main import run_stdio

    run_stdio(layout, poll_interval=poll_interval, verify_digest=not no_verify_digest, verify_delay=verify_delay)
