"""The resident surface: budgets, digit-free text, no outputSchema, schemas that match the validators."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from benchmarks import tokenizer
from server.app import tools_list_json
from server.errors import ToolError
from server.surface import (
    ALL_TOOL_SPECS,
    INSTRUCTIONS_EMPTY,
    INSTRUCTIONS_READY,
    READ_TOOL_SPECS,
    SCHEMA_TOKEN_BUDGET,
    ToolSpec,
    read_tool_specs,
)
from server.tools import READ_TOOLS
from server.tools.common import served_languages
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.reader import Generation
from tests.server_fixtures import standard_graph


def served_languages_all() -> tuple[str, ...]:
    """The largest language enum a generation can bring (every language served)."""
    return LANGUAGES


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


def test_each_description_says_what_it_answers_when_to_use_it_and_what_instead() -> None:
    """What it answers (the first sentence), when to use it (``Use it …``), and when another tool or plain reading
    serves better: another tool named, or what is cheaper, redundant or slow."""
    names = {spec.name for spec in ALL_TOOL_SPECS}
    named_by_others: set[str] = set()
    for spec in ALL_TOOL_SPECS:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", spec.description.strip()) if s]
        assert not sentences[0].startswith("Use it"), spec.name  # it opens with what it answers
        assert "Use it" in spec.description, spec.name
        others = {n for n in names - {spec.name} if re.search(rf"\b{n}\b", spec.description)}
        named_by_others |= others
        assert others or re.search(r"cheaper|redundant|takes minutes", spec.description), spec.name
    # the tools an agent is sent to instead are the ones that answer the neighbouring questions
    assert {"find_references", "get_blast_radius", "find_symbol", "graph_status"} <= named_by_others


def test_the_resident_text_stays_within_budget() -> None:
    resident = sum(len(spec.name.encode()) + len(spec.description.encode()) for spec in ALL_TOOL_SPECS)
    assert resident <= 1900


def test_the_whole_tool_list_stays_within_its_token_budget() -> None:
    """tools/list as the client receives it, counted with o200k_base (the figure is in the README)."""
    text = tools_list_json(served_languages_all())
    tokens = tokenizer.count(text)
    assert tokens <= SCHEMA_TOKEN_BUDGET, f"tools/list is {tokens} o200k tokens, over {SCHEMA_TOKEN_BUDGET}"


def test_instructions_fit_in_two_kilobytes_and_lead_with_the_decisive_sentence() -> None:
    assert len(INSTRUCTIONS_READY.encode()) <= 2048
    assert len(INSTRUCTIONS_EMPTY.encode()) <= 2048
    assert "find_references" in INSTRUCTIONS_READY.split("\n")[0]
    assert "index_project" in INSTRUCTIONS_EMPTY.split("\n")[0]


def _properties(schema: dict[str, object]) -> list[tuple[str, dict[str, object]]]:
    """(name, schema) of every property, nested ones (get_source's entries, index_project's projects) too."""
    out: list[tuple[str, dict[str, object]]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        for name, prop in dict(node.get("properties", {})).items():  # type: ignore[arg-type]
            out.append((name, prop))
            items = prop.get("items")
            if isinstance(items, dict) and "properties" in items:
                stack.append(items)
    return out


def test_every_parameter_is_described_without_digits_and_no_output_schema_exists() -> None:
    for spec in ALL_TOOL_SPECS:
        assert spec.input_schema["type"] == "object"
        assert spec.input_schema["additionalProperties"] is False
        for name, prop in _properties(spec.input_schema):
            description = prop.get("description")
            assert isinstance(description, str) and description, (spec.name, name)
            assert not re.search(r"\d", description), (spec.name, name, description)  # numbers live in the schema
        assert not hasattr(spec, "output_schema")


def test_defaults_and_ranges_are_stated_in_the_schema() -> None:
    props = {s.name: s.input_schema["properties"] for s in ALL_TOOL_SPECS}
    assert props["find_references"]["limit"] == {**props["find_references"]["limit"], "default": 50, "maximum": 500}
    assert props["get_file_outline"]["limit"]["default"] == 200
    assert props["get_blast_radius"]["depth"]["default"] == 3 and props["get_blast_radius"]["depth"]["maximum"] == 5
    assert props["find_references"]["view"]["default"] == "compact"
    assert props["find_references"]["direction"]["default"] == "incoming"
    assert "pflag.NewFlagSet" in props["find_references"]["qualified_name"]["description"]
    assert "pkg.module.Class.method" in props["get_symbol"]["qualified_name"]["description"]


SYMBOL_TOOLS = ("find_references", "get_blast_radius", "trace_dependencies", "find_cross_repo_consumers", "get_symbol")


@pytest.mark.parametrize("tool", SYMBOL_TOOLS)
def test_every_symbol_tool_takes_one_selector_vocabulary(tool: str) -> None:
    props = {s.name: s.input_schema["properties"] for s in ALL_TOOL_SPECS}
    assert {"name", "qualified_name", "stable_key", "repository", "path"} <= set(props[tool])
    entry = props["get_source"]["symbols"]["items"]["properties"]
    assert set(entry) == {"name", "qualified_name", "stable_key", "repository", "path"}
    # row filters have their own names; no tool keeps an old spelling or a second shape switch
    for spec in ALL_TOOL_SPECS:
        assert not set(spec.input_schema["properties"]) & {
            "repo",
            "language",
            "path_prefix",
            "response_format",
            "kind",
            "kinds",
        }, spec.name


@pytest.mark.parametrize(
    ("tool", "arguments", "old", "new"),
    [
        ("find_references", {"name": "main", "repo": "alpha"}, "repo", "in_repository"),
        ("find_references", {"name": "main", "language": "python"}, "language", "in_language"),
        ("find_references", {"name": "main", "response_format": "detailed"}, "response_format", "view"),
        ("find_symbol", {"name": "main", "repo": "alpha"}, "repo", "in_repository"),
        ("find_symbol", {"name": "main", "path_prefix": "pkg"}, "path_prefix", "in_path"),
        ("find_symbol", {"name": "main", "kind": "function"}, "kind", "symbol_kinds"),
        ("get_blast_radius", {"name": "main", "kinds": ["function"]}, "kinds", "symbol_kinds"),
        ("trace_dependencies", {"name": "main", "language": "python"}, "language", "in_language"),
        ("find_cross_repo_consumers", {"name": "main", "repo": "beta"}, "repo", "in_repository"),
        ("find_by_intent", {"query": "area", "repository": "alpha"}, "repository", "in_repository"),
        ("get_file_outline", {"repository": "alpha", "path": "pkg", "kind": "class"}, "kind", "symbol_kinds"),
        (
            "get_file_outline",
            {"repository": "alpha", "path": "pkg", "response_format": "detailed"},
            "response_format",
            "view",
        ),
    ],
)
def test_an_old_spelling_is_refused_naming_the_new_one(
    gen: Generation, tool: str, arguments: dict[str, object], old: str, new: str
) -> None:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[tool](gen, arguments)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert caught.value.message.startswith(f"{old} is not accepted any more: use {new} ("), caught.value.message


def test_a_tool_with_one_answer_shape_refuses_response_format_saying_so(gen: Generation) -> None:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS["get_symbol"](gen, {"qualified_name": "pkg.use.main", "response_format": "detailed"})
    assert caught.value.message == "response_format is not accepted any more: this tool has one answer shape"


def test_the_language_enum_lists_only_the_languages_a_generation_serves(gen: Generation) -> None:
    assert served_languages(gen) == ("python",)
    python_only = {s.name: s for s in read_tool_specs(("python",))}
    assert python_only["find_references"].input_schema["properties"]["in_language"]["enum"] == ["python"]
    with_rust = {s.name: s for s in read_tool_specs(("python", "go", "rust"))}
    assert with_rust["find_symbol"].input_schema["properties"]["in_language"]["enum"] == ["python", "go", "rust"]
    assert (
        "enum" not in {s.name: s for s in read_tool_specs(())}["find_symbol"].input_schema["properties"]["in_language"]
    )


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
        assert not caught.value.message.startswith(f"unknown argument {name};"), (spec.name, name)
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[spec.name](gen, {"definitely_not_an_argument": 1})
    assert caught.value.message.startswith("unknown argument definitely_not_an_argument")


def test_the_claude_hints_mark_the_tools_that_must_always_load() -> None:
    always = sorted(spec.name for spec in ALL_TOOL_SPECS if spec.always_load)
    assert always == ["find_references", "find_symbol", "get_blast_radius", "get_source"]
    large = sorted(spec.name for spec in ALL_TOOL_SPECS if spec.meta.get("anthropic/maxResultSizeChars") == 120000)
    assert large == ["get_blast_radius", "trace_dependencies"]


def test_every_schema_and_every_read_comes_from_the_tools_declaration() -> None:
    """One declaration per tool (server/declarations.py): tools/list states its schema, and a call is read against
    it, so the default, range and choices a call gets are the ones the schema announces."""
    from server.args import Args
    from server.declarations import DECLARATIONS, input_schema

    for spec in ALL_TOOL_SPECS:
        declaration = DECLARATIONS[spec.name]
        assert spec.input_schema == input_schema(declaration, served_languages_all()), spec.name
        args = Args({}, declaration)
        for name, prop in spec.input_schema["properties"].items():
            if prop["type"] == "integer":
                assert args.integer(name) == prop["default"], (spec.name, name)
                with pytest.raises(ToolError) as caught:
                    Args({name: prop["maximum"] + 1}, declaration).integer(name)
                assert caught.value.message.startswith(f"{name} must be between"), caught.value.message
            elif prop["type"] == "boolean":
                assert args.boolean(name) is prop["default"], (spec.name, name)
            elif prop["type"] == "string" and "enum" in prop and name != "in_language":
                assert args.enum(name) == prop.get("default"), (spec.name, name)
                with pytest.raises(ToolError) as caught:
                    Args({name: "nonsense"}, declaration).enum(name)
                assert caught.value.message == f"{name} must be one of {', '.join(prop['enum'])}; got 'nonsense'"
        with pytest.raises(ToolError) as caught:
            Args({"no_such_argument": 1}, declaration)
        assert (
            "unknown argument no_such_argument; accepted: " + ", ".join(sorted(spec.input_schema["properties"]))
            in (caught.value.message)
            or not spec.input_schema["properties"]
        ), caught.value.message
