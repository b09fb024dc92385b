"""Property-based fault tests (hypothesis): every tool argument, index_project, the wire screen, the CURRENT pointer.

Arguments are drawn from each tool's own input schema — values that conform, values near the bounds,
and arbitrary JSON in every slot — and the only acceptable outcomes are an answer or a ToolError with a
known code that names the field; never another exception. Example counts come from
``KIVGRAPH_PROPERTY_EXAMPLES`` (``make faults`` raises them); runs are derandomized so a failure replays.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.errors import ALL_CODES, ToolError
from server.indexing import parse_index_request
from server.surface import READ_TOOL_SPECS, ToolSpec
from server.tools import READ_TOOLS
from server.wire import screen
from snapshot_format.layout import StateLayout, parse_generation_name, read_pointer
from snapshot_format.reader import Generation
from tests.server_fixtures import standard_graph

pytestmark = pytest.mark.faults


def report(campaign: str, **counts: int) -> None:
    """Append counts for the README's fault table (``make faults`` sets KIVGRAPH_FAULT_REPORT)."""
    target = os.environ.get("KIVGRAPH_FAULT_REPORT")
    if target:
        with open(target, "a") as fh:
            fh.write(json.dumps({"campaign": campaign, "examples": EXAMPLES, **counts}) + "\n")


EXAMPLES = int(os.environ.get("KIVGRAPH_PROPERTY_EXAMPLES", "60"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

NAMES = [
    "helper",
    "area",
    "make_square",
    "pkg.shapes.make_square",
    "util.helper",
    "alpha",
    "beta",
    "pkg",
    "pkg/shapes.py",
    "",
    " ",
    "..",
    "../../etc/passwd",
    "/etc/passwd",
    "\x00",
    "*",
    "é\u202e",
    "caller_",
]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(NAMES),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)


def conforming(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that fit ``schema`` (and its bounds, plus one past them)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.sampled_from(NAMES), st.text(max_size=30))
    if kind == "integer":
        low, high = schema.get("minimum", -5), schema.get("maximum", 1000)
        return st.integers(min_value=low - 1, max_value=high + 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(conforming(schema.get("items", {})), max_size=4)
    if kind == "object":
        props = schema.get("properties", {})
        if not props:
            return st.dictionaries(st.text(max_size=8), json_leaf, max_size=3)
        return st.fixed_dictionaries({}, optional={k: conforming(v) for k, v in props.items()})
    return json_value


# A call each tool answers on the standard graph: the property test varies the other slots around it, so
# the answering paths (filters, views, paging) get arbitrary input too, not only the refusals.
BASES: dict[str, dict[str, Any]] = {
    "find_symbol": {"name": "make_square"},
    "find_references": {"qualified_name": "pkg.shapes.make_square"},
    "get_blast_radius": {"qualified_name": "pkg.shapes.make_square"},
    "trace_dependencies": {"qualified_name": "pkg.shapes.make_square"},
    "find_cross_repo_consumers": {"qualified_name": "pkg.shapes.make_square"},
    "get_symbol": {"qualified_name": "pkg.shapes.make_square"},
    "get_source": {"symbols": [{"qualified_name": "pkg.shapes.make_square"}]},
    "get_file_outline": {"repository": "alpha", "path": "pkg/shapes.py"},
    "find_by_intent": {"query": "make a square"},
    "list_repositories": {},
    "graph_status": {},
}


def arguments_for(spec: ToolSpec) -> st.SearchStrategy[Any]:
    props: dict[str, Any] = spec.input_schema.get("properties", {})
    slot = {name: st.one_of(conforming(schema), json_value) for name, schema in props.items()}
    shaped = st.fixed_dictionaries({}, optional={**slot, "unknown_argument": json_value})
    base = BASES[spec.name]
    around = st.fixed_dictionaries(
        {k: st.just(v) for k, v in base.items()},
        optional={name: conforming(schema) for name, schema in props.items() if name not in base},
    )
    return st.one_of(shaped, around, around, json_value)


@pytest.mark.parametrize("spec", READ_TOOL_SPECS, ids=lambda s: s.name)
def test_each_base_call_is_answered(spec: ToolSpec, gen: Generation) -> None:
    answer = READ_TOOLS[spec.name](gen, BASES[spec.name])  # a ToolError here means BASES needs updating
    assert answer


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    graph = standard_graph(tmp_path_factory.mktemp("properties"))
    with Generation(graph.result.path) as generation:
        yield generation


@pytest.mark.parametrize("spec", READ_TOOL_SPECS, ids=lambda s: s.name)
def test_any_arguments_to_any_tool_give_an_answer_or_a_known_error(spec: ToolSpec, gen: Generation) -> None:
    tool = READ_TOOLS[spec.name]
    tried = refused = 0

    @PROPERTY
    @given(arguments=arguments_for(spec))
    def check(arguments: Any) -> None:
        nonlocal tried, refused
        tried += 1
        try:
            answer = tool(gen, arguments)
        except ToolError as exc:
            assert exc.code in ALL_CODES
            assert exc.text.startswith(f"{exc.code}: ")
            refused += 1
            return
        text = answer if isinstance(answer, str) else json.dumps(answer)
        assert text

    check()
    report(f"arguments.{spec.name}", tried=tried, refused_by_name=refused, answered=tried - refused, crashed=0)


@PROPERTY
@given(
    arguments=st.one_of(
        json_value,
        st.fixed_dictionaries(
            {},
            optional={
                "name": st.one_of(st.sampled_from(["ok", "my project", "-x", "rust:std", ""]), st.text(max_size=12)),
                "path": st.sampled_from(["/", "/proc", "/proc/self", ".", "..", "~", "/nonexistent", "", "\x00"]),
                "languages": st.one_of(
                    st.lists(st.sampled_from(["python", "go", "cobol", "PY", ""]), max_size=3), json_value
                ),
                "confirmed": json_value,
                "projects": json_value,
            },
        ),
    )
)
def test_index_project_arguments_are_accepted_or_refused_by_name(arguments: Any) -> None:
    cwd = Path("/tmp")
    try:
        request = parse_index_request(arguments, cwd, Path("/tmp/kivgraph-state-for-properties"))
    except ToolError as exc:
        assert exc.code == "INVALID_ARGUMENT"
        return
    for project in request.projects:
        assert project.path not in ("/", "/proc") and not project.path.startswith("/proc/")
        assert " " not in project.name


@PROPERTY
@given(
    line=st.one_of(
        st.binary(max_size=200),
        st.builds(lambda v: json.dumps(v).encode(), json_value),
        st.builds(
            lambda i, v: json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": v}).encode(),
            json_leaf,
            json_value,
        ),
    )
)
def test_the_wire_screen_passes_a_json_rpc_object_or_answers_with_an_error(line: bytes) -> None:
    text, error = screen(line)
    if error is not None:
        assert text is None and error.error.code in (-32700, -32600, -32602)
    elif text is not None:
        message = json.loads(text)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0"
    else:
        assert not line.strip()


@PROPERTY
@given(
    content=st.one_of(
        st.binary(max_size=300),
        st.sampled_from(
            [b"g000001.v1\n", b"g000001.v1", b"\xff", b"g1.v1", b" g000002.v1 \n", b"g000001.v1\ng000002.v1"]
        ),
    )
)
def test_any_current_pointer_is_a_generation_name_or_no_pointer_with_a_reason(
    content: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    state = tmp_path_factory.mktemp("pointer")
    layout = StateLayout(config_path=state / "kivgraph.toml", state_dir=state)
    layout.current_pointer.write_bytes(content)
    pointer = read_pointer(layout)
    if pointer.name is None:
        assert pointer.problem
    else:
        assert parse_generation_name(pointer.name) is not None and pointer.problem == ""
