"""The `kivgraph` command: a dispatcher that imports only the side a command needs.

`kivgraph serve` must not load the indexer (nor tree-sitter, nor watchfiles),
so commands are resolved lazily by name: serve lives in server/, everything
that writes lives in indexer/.
"""

from __future__ import annotations

import importlib
import sys

import click

# name -> (module, attribute, one-line help shown by `kivgraph --help` without importing anything)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("indexer.cli", "init", "Register repositories in kivgraph.toml."),
    "index": ("indexer.cli", "index", "Index registered repositories and publish a new generation."),
    "publish": ("indexer.cli", "publish", "Link repository bundles built in CI and publish one generation."),
    "serve": ("server.cli", "serve", "Run the MCP server (stdio, or --http for a team) on the newest generation."),
    "status": ("indexer.cli", "status", "Show what the newest generation holds."),
    "doctor": ("indexer.cli", "doctor", "Check installation, analyzers, configuration and state."),
    "version": ("indexer.cli", "version", "Print the kivgraph version and format versions."),
    "mcp": ("kivgraph_cli.mcp_clients", "mcp", "Install, inspect or remove kivgraph in MCP client configs."),
    "token": ("kivgraph_cli.tokens", "token", "Create, list or revoke the bearer tokens of serve --http."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        command = getattr(module, entry[1])
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry[0]}.{entry[1]} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry[2]) for name, entry in COMMANDS.items()])


EPILOG = """\b
Exit codes: 0 success; 1 runtime failure (bad config, failed index,
a failed doctor check); 2 usage error; 3 another indexer holds the lock.

\b
Where things live: with KIVGRAPH_HOME set, everything is under it
(kivgraph.toml and state/). Otherwise ~/.config/kivgraph/kivgraph.toml
and ~/.local/state/kivgraph/. --config and --state-dir override both.
"""


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """kivgraph: a code graph for coding agents.

    Index repositories with `kivgraph index`, then let an agent query the graph
    through `kivgraph serve` (MCP over stdio).
    """


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="kivgraph")


if __name__ == "__main__":
    sys.exit(main())
