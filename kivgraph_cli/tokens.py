"""`kivgraph token create|list|revoke`: the bearer tokens of `kivgraph serve --http`.

The store (snapshot_format/tokens.py) holds salted hashes only; `create` prints the token once, alone on
the last line of stdout. `list` reads the last use of each token from the server's audit log
(STATE/logs/audit.jsonl), the one file the server writes besides its event log.
"""

from __future__ import annotations

import json

import click

from snapshot_format.layout import StateLayout, resolve_layout
from snapshot_format.tokens import (
    SCOPES,
    TokenStoreError,
    create_token,
    last_uses,
    read_store,
    revoke_token,
    tokens_path,
)

state_dir_option = click.option(
    "--state-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="State directory holding the token store (default: $KIVGRAPH_HOME/state or ~/.local/state/kivgraph).",
)


def _layout(state_dir: str | None) -> StateLayout:
    return resolve_layout(None, state_dir)


@click.group()
def token() -> None:
    """Create, list or revoke the bearer tokens of `kivgraph serve --http`.

    \b
    A read token answers the read tools; an index token may also call
    index_project. A token given --repository sees only those repositories
    (exact names, or a prefix ending in '*', such as 'rust:*'); any other
    repository is, for it, one that does not exist.
    """


@token.command()
@click.option("--name", required=True, help="Who the token is for (unique; shown in the audit log).")
@click.option(
    "--repository",
    "repositories",
    multiple=True,
    help="A repository the token may read (repeatable; default: every repository).",
)
@click.option("--scope", type=click.Choice(SCOPES), default="read", show_default=True, help="What it may do.")
@state_dir_option
def create(name: str, repositories: tuple[str, ...], scope: str, state_dir: str | None) -> None:
    """Create a token and print it once, alone on the last line."""
    path = tokens_path(_layout(state_dir))
    try:
        record, secret = create_token(path, name, scope, repositories)
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    seen = ", ".join(record.repositories) if record.repositories else "every repository"
    click.echo(f"token {record.name!r} created (scope {record.scope}; repositories: {seen}); store: {path}")
    click.echo("it is shown only now: keep it in a secret store or an environment variable")
    click.echo(secret)


@token.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of a table.")
@state_dir_option
def list_tokens(as_json: bool, state_dir: str | None) -> None:
    """Names, scopes, repositories, creation and last use; never a secret."""
    layout = _layout(state_dir)
    try:
        records = read_store(tokens_path(layout))
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    uses = last_uses(layout)
    rows = [
        {
            "name": r.name,
            "id": r.id,
            "scope": r.scope,
            "repositories": list(r.repositories) or None,
            "created_at": r.created_at,
            "last_used_at": uses.get(r.id),
        }
        for r in records
    ]
    if as_json:
        click.echo(json.dumps({"tokens": rows}, indent=2))
        return
    if not rows:
        click.echo("no tokens; create one with: kivgraph token create --name NAME")
        return
    click.echo(f"{'name':<24} {'scope':<6} {'created':<21} {'last used':<25} repositories")
    for row in rows:
        repos = ", ".join(row["repositories"] or ["(every repository)"])
        click.echo(
            f"{row['name']:<24} {row['scope']:<6} {row['created_at']:<21} {row['last_used_at'] or 'never':<25} {repos}"
        )


@token.command()
@click.argument("name")
@state_dir_option
def revoke(name: str, state_dir: str | None) -> None:
    """Revoke a token: the server refuses it from its next request on."""
    path = tokens_path(_layout(state_dir))
    try:
        record = revoke_token(path, name)
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"token {record.name!r} revoked")
