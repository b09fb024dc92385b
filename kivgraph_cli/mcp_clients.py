"""`kivgraph mcp install|status|remove`: register kivgraph serve in MCP client configurations.

Two forms: the stdio entry (the client starts `kivgraph serve`), or with ``--url URL --token-env VAR`` the
HTTP entry of a team's `kivgraph serve --http`, whose bearer token the client reads from the environment
variable VAR when it connects (the token itself is never written): Claude Code
``{"type": "http", "url", "headers": {"Authorization": "Bearer ${VAR}"}}``, Cursor the same with
``${env:VAR}`` and no type, Codex ``url`` and ``bearer_token_env_var``. Claude Desktop takes remote servers
only through its own settings, so it has no HTTP form here.

Writes are atomic (temp file, fsync, rename, mode 0600) and a ``*.kivgraph.bak``
backup is made before any replacement or removal (an existing backup is
kept). Symlinked destinations are refused. Only the entry named ``kivgraph``
is ever touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from snapshot_format.atomic import write_atomically

ENTRY = "kivgraph"


@dataclass(frozen=True)
class Target:
    name: str
    fmt: str  # "json" | "toml"
    key: str  # top-level table holding servers


TARGETS = {
    "claude-code": Target("claude-code", "json", "mcpServers"),
    "cursor": Target("cursor", "json", "mcpServers"),
    "claude-desktop": Target("claude-desktop", "json", "mcpServers"),
    "codex": Target("codex", "toml", "mcp_servers"),
}


def config_path(target: str, scope: str, home: Path, cwd: Path) -> Path:
    """Where a client keeps its MCP server list for the given scope."""
    if target == "claude-code":
        return cwd / ".mcp.json" if scope == "project" else home / ".claude.json"
    if target == "cursor":
        return cwd / ".cursor" / "mcp.json" if scope == "project" else home / ".cursor" / "mcp.json"
    if target == "claude-desktop":
        if scope == "project":
            raise click.UsageError("claude-desktop has no project scope; use --scope user")
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        return home / ".config" / "Claude" / "claude_desktop_config.json"
    if target == "codex":
        return cwd / ".codex" / "config.toml" if scope == "project" else home / ".codex" / "config.toml"
    raise click.UsageError(f"unknown target {target!r}")


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HTTP_KEYS = ("type", "url", "headers", "bearer_token_env_var")


def http_entry(target: str, url: str, token_env: str) -> dict[str, Any]:
    """The client's entry for a kivgraph serve --http at ``url``, its token read from ``token_env``."""
    if target == "claude-desktop":
        raise click.UsageError(
            "claude-desktop reads remote MCP servers only from its own settings (Connectors), not from its "
            "config file: add the URL there, or install the stdio form"
        )
    if not re.match(r"^https?://[^/\s]+(/\S*)?$", url):
        raise click.BadParameter(f"{url!r} is not an http:// or https:// URL", param_hint="--url")
    if not _ENV_NAME.match(token_env):
        raise click.BadParameter(f"{token_env!r} is not an environment variable name", param_hint="--token-env")
    if target == "codex":
        return {"url": url, "bearer_token_env_var": token_env}
    if target == "cursor":
        return {"url": url, "headers": {"Authorization": f"Bearer ${{env:{token_env}}}"}}
    return {"type": "http", "url": url, "headers": {"Authorization": f"Bearer ${{{token_env}}}"}}


def desired_entry() -> dict[str, Any]:
    """The server entry: the absolute kivgraph executable with `serve`, and KIVGRAPH_HOME when set."""
    exe = shutil.which("kivgraph") or str(Path(sys.executable).with_name("kivgraph"))
    entry: dict[str, Any] = {"command": str(Path(exe).absolute()), "args": ["serve"]}
    if os.environ.get("KIVGRAPH_HOME"):
        entry["env"] = {"KIVGRAPH_HOME": os.environ["KIVGRAPH_HOME"]}
    return entry


def _read(path: Path, fmt: str) -> tuple[dict[str, Any], str]:
    if path.is_symlink():
        raise click.ClickException(f"{path} is a symlink; refusing to write through it")
    if not path.exists():
        return {}, ""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text or "{}") if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise click.ClickException(f"{path}: cannot parse existing config: {exc}") from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path}: expected an object at the top level")
    return data, text


def _state(data: dict[str, Any], target: Target, want: dict[str, Any]) -> str:
    servers = data.get(target.key) or {}
    current = servers.get(ENTRY) if isinstance(servers, dict) else None
    if current is None:
        return "absent"
    compared = HTTP_KEYS if "url" in want else ("command", "args")
    same = {k: current.get(k) for k in compared} == {k: want.get(k) for k in compared}
    return "managed" if same else "incompatible"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(path.name + ".kivgraph.bak")
        if not backup.exists():
            shutil.copy2(path, backup)
    write_atomically(path, text.encode("utf-8"), mode=0o600)


_TOML_TABLE = re.compile(r"^\[mcp_servers\.kivgraph(\.[^\]]+)?\]\s*$")


def _toml_without_entry(text: str) -> str:
    out, skipping = [], False
    for line in text.splitlines():
        if _TOML_TABLE.match(line.strip()):
            skipping = True
            continue
        if skipping and line.strip().startswith("["):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out).rstrip() + ("\n" if out else "")


def _toml_entry(entry: dict[str, Any]) -> str:
    if "url" in entry:
        return "\n".join(["[mcp_servers.kivgraph]", *(f"{k} = {json.dumps(v)}" for k, v in entry.items())]) + "\n"
    lines = [
        "[mcp_servers.kivgraph]",
        f"command = {json.dumps(entry['command'])}",
        f"args = {json.dumps(entry['args'])}",
    ]
    if "env" in entry:
        lines += ["", "[mcp_servers.kivgraph.env]"] + [f"{k} = {json.dumps(v)}" for k, v in entry["env"].items()]
    return "\n".join(lines) + "\n"


def _render(target: Target, data: dict[str, Any], text: str, entry: dict[str, Any] | None) -> str:
    if target.fmt == "toml":
        base = _toml_without_entry(text)
        return base if entry is None else (base + ("\n" if base else "") + _toml_entry(entry))
    servers = dict(data.get(target.key) or {})
    if entry is None:
        servers.pop(ENTRY, None)
    else:
        servers[ENTRY] = entry
    data = {**data, target.key: servers}
    return json.dumps(data, indent=2) + "\n"


target_option = click.option(
    "--target", type=click.Choice(sorted(TARGETS)), required=True, help="MCP client to configure."
)
scope_option = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="User-wide config or the project's config in the current directory.",
)


url_option = click.option(
    "--url",
    default=None,
    metavar="URL",
    help="Install the HTTP form: the URL of a team's `kivgraph serve --http` (https://host/mcp); needs --token-env.",
)
token_env_option = click.option(
    "--token-env",
    default=None,
    metavar="VAR",
    help="With --url: the environment variable the client reads the bearer token from (never written to the file).",
)


def _wanted(target: str, url: str | None, token_env: str | None) -> dict[str, Any]:
    if (url is None) != (token_env is None):
        raise click.UsageError("--url and --token-env go together")
    return http_entry(target, url, token_env) if url is not None and token_env is not None else desired_entry()


@click.group()
def mcp() -> None:
    """Install, inspect or remove the kivgraph entry in an MCP client's configuration."""


@mcp.command()
@target_option
@scope_option
@url_option
@token_env_option
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--force", is_flag=True, help="Replace an existing kivgraph entry that differs.")
def install(target: str, scope: str, url: str | None, token_env: str | None, dry_run: bool, force: bool) -> None:
    """Add `kivgraph serve` (stdio), or a team's `kivgraph serve --http` (--url), to the client's MCP servers."""
    t = TARGETS[target]
    want = _wanted(target, url, token_env)
    path = config_path(target, scope, Path.home(), Path.cwd())
    data, text = _read(path, t.fmt)
    state = _state(data, t, want)
    if state == "managed":
        click.echo(f"{target}: managed ({path}); nothing to do")
        return
    if state == "incompatible" and not force:
        raise click.ClickException(f"{path}: a different kivgraph entry exists; pass --force to replace it")
    if dry_run:
        click.echo(f"{target}: would-install ({path})")
        return
    _write_atomically(path, _render(t, data, text, want))
    click.echo(f"{target}: installed ({path})")


@mcp.command()
@target_option
@scope_option
@url_option
@token_env_option
def status(target: str, scope: str, url: str | None, token_env: str | None) -> None:
    """Report absent, managed or incompatible (against the stdio form, or the HTTP form with --url), and the file."""
    t = TARGETS[target]
    want = _wanted(target, url, token_env)
    path = config_path(target, scope, Path.home(), Path.cwd())
    data, _text = _read(path, t.fmt)
    click.echo(f"{target}: {_state(data, t, want)} ({path})")


@mcp.command()
@target_option
@scope_option
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
def remove(target: str, scope: str, dry_run: bool) -> None:
    """Remove only kivgraph's entry from the client's config."""
    t = TARGETS[target]
    path = config_path(target, scope, Path.home(), Path.cwd())
    data, text = _read(path, t.fmt)
    if _state(data, t, desired_entry()) == "absent":
        click.echo(f"{target}: absent ({path}); nothing to do")
        return
    if dry_run:
        click.echo(f"{target}: would-remove ({path})")
        return
    _write_atomically(path, _render(t, data, text, None))
    click.echo(f"{target}: removed ({path})")
