"""The tool functions and query functions over a real published generation (no MCP transport)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.errors import (
    AMBIGUOUS_SYMBOL,
    CURSOR_INVALID,
    INVALID_ARGUMENT,
    REPOSITORY_NOT_FOUND,
    SYMBOL_NOT_FOUND,
    ToolError,
)
from server.queries.references import find_references as reference_query
from server.queries.symbols import find_symbols
from server.tools import READ_TOOLS
from server.views import encoded_size, tree_paths
from snapshot_format.keys import key_to_bytes
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import Confidence, EdgeKind
from tests.helpers import group_entries, labels_of
from tests.server_fixtures import CALLER_COUNT, GraphBuilder, StandardGraph, standard_graph


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> StandardGraph:
    return standard_graph(tmp_path_factory.mktemp("queries"))


@pytest.fixture(scope="module")
def gen(graph: StandardGraph) -> Iterator[Generation]:
    with Generation(graph.result.path) as generation:
        yield generation


def call(gen: Generation, tool: str, **arguments: Any) -> Any:
    return READ_TOOLS[tool](gen, arguments)


def error(gen: Generation, tool: str, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS[tool](gen, arguments)
    return caught.value


# --- shared argument rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("find_symbol", {"name": " area"}, "name"),
        ("find_symbol", {"name": "area", "in_repository": "alpha "}, "in_repository"),
        ("get_symbol", {"qualified_name": "pkg.use.main\n"}, "qualified_name"),
        ("get_file_outline", {"repository": "alpha", "path": " pkg"}, "path"),
        ("find_references", {"name": "main", "repository": "\talpha"}, "repository"),
    ],
)
def test_a_string_with_surrounding_whitespace_is_rejected_naming_the_field(
    gen: Generation, tool: str, arguments: dict[str, Any], field: str
) -> None:
    err = error(gen, tool, **arguments)
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith(f"{field} must not have surrounding whitespace")


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("find_symbol", {"name": "area", "limit": 501}, "limit"),
        ("find_symbol", {"name": "area", "limit": -1}, "limit"),
        ("get_file_outline", {"repository": "alpha", "path": "pkg", "limit": 1000}, "limit"),
        ("find_references", {"name": "main", "limit": 9999}, "limit"),
        ("list_repositories", {"limit": 501}, "limit"),
        ("get_source", {"symbols": [{"qualified_name": "pkg.use.main"}], "context_lines": 101}, "context_lines"),
    ],
)
def test_a_limit_out_of_range_is_rejected_not_clamped(
    gen: Generation, tool: str, arguments: dict[str, Any], field: str
) -> None:
    err = error(gen, tool, **arguments)
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith(f"{field} must be between")


def test_limit_zero_or_absent_means_the_default(gen: Generation) -> None:
    assert call(gen, "find_symbol", name="caller", mode="prefix", limit=0)["returned"] == 50
    assert call(gen, "find_symbol", name="caller", mode="prefix")["returned"] == 50


@pytest.mark.parametrize("value", ["5", True, 2.5, [5]])
def test_a_limit_that_is_not_an_integer_is_rejected(gen: Generation, value: object) -> None:
    err = error(gen, "find_symbol", name="area", limit=value)
    assert (err.code, err.message.split(" must")[0]) == (INVALID_ARGUMENT, "limit")


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("find_symbol", {"name": "area", "mode": "fuzzy"}, "mode"),
        ("find_symbol", {"name": "area", "view": "table"}, "view"),
        ("find_references", {"name": "main", "direction": "both"}, "direction"),
        ("find_references", {"name": "main", "confidence": "EXACT"}, "confidence"),
        ("find_references", {"name": "main", "in_language": "cobol"}, "in_language"),
        ("find_references", {"name": "main", "in_language": "go"}, "in_language"),  # not held by this graph
        ("get_file_outline", {"repository": "alpha", "path": "pkg", "view": "table"}, "view"),
    ],
)
def test_an_unsupported_enum_value_is_rejected_naming_the_field(
    gen: Generation, tool: str, arguments: dict[str, Any], field: str
) -> None:
    err = error(gen, tool, **arguments)
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith(f"{field} must be one of")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("find_symbol", {"name": "area"}), ("get_file_outline", {"repository": "alpha", "path": "pkg"})],
)
def test_view_tree_is_refused_outside_the_walks_naming_them(
    gen: Generation, tool: str, arguments: dict[str, Any]
) -> None:
    err = error(gen, tool, **arguments, view="tree")
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith("view tree is only accepted by get_blast_radius and trace_dependencies")


def test_an_unknown_argument_is_rejected_naming_it(gen: Generation) -> None:
    err = error(gen, "find_symbol", name="area", depth=3)
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith("unknown argument depth")
    assert error(gen, "graph_status", verbose=True).message.startswith("unknown argument verbose")


def test_the_files_view_is_rejected_where_it_does_not_apply(gen: Generation) -> None:
    err = error(gen, "find_symbol", name="area", view="files")
    assert err.code == INVALID_ARGUMENT and "view files" in err.message


@pytest.mark.parametrize("path", ["/etc", "../alpha", "pkg/../../x", "~/x"])
def test_a_path_must_be_repository_relative(gen: Generation, path: str) -> None:
    err = error(gen, "get_file_outline", repository="alpha", path=path)
    assert err.code == INVALID_ARGUMENT
    assert err.message.startswith("path must")


def test_a_trailing_slash_is_trimmed_from_a_path(gen: Generation) -> None:
    with_slash = call(gen, "get_file_outline", repository="alpha", path="pkg/", view="full")
    without = call(gen, "get_file_outline", repository="alpha", path="pkg", view="full")
    assert with_slash["results"] == without["results"]


def test_a_nul_character_is_rejected_rather_than_reaching_a_key(gen: Generation) -> None:
    err = error(gen, "find_symbol", name="ar\x00ea")
    assert err.code == INVALID_ARGUMENT and "NUL" in err.message


# --- selector rules -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "one of stable_key, qualified_name or name is required"),
        (
            {"stable_key": "A" * 26, "qualified_name": "x"},
            "pass only one of stable_key, qualified_name or name, not stable_key and qualified_name",
        ),
        (
            {"stable_key": "A" * 26, "repository": "alpha"},
            "repository and path narrow a qualified_name; a stable_key already names one symbol",
        ),
        ({"qualified_name": "pkg.use.main", "path": "pkg"}, "path is repository-relative, so it requires repository"),
    ],
)
def test_selector_rejections_use_the_reference_wording(
    gen: Generation, arguments: dict[str, Any], message: str
) -> None:
    err = error(gen, "get_symbol", **arguments)
    assert (err.code, err.message) == (INVALID_ARGUMENT, message)


def test_the_name_form_states_its_own_rules(gen: Generation) -> None:
    assert error(gen, "find_references").message == "one of stable_key, qualified_name or name is required"
    both = error(gen, "find_references", name="main", qualified_name="pkg.use.main")
    assert both.message.startswith("pass only one of stable_key, qualified_name or name")
    repo_filter = error(gen, "find_references", name="main", path="pkg", in_repository="alpha")
    assert repo_filter.message.startswith("path is repository-relative, so it requires repository")
    assert "in_repository only filters the answer" in repo_filter.message


def test_a_stable_key_that_resolves_to_nothing_is_symbol_not_found_naming_it(gen: Generation) -> None:
    err = error(gen, "get_symbol", stable_key="A" * 26)
    assert err.code == SYMBOL_NOT_FOUND and "A" * 26 in err.message


def test_a_malformed_stable_key_is_an_invalid_argument(gen: Generation) -> None:
    err = error(gen, "get_symbol", stable_key="pkg.use.main")
    assert err.code == INVALID_ARGUMENT and "not a stable key" in err.message


def test_a_repository_not_in_the_graph_is_named(gen: Generation) -> None:
    err = error(gen, "get_symbol", qualified_name="pkg.use.main", repository="delta")
    assert (err.code, err.message) == (REPOSITORY_NOT_FOUND, 'repository "delta" is not in the published graph')


def test_a_missing_qualified_name_says_where_it_looked(gen: Generation) -> None:
    plain = error(gen, "get_symbol", qualified_name="pkg.nothing")
    assert (plain.code, plain.message) == (SYMBOL_NOT_FOUND, 'qualified name "pkg.nothing" was not found')
    narrowed = error(gen, "get_symbol", qualified_name="pkg.use.main", repository="beta", path="app")
    assert narrowed.code == SYMBOL_NOT_FOUND
    assert "under beta app" in narrowed.message and "retry without repository and path" in narrowed.message


def test_an_ambiguous_qualified_name_lists_locations_then_keys(graph: StandardGraph, gen: Generation) -> None:
    broad = error(gen, "get_symbol", qualified_name="util.helper")
    assert broad.code == AMBIGUOUS_SYMBOL
    assert "alpha util.py:4-5" in broad.message and "beta util.py:1-2" in broad.message
    assert "narrow with repository and path" in broad.message
    narrow = error(gen, "get_symbol", qualified_name="util.helper", repository="alpha", path="util.py")
    assert narrow.code == AMBIGUOUS_SYMBOL
    assert graph.key("alpha", "util.helper", 0) in narrow.message
    assert graph.key("alpha", "util.helper", 1) in narrow.message


def test_repository_and_path_narrow_an_ambiguous_name_to_one(graph: StandardGraph, gen: Generation) -> None:
    answer = call(gen, "get_symbol", qualified_name="util.helper", repository="beta")
    assert answer["results"]["stable_key"] == graph.key("beta", "util.helper")
    by_key = call(gen, "get_symbol", stable_key=graph.key("alpha", "util.helper", 1))
    assert by_key["results"]["start_line"] == 7


def test_a_path_narrows_by_whole_segments_not_by_characters(gen: Generation) -> None:
    err = error(gen, "get_symbol", qualified_name="pkg.use.main", repository="alpha", path="pk")
    assert err.code == SYMBOL_NOT_FOUND
    assert call(gen, "get_symbol", qualified_name="pkg.use.main", repository="alpha", path="pkg")["total"] == 1


def test_the_name_form_resolves_one_declaration_and_lists_several(gen: Generation) -> None:
    assert call(gen, "find_references", name="make_square")["results"]["qn"] == "pkg.shapes.make_square"
    err = error(gen, "find_references", name="area")
    assert err.code == AMBIGUOUS_SYMBOL
    assert "alpha:pkg/shapes.py:5" in err.message and "beta:app/run.py:9" in err.message
    assert "app.run.area (function)" in err.message  # the qualified name settles candidates sharing a file
    narrowed = call(gen, "find_references", name="area", repository="beta")
    assert narrowed["results"]["qn"] == "app.run.area"


def test_the_name_form_tells_an_import_only_name_from_an_unknown_one(gen: Generation) -> None:
    imported = error(gen, "find_references", name="getcwd")
    assert imported.code == SYMBOL_NOT_FOUND
    assert "only imported or re-exported" in imported.message
    unknown = error(gen, "find_references", name="nowhere_at_all")
    assert unknown.code == SYMBOL_NOT_FOUND and "only imported" not in unknown.message


# --- find_symbol ----------------------------------------------------------------------------------------------------


def test_find_symbol_hoists_shared_columns_and_addresses_rows(gen: Generation) -> None:
    answer = call(gen, "find_symbol", name="area")
    results = answer["results"]
    assert answer["total"] == answer["returned"] == 3
    # every label ends with the name asked for, so it is not restated; the name says it is exported (no _)
    assert "name" not in results and "exported" not in json.dumps(results)
    assert results["kind"] == "method"  # the kind most rows share; the function row states its own
    # The repository most rows share is the header's default; a file of another one names its own.
    assert results["repository"] == "alpha"
    rows = group_entries(results)
    assert sorted(rows, key=str) == [
        ("alpha", "pkg/shapes.py", "Shape.area@5-6"),
        ("alpha", "pkg/shapes.py", "Square.area@13-14"),
        ("beta", "app/run.py", ["area@9-10", "function"]),
    ]
    assert list(results["files"]) == ["pkg/shapes.py", "beta:app/run.py"]  # another repository's file: repo:path
    assert "sig" not in json.dumps(results)  # a locator: signatures are the full view's (and get_symbol's)
    assert "stable_key" not in json.dumps(results)
    assert "snapshot_age_ms" not in answer and "truncated" not in answer and "next_cursor" not in answer


def test_find_symbol_with_one_repository_writes_path_and_line_only(gen: Generation) -> None:
    results = call(gen, "find_symbol", name="area", in_repository="alpha")["results"]
    assert results["repository"] == "alpha" and results["kind"] == "method"
    # labels leave out the module the file implies (pkg.shapes.)
    assert results["files"] == {"pkg/shapes.py": ["Shape.area@5-6", "Square.area@13-14"]}


def test_find_symbol_states_signatures_where_two_rows_share_a_qualified_name(tmp_path: Path) -> None:
    builder = GraphBuilder(tmp_path / "src")
    builder.repo("solo")
    overloads = "def pick(x: int) -> int:\n    return x\n\n\ndef pick(x: str) -> str:\n    return x\n\n\ndef other():\n    pass\n"
    builder.add_file("solo", "choose.py", overloads)
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    with Generation(builder.publish(layout).path) as gen:
        results = call(gen, "find_symbol", name="pick")["results"]
        # the labels differ only by line, so each row says which declaration it is
        assert results["columns"] == ["at", "sig"]
        assert sorted(results["files"]["choose.py"]) == [
            ["pick@1-2", "def pick(x: int) -> int"],
            ["pick@5-6", "def pick(x: str) -> str"],
        ]
        assert "sig" not in json.dumps(call(gen, "find_symbol", name="other")["results"])
        full = call(gen, "find_symbol", name="other", view="full")["results"]
        assert full[0]["signature"] == "def other()"


def _index_order(row: dict[str, Any]) -> tuple[str, str, str, bytes]:
    return row["name"], row["repository"], row["file_path"], key_to_bytes(row["stable_key"])


def test_find_symbol_rows_follow_the_name_index_order(graph: StandardGraph, gen: Generation) -> None:
    full = call(gen, "find_symbol", name="area", view="full")
    assert [(r["repository"], r["file_path"], r["start_line"]) for r in full["results"]] == [
        ("alpha", "pkg/shapes.py", 5),
        ("alpha", "pkg/shapes.py", 13),
        ("beta", "app/run.py", 9),
    ]
    assert full["results"] == sorted(full["results"], key=_index_order)
    assert set(full["results"][0]) == {
        "stable_key",
        "name",
        "qualified_name",
        "kind",
        "signature",
        "exported",
        "repository",
        "file_path",
        "start_line",
        "end_line",
        "package",
        "language",
    }
    assert full["coverage"] == {"exact": 3, "candidate": 0, "unresolved_related": 0, "package_level": 0}
    assert full["truncated"] is False and full["next_cursor"] is None


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"name": "pkg.shapes.make_square", "mode": "qualified_exact"}, {"pkg.shapes.make_square"}),
        ({"name": "make_", "mode": "prefix"}, {"pkg.shapes.make_square"}),
        ({"name": "quar", "mode": "substring"}, {"pkg.shapes.make_square", "pkg.shapes.Square"}),
        ({"name": "area", "symbol_kinds": ["function"]}, {"app.run.area"}),
        ({"name": "area", "symbol_kinds": ["*"]}, {"app.run.area", "pkg.shapes.Shape.area", "pkg.shapes.Square.area"}),
        ({"name": "helper", "in_path": "util"}, {"util.helper"}),
        ({"name": "area", "in_language": "python", "in_repository": "beta"}, {"app.run.area"}),
        ({"name": "caller_00", "mode": "prefix", "in_path": "callers/c1"}, set()),
    ],
)
def test_find_symbol_modes_and_filters(gen: Generation, arguments: dict[str, Any], expected: set[str]) -> None:
    answer = call(gen, "find_symbol", view="full", **arguments)
    assert {row["qualified_name"] for row in answer["results"]} == expected


def test_find_symbol_with_no_match_is_an_empty_page_not_an_error(gen: Generation) -> None:
    compact = call(gen, "find_symbol", name="no_such_name")
    assert compact["total"] == 0 and compact["results"] == {"files": {}}
    assert "guidance" not in compact
    assert call(gen, "find_symbol", name="no_such_name", view="full")["results"] == []


def test_find_symbol_counts_unresolved_references_naming_the_string(gen: Generation) -> None:
    assert call(gen, "find_symbol", name="make_square")["coverage"] == {"exact": 1, "unresolved_related": 1}
    assert call(gen, "find_symbol", name="unknown_helper")["coverage"] == {"unresolved_related": 1}


def test_find_symbol_rejects_an_unknown_kind(gen: Generation) -> None:
    err = error(gen, "find_symbol", name="area", symbol_kinds=["methd"])
    assert err.code == INVALID_ARGUMENT and err.message.startswith("symbol_kinds: 'methd' is not a symbol kind")


def test_the_full_view_carries_stable_keys_and_the_compact_view_none(graph: StandardGraph, gen: Generation) -> None:
    full = call(gen, "find_symbol", name="make_square", view="full")["results"]
    assert full[0]["stable_key"] == graph.key("alpha", "pkg.shapes.make_square")
    assert graph.key("alpha", "pkg.shapes.make_square") not in json.dumps(call(gen, "find_symbol", name="make_square"))


def _walk(gen: Generation, tool: str, rows_of: Any, **arguments: Any) -> tuple[list[Any], int]:
    seen: list[Any] = []
    cursor = None
    totals = set()
    for _ in range(1000):
        page = call(gen, tool, **arguments, **({"cursor": cursor} if cursor else {}))
        totals.add(page["total"])
        rows = rows_of(page["results"])
        assert len(rows) == page["returned"]
        seen.extend(rows)
        cursor = page.get("next_cursor")
        if not cursor:
            assert "truncated" not in page or page["truncated"] is False
            break
        assert page["truncated"] is True
    assert len(totals) == 1
    return seen, totals.pop()


def test_find_symbol_pages_walk_to_the_end_without_duplicates(gen: Generation) -> None:
    seen, total = _walk(gen, "find_symbol", lambda r: r, name="caller_", mode="prefix", limit=17, view="full")
    keys = [row["stable_key"] for row in seen]
    assert total == CALLER_COUNT == len(keys) == len(set(keys))
    assert seen == sorted(seen, key=_index_order)


def test_a_cursor_is_refused_by_another_query(gen: Generation) -> None:
    first = call(gen, "find_symbol", name="caller_", mode="prefix", limit=10)
    err = error(gen, "find_symbol", name="caller_0", mode="prefix", cursor=first["next_cursor"])
    assert err.code == CURSOR_INVALID


def test_view_and_limit_are_not_part_of_a_cursor(gen: Generation) -> None:
    first = call(gen, "find_symbol", name="caller_", mode="prefix", limit=10)
    second = call(gen, "find_symbol", name="caller_", mode="prefix", limit=25, view="full", cursor=first["next_cursor"])
    assert second["returned"] == 25
    assert second["results"][0]["qualified_name"].startswith("callers.")


# --- get_symbol -------------------------------------------------------------------------------------------------------


def test_get_symbol_answers_one_symbol_in_the_full_envelope(graph: StandardGraph, gen: Generation) -> None:
    answer = call(gen, "get_symbol", qualified_name="pkg.shapes.Square.area")
    assert answer["total"] == answer["returned"] == 1
    assert answer["coverage"] == {"exact": 0, "candidate": 0, "unresolved_related": 0, "package_level": 0}
    result = answer["results"]
    assert result["stable_key"] == graph.key("alpha", "pkg.shapes.Square.area")
    assert result["repository_path"] == str(graph.builder.root("alpha"))
    assert (result["file_path"], result["start_line"], result["end_line"]) == ("pkg/shapes.py", 13, 14)
    assert result["container"] == "pkg.shapes.Square"
    assert "snapshot_age_ms" in answer


# --- get_file_outline ---------------------------------------------------------------------------------------------------


def test_an_outline_of_a_file_lists_labels_in_source_order(gen: Generation) -> None:
    answer = call(gen, "get_file_outline", repository="alpha", path="pkg/use.py")
    results = answer["results"]
    assert results["repository"] == "alpha" and results["package"] == "pkg.use"
    labels = [entry if isinstance(entry, str) else entry[0] for entry in _outline_entries(results)]
    assert labels == ["pkg.use@1-10", "total_area@4-5", "main@8-10"]
    assert answer["total"] == 3


def _outline_entries(results: dict[str, Any]) -> list[Any]:
    groups = results.get("groups", [results])
    # One file outlined: the labels sit under ``at`` (the header names the path); a directory: per file.
    return [entry for group in groups for f in group.get("files", [group]) for entry in f["at"]]


def test_an_outline_of_a_directory_skips_files_that_failed_to_parse(gen: Generation) -> None:
    full = call(gen, "get_file_outline", repository="alpha", path="pkg", view="full")
    assert [f["path"] for f in full["results"]["files"]] == [
        "pkg/__init__.py",
        "pkg/draw.py",
        "pkg/shapes.py",
        "pkg/use.py",
    ]
    assert full["results"]["languages"] == ["python"]
    whole = call(gen, "get_file_outline", repository="alpha", path=".", view="files")
    assert [f["file"] for f in whole["results"]["files"]][-1] == "util.py"


def test_an_outline_of_a_path_with_no_indexed_file_is_symbol_not_found(gen: Generation) -> None:
    broken = error(gen, "get_file_outline", repository="alpha", path="pkg/broken.py")
    assert broken.code == SYMBOL_NOT_FOUND and "parse_failed" in broken.message
    missing = error(gen, "get_file_outline", repository="alpha", path="nope")
    assert missing.code == SYMBOL_NOT_FOUND and "alpha nope" in missing.message
    assert error(gen, "get_file_outline", repository="delta", path="x").code == REPOSITORY_NOT_FOUND


def test_an_outline_filters_kinds_during_the_walk(gen: Generation) -> None:
    answer = call(gen, "get_file_outline", repository="alpha", path="pkg/shapes.py", symbol_kinds=["method"])
    assert answer["total"] == answer["returned"] == 3
    assert answer["results"]["kind"] == "method"


def test_the_files_view_of_an_outline_counts_declarations_per_file(gen: Generation) -> None:
    results = call(gen, "get_file_outline", repository="gamma", path="callers", view="files", limit=30)["results"]
    assert results["files"] == [
        {"file": "callers/c0.py", "declarations": 20},
        {"file": "callers/c1.py", "declarations": 10},
    ]


def test_outline_pages_walk_to_the_end_without_duplicates(gen: Generation) -> None:
    seen, total = _walk(
        gen,
        "get_file_outline",
        lambda r: [(f["path"], s["start_line"]) for f in r["files"] for s in f["symbols"]],
        repository="gamma",
        path="callers",
        view="full",
        limit=40,
    )
    assert total == CALLER_COUNT + 7 == len(seen) == len(set(seen))


# --- find_references ------------------------------------------------------------------------------------------------------


def test_references_exclude_forwarding_bindings_by_default_and_say_so(gen: Generation) -> None:
    default = call(gen, "find_references", qualified_name="pkg.shapes.make_square")
    # The compact view leaves the declared default to the schema; the full view states it.
    assert "edge_kinds_default_excluded" not in default["results"]
    full = call(gen, "find_references", qualified_name="pkg.shapes.make_square", view="full")
    assert full["results"]["edge_kinds_default_excluded"] == ["EXPORTS", "REEXPORTS", "PART_OF"]
    assert "pkg@1" not in labels_of(default["results"])
    everything = call(gen, "find_references", qualified_name="pkg.shapes.make_square", edge_kinds=["*"])
    assert "edge_kinds_default_excluded" not in everything["results"]
    assert "pkg@1" in labels_of(everything["results"])
    assert everything["total"] == default["total"] + 1


def test_references_count_coverage_over_the_whole_set(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="pkg.shapes.make_square", limit=1)
    assert answer["total"] == 4 and answer["returned"] == 1
    assert answer["coverage"] == {"exact": 2, "candidate": 2, "unresolved_related": 1}


@pytest.mark.parametrize(
    ("filters", "labels"),
    [
        ({"in_repository": "beta"}, {"app.run@1-10", "run@5-6"}),
        ({"confidence": "EXACT_TYPECHECKED"}, {"pkg.use@1-10", "main@8-10"}),
        ({"edge_kinds": ["CALLS_DIRECT"]}, {"main@8-10", "run@5-6"}),
        ({"in_language": "python", "in_repository": "gamma"}, set()),
    ],
)
def test_reference_row_filters(gen: Generation, filters: dict[str, Any], labels: set[str]) -> None:
    answer = call(gen, "find_references", qualified_name="pkg.shapes.make_square", **filters)
    assert set(labels_of(answer["results"])) == labels


def test_edge_kind_validation(gen: Generation) -> None:
    assert error(gen, "find_references", name="main", edge_kinds=["*", "CALLS_DIRECT"]).code == INVALID_ARGUMENT
    assert error(gen, "find_references", name="main", edge_kinds=["DEFINES"]).code == INVALID_ARGUMENT
    assert error(gen, "find_references", name="main", edge_kinds=["calls_direct"]).code == INVALID_ARGUMENT
    twice = call(
        gen, "find_references", qualified_name="pkg.shapes.make_square", edge_kinds=["CALLS_DIRECT", "CALLS_DIRECT"]
    )
    assert twice["total"] == 2


def test_outgoing_references_are_what_the_symbol_reaches(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="pkg.use.main", direction="outgoing", view="full")
    reached = {row["qualified_name"]: row["edge_kind"] for row in answer["results"]["references"]}
    assert reached == {"pkg.shapes.make_square": "CALLS_DIRECT", "pkg.use.total_area": "CALLS_DIRECT"}
    assert answer["results"]["direction"] == "outgoing"
    unresolved = call(gen, "find_references", qualified_name="pkg.use.total_area", direction="outgoing")
    assert unresolved["coverage"]["unresolved_related"] == 1


def test_an_empty_incoming_answer_explains_what_the_absence_means(gen: Generation) -> None:
    exact = call(gen, "find_references", qualified_name="pkg.shapes.unused")
    assert exact["total"] == 0
    assert "absence rather than a miss" in exact["guidance"]
    fallback = call(gen, "find_references", qualified_name="app.run.area")
    assert "not proof of absence" in fallback["guidance"]
    outgoing = call(gen, "find_references", qualified_name="pkg.shapes.unused", direction="outgoing")
    assert "direction=incoming" in outgoing["guidance"]


def test_a_complete_non_empty_page_has_no_guidance(gen: Generation) -> None:
    assert "guidance" not in call(gen, "find_references", qualified_name="pkg.shapes.make_square")


def test_compact_references_hoist_page_wide_columns(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="hub.hub", limit=20)
    results = answer["results"]
    # the rows' repository is the subject's (gamma:hub.py:1), which the subject already spells
    assert "repository" not in results
    assert {k: results[k] for k in ("kind", "edge_kind", "confidence")} == {
        "kind": "function",
        "edge_kind": "CALLS_DIRECT",
        "confidence": "EXACT_TYPECHECKED",
    }
    assert "provenance" not in json.dumps(results)  # which analyzer saw each edge is the full view's
    assert next(iter(results["files"].items())) == (
        "callers/c0.py",
        [f"caller_{i:03d}@{4 + 4 * i}-{5 + 4 * i}" for i in range(19)],
    )
    # the qualified name asked for is not echoed; a short name is answered with the one it resolved to
    assert results["subject"] == "gamma:hub.py:1" and "qn" not in results
    assert call(gen, "find_references", name="hub2")["results"]["qn"] == "hub.hub2"
    assert "direction" not in results  # incoming is the default; outgoing answers say so
    assert "showing 20 of 130" in answer["guidance"]


def test_rows_that_disagree_keep_their_columns_as_a_positional_tail(gen: Generation) -> None:
    results = call(gen, "find_references", qualified_name="pkg.shapes.make_square")["results"]
    # two of four rows each way: no value is most rows', so no column is stated in the header
    assert not {"kind", "edge_kind", "confidence"} & set(results)
    assert results["columns"] == ["at", "edge_kind", "kind", "confidence"]
    assert results["files"]["pkg/use.py"] == [
        ["pkg.use@1-10", "IMPORTS_SYMBOL", "module", "EXACT_TYPECHECKED"],
        ["main@8-10", "CALLS_DIRECT", "function", "EXACT_TYPECHECKED"],
    ]
    assert results["files"]["beta:app/run.py"][1] == ["run@5-6", "CALLS_DIRECT", "function", "CANDIDATE"]


def test_a_column_most_rows_share_is_stated_once_and_the_others_say_their_own(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="hub.hub2", limit=60)
    results = answer["results"]
    assert results["confidence"] == "EXACT_TYPECHECKED"  # two thirds of the callers
    entries = [entry for _repo, _path, entry in group_entries(results)]
    candidates = [e[0] for e in entries if isinstance(e, list)]
    assert all(e[1:] == ["CANDIDATE"] for e in entries if isinstance(e, list))
    assert candidates[:2] == ["caller_000@4-5", "caller_003@16-17"] and len(entries) == 60
    full = call(gen, "find_references", qualified_name="hub.hub2", limit=60, view="full")["results"]["references"]
    assert [r["confidence"] for r in full].count("CANDIDATE") == len(candidates)


def test_second_tier_grouping_is_kept_only_when_it_is_smaller(gen: Generation, tmp_path: Path) -> None:
    # Half the callers exact, half candidates: no confidence is most rows', so the flat page would repeat it
    # on every row, and the rows bucketed by confidence (each bucket stating it once) are smaller.
    builder = GraphBuilder(tmp_path / "src")
    builder.repo("even")
    builder.add_file("even", "target.py", "def target():\n    pass\n")
    builder.add_file("even", "calls.py", "".join(f"def c{i}():\n    target()\n\n\n" for i in range(10)))
    for i in range(10):
        confidence = Confidence.CANDIDATE if i % 2 else Confidence.EXACT_TYPECHECKED
        builder.edge(
            builder.sym("even", f"calls.c{i}"),
            EdgeKind.CALLS_DIRECT,
            builder.sym("even", "target.target"),
            line=2 + 4 * i,
            confidence=confidence,
        )
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    with Generation(builder.publish(layout).path) as even:
        compact = call(even, "find_references", qualified_name="target.target")["results"]
        assert "groups" in compact and "files" not in compact and "confidence" not in compact
        assert [g["confidence"] for g in compact["groups"]] == ["EXACT_TYPECHECKED", "CANDIDATE"]
        flat_rows = [[label, g["confidence"]] for g in compact["groups"] for label in g["files"]["calls.py"]]
        assert len(flat_rows) == 10
        flat_equivalent = {k: v for k, v in compact.items() if k != "groups"}
        flat_equivalent["files"] = {"calls.py": flat_rows}
        assert encoded_size(compact) < encoded_size(flat_equivalent)
    small = call(gen, "find_references", qualified_name="pkg.shapes.make_square")["results"]
    assert "files" in small and "groups" not in small  # four buckets of one row: flat is smaller


def test_the_files_view_counts_rows_per_repository_file(gen: Generation) -> None:
    results = call(gen, "find_references", qualified_name="hub.hub", view="files")["results"]
    # a directory holding several of the files is stated once: {repository: {directory/: {name: count}}}
    assert results["files"] == {"gamma": {"callers/": {f"c{i}.py": 19 if i < 6 else 16 for i in range(7)}}}
    assert tree_paths(results["files"]["gamma"]) == {f"callers/c{i}.py": 19 if i < 6 else 16 for i in range(7)}
    assert "edge_kinds_default_excluded" not in results


def test_the_files_view_raises_the_default_page_to_five_hundred(gen: Generation) -> None:
    assert call(gen, "find_references", qualified_name="hub.hub", view="files")["returned"] == CALLER_COUNT
    assert call(gen, "find_references", qualified_name="hub.hub")["returned"] == 50


def test_reference_pages_walk_to_the_end_without_duplicates(gen: Generation) -> None:
    seen, total = _walk(
        gen,
        "find_references",
        lambda r: [x["qualified_name"] for x in r["references"]],
        qualified_name="hub.hub2",
        view="full",
        limit=23,
    )
    assert total == CALLER_COUNT == len(seen) == len(set(seen))


def test_the_dispatch_bridge_adds_references_to_the_interface_method(gen: Generation) -> None:
    results = call(gen, "find_references", qualified_name="pkg.draw.Circle.draw", view="full")["results"]
    assert results["dispatch_through"] == ["pkg.draw.Drawable.draw"]
    assert [(r["qualified_name"], r["via"]) for r in results["references"]] == [
        ("pkg.draw.render", "pkg.draw.Drawable.draw")
    ]


def test_the_reference_query_returns_plain_sorted_rows(graph: StandardGraph, gen: Generation) -> None:
    subject = gen.symbol(graph.key("gamma", "hub.hub"))
    assert subject is not None
    found = reference_query(gen, subject)
    assert [r.other.qualified_name for r in found.rows] == sorted(r.other.qualified_name for r in found.rows)
    assert found.coverage.exact == CALLER_COUNT


def test_the_symbol_query_returns_records(gen: Generation) -> None:
    assert [s.qualified_name for s in find_symbols(gen, "Square", mode="exact")] == ["pkg.shapes.Square"]


# --- graph_status and list_repositories ----------------------------------------------------------------------------


def test_graph_status_reports_identity_counts_and_analyses(graph: StandardGraph, gen: Generation) -> None:
    answer = call(gen, "graph_status")
    assert answer["total"] == 1 and answer["snapshot_id"] == graph.result.generation_id
    status = answer["results"]
    assert status["status"] == "ready"
    assert status["symbols"] == len(graph.builder.symbols)
    assert status["failed_files"] == 1
    assert {e["key"]: e["count"] for e in status["edges_by_kind"]}["IMPLEMENTS"] == 1
    modes = {row["name"]: row["analyses"][0]["mode"] for row in status["repository_freshness"]}
    assert modes == {"alpha": "exact", "beta": "fallback", "gamma": "exact"}
    assert "worker" not in status and "storage" not in status  # constant blocks cost tokens and say nothing


def test_list_repositories_pages_in_registry_order(gen: Generation) -> None:
    first = call(gen, "list_repositories", limit=2)
    assert [r["name"] for r in first["results"]] == ["alpha", "beta"]
    second = call(gen, "list_repositories", limit=2, cursor=first["next_cursor"])
    assert [r["name"] for r in second["results"]] == ["gamma"] and second["next_cursor"] is None
    alpha = first["results"][0]
    assert alpha["indexed_commit"] == "a" * 40 and alpha["moved"] is False
    assert alpha["moved_detail"] == "not a git checkout"


def test_list_repositories_compares_indexed_and_live_head(graph: StandardGraph, gen: Generation) -> None:
    git = graph.builder.root("alpha") / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    try:
        (git / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
        same = call(gen, "list_repositories")["results"][0]
        assert (same["current_commit"], same["current_branch"], same["moved"]) == ("a" * 40, "main", False)
        (git / "refs" / "heads" / "main").write_text("b" * 40 + "\n")
        moved = call(gen, "list_repositories")["results"][0]
        assert moved["moved"] is True and moved["current_commit"] == "b" * 40
        assert "re-index" in moved["moved_detail"]
    finally:
        shutil.rmtree(git)


def test_exported_is_left_off_only_where_the_name_says_it() -> None:
    from server.views import exported_is_implied
    from snapshot_format.records import Symbol

    def sym(name: str, language: str, exported: bool) -> Symbol:
        return Symbol(
            key="K" * 26,
            name=name,
            qualified_name=name,
            kind="function",
            language=language,
            repository="r",
            path="p",
            start_line=1,
            start_col=0,
            end_line=1,
            end_col=0,
            exported=exported,
        )

    assert exported_is_implied(sym("area", "python", True)) and exported_is_implied(sym("_area", "python", False))
    assert not exported_is_implied(sym("area", "python", False))  # the name would mislead: stated
    assert exported_is_implied(sym("NewFlagSet", "go", True)) and exported_is_implied(sym("parse", "go", False))
    assert not exported_is_implied(sym("square", "typescript", True))  # an export modifier, not the name


def test_a_go_method_keeps_its_receiver_when_the_type_is_named_like_its_file() -> None:
    """In Go a file's name is no module prefix: ``stack.Format`` in stack.go is the method of the type ``stack``."""
    from server.views import module_relative
    from snapshot_format import records

    def sym(language: str, path: str, qn: str, package: str) -> records.Symbol:
        return records.Symbol(
            key="k", name=qn.rsplit(".", 1)[-1], qualified_name=qn, kind="method", language=language,
            repository="r", path=path, start_line=1, start_col=0, end_line=2, end_col=0, signature="",
            exported=True, container="", package=package,
        )  # fmt: skip

    assert module_relative(sym("go", "stack.go", "stack.Format", "github.com/pkg/errors")) == "stack.Format"
    assert module_relative(sym("typescript", "src/util.ts", "src.util.Cache.get", "")) == "Cache.get"
    assert module_relative(sym("python", "pkg/shapes.py", "pkg.shapes.Shape.area", "pkg.shapes")) == "Shape.area"


def test_a_bare_name_means_the_declaration_not_the_module_named_after_it(tmp_path: Path) -> None:
    builder = GraphBuilder(tmp_path / "src")
    builder.repo("named")
    builder.add_file("named", "finalize.py", "def finalize():\n    pass\n")
    builder.add_file("named", "other.py", "def other():\n    pass\n")
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    with Generation(builder.publish(layout).path) as gen:
        # finalize.py declares the module finalize and the function finalize.finalize
        assert {r["kind"] for r in call(gen, "find_symbol", name="finalize", view="full")["results"]} == {
            "module",
            "function",
        }
        assert call(gen, "find_references", name="finalize")["results"]["qn"] == "finalize.finalize"
        assert call(gen, "get_symbol", qualified_name="finalize")["results"]["kind"] == "module"
        assert call(gen, "find_references", name="other")["results"]["qn"] == "other.other"


def test_an_outline_states_the_most_common_export_state_once(tmp_path: Path) -> None:
    """Where the name does not say it (TypeScript), exported is a column: the common state is the header's."""
    import msgspec

    builder = GraphBuilder(tmp_path / "src")
    builder.repo("web", languages=("typescript",))
    builder.add_file("web", "mod.py", "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef c():\n    pass\n")
    builder.symbols = [
        msgspec.structs.replace(s, language="typescript", exported=s.name != "b") for s in builder.symbols
    ]
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    with Generation(builder.publish(layout).path) as gen:
        results = call(gen, "get_file_outline", repository="web", path="mod.py")["results"]
        assert results["exported"] is True and results["kind"] == "function"
        # the columns are named once: a row leaves a column empty where the header's value applies
        assert results["columns"] == ["at", "kind", "exported"]
        assert results["at"] == [["mod@1-10", "module"], "a@1-2", ["b@5-6", "", "unexported"], "c@9-10"]
