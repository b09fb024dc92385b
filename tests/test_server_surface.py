"""The resident surface: budgets, digit-free text, no outputSchema, schemas that match the validators."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from server.errors import ToolError
from server.surface import ALL_TOOL_SPECS, INSTRUCTIONS_EMPTY, INSTRUCTIONS_READY, READ_TOOL_SPECS, ToolSpec
from server.tools import READ_TOOLS
from snapshot_format.reader import Generation
from tests.server_fixtures import standard_graph


def test_descriptions_and_instructions_contain_no_digit() -> None:
    for spec in ALL_TOOL_SPECS:
        assert not re.search(r"\d", spec.description), spec.name
    assert not re.search(r"\d", INSTRUCTIONS_READY)
    assert not re.search(r"\d", INSTRUCTIONS_EMPTY)


def test_descriptions_are_one_to_three_sentences_and_say_where_the_tool_loses() -> None:
    losing_words = ("cheaper", "cannot", "only", "redundant", "takes minutes")
    for spec in ALL_TOOL_SPECS:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", spec.description.strip()) if s]
        assert 1 <= len(sentences) <= 3, spec.name
        assert any(word in spec.description for word in losing_words), spec.name


def test_the_schema_surface_and_the_resident_text_stay_within_budget() -> None:
    schemas = sum(len(json.dumps(spec.input_schema)) for spec in ALL_TOOL_SPECS)
    assert schemas <= 8000
    resident = sum(len(spec.name.encode()) + len(spec.description.encode()) for spec in ALL_TOOL_SPECS)
    assert resident <= 1900


def test_instructions_fit_in_two_kilobytes_and_lead_with_the_decisive_sentence() -> None:
    assert len(INSTRUCTIONS_READY.encode()) <= 2048
    assert len(INSTRUCTIONS_EMPTY.encode()) <= 2048
    assert "find_references" in INSTRUCTIONS_READY.split("\n")[0]
    assert "index_project" in INSTRUCTIONS_EMPTY.split("\n")[0]


def _properties(schema: dict[str, object]) -> list[dict[str, object]]:
    out = []
    stack = [schema]
    while stack:
        node = stack.pop()
        out.append(node)
        for value in node.values():
            if isinstance(value, dict):
                stack.append(value)
    return out


def test_input_schemas_carry_no_descriptions_and_no_output_schema_exists() -> None:
    for spec in ALL_TOOL_SPECS:
        assert spec.input_schema["type"] == "object"
        assert spec.input_schema["additionalProperties"] is False
        for node in _properties(spec.input_schema):
            assert "description" not in node, spec.name
        assert not hasattr(spec, "output_schema")


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    graph = standard_graph(tmp_path_factory.mktemp("surface"))
    with Generation(graph.result.path) as generation:
        yield generation


@pytest.mark.parametrize("spec", READ_TOOL_SPECS, ids=lambda s: s.name)
def test_every_schema_property_is_an_argument_the_tool_accepts(spec: ToolSpec, gen: Generation) -> None:
    properties = spec.input_schema["properties"]
    for name in properties:
        with pytest.raises(ToolError) as caught:
            READ_TOOLS[spec.name](gen, {name: {"not": "a valid value"}})
        assert not caught.value.message.startswith("unknown argument"), (spec.name, name)
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[spec.name](gen, {"definitely_not_an_argument": 1})
    assert caught.value.message.startswith("unknown argument definitely_not_an_argument")


def test_the_claude_hints_mark_the_tools_that_must_always_load() -> None:
    always = sorted(spec.name for spec in ALL_TOOL_SPECS if spec.always_load)
    assert always == ["find_references", "find_symbol", "get_blast_radius", "get_source"]
    large = sorted(spec.name for spec in ALL_TOOL_SPECS if spec.meta.get("anthropic/maxResultSizeChars") == 120000)
    assert large == ["get_blast_radius", "trace_dependencies"]


