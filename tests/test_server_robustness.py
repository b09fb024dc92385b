"""No input makes a tool crash: arbitrary JSON for every argument gives an answer or a ToolError."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from server.errors import ALL_CODES, ToolError
from server.surface import READ_TOOL_SPECS, ToolSpec
from server.tools import READ_TOOLS
from snapshot_format.reader import Generation
from tests.server_fixtures import standard_graph

NASTY_STRINGS = [
    "",
    " ",
    "..",
    "../../etc/passwd",
    "/etc/passwd",
    "\x00",
    "*",
    "a" * 5000,
    "é\u202e",
    "pkg",
    "pkg.shapes.make_square",
    "alpha",
    "make_square",
    "AAAAAAAAAAAAAAAAAAAAAAAAAA",
    "C:\\x",
    "~",
    "caller_",
    "util.helper",
    "%s%n",
    "\n",
]


def _value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(9 if depth < 2 else 6)
    if choice == 0:
        return rng.choice(NASTY_STRINGS)
    if choice == 1:
        return rng.choice([0, -1, 1, 20, 21, 100, 101, 500, 501, 2**63, -(2**63), 1.5, float("inf")])
    if choice == 2:
        return rng.choice([True, False])
    if choice == 3:
        return None
    if choice == 4:
        return rng.choice(NASTY_STRINGS[:12])
    if choice == 5:
        return rng.choice(
            [
                "compact",
                "full",
                "files",
                "incoming",
                "outgoing",
                "detailed",
                "prefix",
                "substring",
                "EXACT_TYPECHECKED",
                "python",
            ]
        )
    if choice == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if choice == 7:
        return {
            k: _value(rng, depth + 1)
            for k in rng.sample(["qualified_name", "stable_key", "repository", "path", "name", "x"], rng.randrange(4))
        }
    return [{"qualified_name": rng.choice(NASTY_STRINGS)}]


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    graph = standard_graph(tmp_path_factory.mktemp("robust"))
    with Generation(graph.result.path) as generation:
        yield generation


@pytest.mark.parametrize("spec", READ_TOOL_SPECS, ids=lambda s: s.name)
def test_random_arguments_never_escape_as_anything_but_a_tool_error(spec: ToolSpec, gen: Generation) -> None:
    rng = random.Random(f"kivgraph-{spec.name}")
    properties = [*spec.input_schema["properties"], "unknown"]
    answered = refused = 0
    for _ in range(400):
        chosen = rng.sample(properties, rng.randrange(min(len(properties), 5) + 1))
        arguments = {name: _value(rng) for name in chosen}
        try:
            READ_TOOLS[spec.name](gen, arguments)
            answered += 1
        except ToolError as exc:
            assert exc.code in ALL_CODES
            refused += 1
    assert answered + refused == 400
    assert refused > 0  # the generator does reach the validators
