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
@click.option(
    "--http",
    "http_address",
    metavar="HOST:PORT",
    default=None,
    help="Serve a team over streamable HTTP at http://HOST:PORT/mcp instead of stdio "
    "(host 127.0.0.1 when only :PORT is given; port 0 picks a free one). Every request needs a token "
    "(kivgraph token create).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="With --http: a Host (and Origin) name the server answers to besides 127.0.0.1, localhost and "
    "[::1] (repeatable; the name clients or the reverse proxy use).",
)
@click.option(
    "--rate-limit",
    type=click.FloatRange(min=0.0),
    default=20.0,
    show_default=True,
    help="With --http: requests a second one token may make, sustained (0: no limit).",
)
@click.option(
    "--burst",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="With --http: requests one token may make at once before the rate applies.",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1024),
    default=4 << 20,
    show_default=True,
    help="With --http: the largest request body accepted (413 beyond).",
)
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(min=0.1),
    default=1800.0,
    show_default=True,
    help="With --http: seconds after which a session with no request in flight is closed.",
)
def serve(
    config_path: str | None,
    state_dir: str | None,
    poll_interval: float,
    no_verify_digest: bool,
    verify_delay: float,
    http_address: str | None,
    allowed_hosts: tuple[str, ...],
    rate_limit: float,
    burst: int,
    max_body_bytes: int,
    session_idle_timeout: float,
) -> None:
    """Run the MCP server on the newest published generation: over stdio, or over HTTP for a team.

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
    With --http HOST:PORT it serves many sessions in one process over the
    MCP streamable HTTP transport at /mcp: every request needs an
    Authorization: Bearer token (kivgraph token create), a token limited to
    some repositories sees only those, and Host/Origin, body size and a
    per-token rate are checked first. It then also writes
    STATE/logs/audit.jsonl (token use, index_project calls). TLS belongs to
    a reverse proxy in front of it (README, "Serving a team").

    \b
    Exit codes: 0 when the client closes the connection (stdio) or on
    SIGINT/SIGTERM (HTTP); 1 on a startup failure (unreadable state
    directory, an address it cannot listen on); 2 on a bad option.
    """
    # uvicorn's reloader imports watchfiles whenever it is installed (the indexer installs it); serve never
    # loads watchfiles (docs/budgets.md §2.10). Over stdio uvicorn itself stays out too (sse_starlette copes
    # with an absent uvicorn), which also shortens the start; --http runs on it.
    # (uvicorn's own watchfiles reloader is blocked too, so not even an import of watchfiles is attempted.)
    http_blocked = ("watchfiles", "uvicorn.supervisors.watchfilesreload")
    for blocked in http_blocked if http_address else ("uvicorn", "watchfiles"):
        sys.modules.setdefault(blocked, None)  # type: ignore[assignment]
    import os

    if http_address:
        _serve_http(
            config_path,
            state_dir,
            http_address,
            allowed_hosts,
            rate_limit,
            burst,
            max_body_bytes,
            session_idle_timeout,
            poll_interval,
            not no_verify_digest,
            verify_delay,
        )
        return
    if allowed_hosts:
        raise click.UsageError("--allowed-host applies to --http only")
    if not os.environ.get("KIVGRAPH_SERVE_WHOLE_SDK"):  # the benchmark's comparison switch
        from server import lean_sdk

        lean_sdk.install()  # the stdio server without the SDK's client and HTTP transports (server/lean_sdk.py)
    from snapshot_format.layout import resolve_layout

    layout = resolve_layout(config_path, state_dir)
    from server.logs import setup_logging

    setup_logging(layout.log_dir)
    from server.main import run_stdio

    run_stdio(layout, poll_interval=poll_interval, verify_digest=not no_verify_digest, verify_delay=verify_delay)


def _serve_http(
    config_path: str | None,
    state_dir: str | None,
    address: str,
    allowed_hosts: tuple[str, ...],
    rate: float,
    burst: int,
    max_body_bytes: int,
    idle: float,
    poll_interval: float,
    verify_digest: bool,
    verify_delay: float,
) -> None:
    from server.http import HostRules, HttpAddressError, HttpOptions, parse_address

    try:
        host, port = parse_address(address)
        HostRules(allowed_hosts)
    except HttpAddressError as exc:
        raise click.BadParameter(str(exc)) from None
    from snapshot_format.layout import resolve_layout

    layout = resolve_layout(config_path, state_dir)
    from server.logs import setup_logging

    setup_logging(layout.log_dir)
    from server.app import ServeOptions
    from server.http import run_http

    options = HttpOptions(
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        max_body_bytes=max_body_bytes,
        rate=rate,
        burst=burst,
        session_idle_seconds=idle,
    )
    serve = ServeOptions(poll_interval=poll_interval, verify_digest=verify_digest, verify_delay=verify_delay)
    try:
        run_http(layout, options, serve)
    except HttpAddressError as exc:
        raise click.ClickException(str(exc)) from None
