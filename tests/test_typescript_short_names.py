"""Qualified names as a TypeScript developer writes them: ``QueryClient.getQueryCache``, not only
``src.queryClient.QueryClient.getQueryCache``, in every selector; an ambiguous short form lists its candidates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from server.errors import AMBIGUOUS_SYMBOL, SYMBOL_NOT_FOUND, ToolError
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from tests.helpers import run_kivgraph, write_repo

FILES = {
    "src/queryClient.ts": "export class QueryClient {\n  getQueryCache(): number {\n    return 1;\n  }\n}\n",
    "src/legacy/queryClient.ts": "export class QueryClient {\n  getQueryCache(): number {\n    return 2;\n  }\n}\n",
    "src/subscribable.ts": "export class Subscribable {\n  subscribe(): void {}\n}\n\n"
    "export function watch(s: Subscribable): void {\n  s.subscribe();\n}\n",
    "src/tools.ts": "export namespace Tools {\n  export function run(): number {\n    return 1;\n  }\n}\n",
}


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    tmp = tmp_path_factory.mktemp("short")
    repo = write_repo(tmp / "app", FILES)
    home = tmp / "home"
    assert run_kivgraph(home, "init", str(repo), "--languages", "typescript").returncode == 0
    result = run_kivgraph(home, "index")
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as generation:
        yield generation


def call(gen: Generation, tool: str, **arguments: Any) -> Any:
    return READ_TOOLS[tool](gen, arguments)


def error(gen: Generation, tool: str, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[tool](gen, arguments)
    return caught.value


def test_the_form_a_developer_writes_names_the_same_symbol(gen: Generation) -> None:
    full = call(gen, "get_symbol", qualified_name="src.subscribable.Subscribable.subscribe")["results"]
    short = call(gen, "get_symbol", qualified_name="Subscribable.subscribe")["results"]
    assert short["stable_key"] == full["stable_key"]
    assert call(gen, "get_symbol", qualified_name="Tools.run")["results"]["qualified_name"] == "src.tools.Tools.run"
    refs = call(gen, "find_references", qualified_name="Subscribable.subscribe", view="full")
    assert [r["qualified_name"] for r in refs["results"]["references"]] == ["src.subscribable.watch"]
    source = call(gen, "get_source", symbols=[{"qualified_name": "Subscribable.subscribe"}])
    assert "subscribe(): void {}" in str(source)


def test_an_ambiguous_short_form_lists_the_candidates_and_narrowing_settles_it(gen: Generation) -> None:
    err = error(gen, "get_symbol", qualified_name="QueryClient.getQueryCache")
    assert err.code == AMBIGUOUS_SYMBOL
    assert "app src/legacy/queryClient.ts:2-4 src.legacy.queryClient.QueryClient.getQueryCache" in err.message
    assert "app src/queryClient.ts:2-4 src.queryClient.QueryClient.getQueryCache" in err.message
    one = call(
        gen, "get_symbol", qualified_name="QueryClient.getQueryCache", repository="app", path="src/queryClient.ts"
    )
    assert one["results"]["qualified_name"] == "src.queryClient.QueryClient.getQueryCache"
    found = call(gen, "find_symbol", name="QueryClient.getQueryCache", mode="qualified_exact", view="full")
    assert sorted(r["file_path"] for r in found["results"]) == ["src/legacy/queryClient.ts", "src/queryClient.ts"]


def test_a_unique_dotted_tail_names_its_symbol_and_a_name_nobody_declares_is_not_found(gen: Generation) -> None:
    # every language's selector accepts a unique dotted tail of the stored name (server/name_forms.py)
    one = call(gen, "get_symbol", qualified_name="legacy.queryClient.QueryClient.getQueryCache")["results"]
    assert one["qualified_name"] == "src.legacy.queryClient.QueryClient.getQueryCache"
    both = error(gen, "get_symbol", qualified_name="queryClient.QueryClient.getQueryCache")  # a tail of both
    assert both.code == AMBIGUOUS_SYMBOL
    assert error(gen, "get_symbol", qualified_name="Subscribable.unsubscribeAll").code == SYMBOL_NOT_FOUND
