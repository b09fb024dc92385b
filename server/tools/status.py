"""graph_status and list_repositories: the index itself."""

from __future__ import annotations

from typing import Any

from server.args import Args
from server.cursor import scope
from server.declarations import GraphStatus, ListRepositories
from server.envelope import Coverage
from server.queries.repositories import freshness_row
from server.queries.status import graph_status as status_of
from server.tools.common import read_paging, wrap
from snapshot_format.reader import Generation


def graph_status(gen: Generation, arguments: object) -> dict[str, Any]:
    """The published generation: identity, counts, breakdowns, per-repository freshness."""
    Args(arguments, GraphStatus)
    return wrap(gen, compact=False, total=1, returned=1, next_cursor=None, coverage=Coverage(), results=status_of(gen))


def list_repositories(gen: Generation, arguments: object) -> dict[str, Any]:
    """Indexed repositories in registry order, with indexed versus live HEAD."""
    args = Args(arguments, ListRepositories)
    paging = read_paging(args, gen)
    repos = gen.repositories()

    def answer(start: int, end: int, next_cursor: str | None) -> dict[str, Any]:
        rows = [freshness_row(repo) for repo in repos[start:end]]
        return wrap(
            gen,
            compact=False,
            total=len(repos),
            returned=len(rows),
            next_cursor=next_cursor,
            coverage=Coverage(),
            results=rows,
        )

    return paging.fit(
        gen,
        len(repos),
        scope("list_repositories", "registry-order-v1"),
        answer,
        tool="list_repositories",
        narrow_with="a smaller limit",
    )
