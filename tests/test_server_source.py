"""get_source: prose bodies, hash freshness with re-anchoring, confinement to the repository."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.errors import INVALID_ARGUMENT, ToolError
from server.queries import source as source_query
from server.queries.source import get_sources
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from tests.server_fixtures import SHAPES, GraphBuilder, StandardGraph, standard_graph


@pytest.fixture
def graph(tmp_path: Path) -> StandardGraph:
    return standard_graph(tmp_path)


@pytest.fixture
def gen(graph: StandardGraph) -> Iterator[Generation]:
    with Generation(graph.result.path) as generation:
        yield generation


def source(gen: Generation, *selectors: object, **options: Any) -> str:
    return READ_TOOLS["get_source"](gen, {"symbols": list(selectors), **options})


def error(gen: Generation, arguments: dict[str, Any]) -> ToolError:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS["get_source"](gen, arguments)
    return caught.value


def test_bodies_are_served_in_request_order_as_raw_text(graph: StandardGraph, gen: Generation) -> None:
    text = source(gen, {"qualified_name": "pkg.shapes.make_square"}, {"qualified_name": "pkg.use.main"})
    assert text == (
        f"snapshot {graph.result.generation_id}  2 bodies  context 0\n"
        "@ alpha pkg/shapes.py:17-18 function pkg.shapes.make_square\n"
        "def make_square(side):\n"
        "    return Square(side)\n"
        "@ alpha pkg/use.py:8-10 function pkg.use.main\n"
        "def main():\n"
        "    sq = make_square(2)\n"
        "    return total_area([sq])\n"
    )


def test_context_lines_are_clamped_at_the_file_edges(gen: Generation) -> None:
    text = source(gen, {"qualified_name": "pkg.shapes.make_square"}, context_lines=10)
    header, body = text.split("\n", 2)[1:]
    assert header == "@ alpha pkg/shapes.py:17-18 function pkg.shapes.make_square"
    assert body == "".join(SHAPES.splitlines(keepends=True)[6:22])


def test_response_format_is_refused_with_the_reason(gen: Generation) -> None:
    err = error(gen, {"symbols": [{"qualified_name": "pkg.shapes.unused"}], "response_format": "detailed"})
    assert err.code == INVALID_ARGUMENT and err.message.startswith("response_format is not accepted any more")


def test_a_changed_file_is_re_anchored_and_the_shift_declared(graph: StandardGraph, gen: Generation) -> None:
    shapes = graph.builder.root("alpha") / "pkg" / "shapes.py"
    shapes.write_text("import math\nimport os\n" + SHAPES)
    text = source(gen, {"qualified_name": "pkg.shapes.make_square"}, {"qualified_name": "pkg.shapes.Square"})
    lines = text.splitlines()
    assert lines[1] == "@ alpha pkg/shapes.py:19-20 function pkg.shapes.make_square [file changed, re-anchored +2]"
    assert lines[2:4] == ["def make_square(side):", "    return Square(side)"]
    assert lines[4].startswith("@ alpha pkg/shapes.py:11-16 class pkg.shapes.Square [file changed, re-anchored +2]")


def test_a_declaration_gone_from_a_changed_file_is_refused_and_others_still_served(
    graph: StandardGraph, gen: Generation
) -> None:
    shapes = graph.builder.root("alpha") / "pkg" / "shapes.py"
    shapes.write_text(SHAPES.replace("def unused():\n    return None\n", ""))
    text = source(gen, {"qualified_name": "pkg.shapes.unused"}, {"qualified_name": "pkg.use.main"})
    lines = text.splitlines()
    assert lines[0].endswith("1 bodies  context 0")
    assert (
        lines[1] == "! alpha pkg/shapes.py pkg.shapes.unused — the file changed and no line declares the name any more"
    )
    assert lines[2] == "@ alpha pkg/use.py:8-10 function pkg.use.main"


def test_two_equally_near_declarations_are_refused_rather_than_guessed(graph: StandardGraph, gen: Generation) -> None:
    use = graph.builder.root("alpha") / "pkg" / "use.py"
    # main was indexed at line 8; now it is declared three lines above and three lines below that
    lines = ["# filler\n"] * 4 + ["def main():\n", "    pass\n"] + ["\n"] * 4 + ["def main():\n", "    pass\n"]
    use.write_text("".join(lines))
    assert [i + 1 for i, line in enumerate(lines) if line.startswith("def main")] == [5, 11]
    text = source(gen, {"qualified_name": "pkg.use.main"})
    assert text.splitlines()[1].endswith("two lines declaring the name are equally near")


def test_a_shift_past_the_end_of_the_file_is_refused(graph: StandardGraph, gen: Generation) -> None:
    use = graph.builder.root("alpha") / "pkg" / "use.py"
    use.write_text("\n" * 20 + "def main(\n")  # half typed: no end can be found, and the indexed length overruns
    text = source(gen, {"qualified_name": "pkg.use.main"})
    assert "runs past the end of the file" in text.splitlines()[1]


def test_a_function_that_grew_and_moved_is_served_whole_by_its_syntax(graph: StandardGraph, gen: Generation) -> None:
    use = graph.builder.root("alpha") / "pkg" / "use.py"
    grown = (
        "from pkg.shapes import make_square\n\n\n"
        "def total_area(shapes):\n    return sum(s.area() for s in shapes)\n\n\n"
        "# moved down by a comment\n"
        "def main():\n"
        '    text = """\nnot indented, still the body\n"""\n'
        "    sq = make_square(\n2)\n"
        "\n"
        "    return total_area([sq])\n"
        "\n\ndef after():\n    return 0\n"
    )
    use.write_text(grown)
    lines = source(gen, {"qualified_name": "pkg.use.main"}).splitlines()
    # indexed at 8-10 (three lines); now at 9-16 (eight lines), the dedented string and the wrapped call included
    assert (
        lines[1] == "@ alpha pkg/use.py:9-16 function pkg.use.main [file changed, re-anchored +1, 8 lines, indexed 3]"
    )
    assert lines[2] == "def main():" and lines[-1] == "    return total_area([sq])"
    assert "def after" not in "\n".join(lines)


def test_a_file_deleted_since_indexing_is_refused(graph: StandardGraph, gen: Generation) -> None:
    (graph.builder.root("alpha") / "pkg" / "use.py").unlink()
    assert source(gen, {"qualified_name": "pkg.use.main"}).splitlines()[1] == (
        "! alpha pkg/use.py pkg.use.main — the file is not on disk any more (deleted or moved since indexing)"
    )


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "pkg/../../etc"])
def test_a_selector_path_leaving_the_repository_is_an_error_row(gen: Generation, path: str) -> None:
    text = source(gen, {"qualified_name": "pkg.use.main", "repository": "alpha", "path": path})
    assert text.splitlines()[1].startswith("! symbols[0] pkg.use.main — INVALID_ARGUMENT: symbols[0].path must")


def _symlinked_graph(tmp_path: Path) -> tuple[GraphBuilder, Generation]:
    b = GraphBuilder(tmp_path / "src")
    root = b.repo("delta")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    b.add_file("delta", "link/mod.py", "def secret():\n    return 42\n")  # written through the link, outside
    (outside / "real.py").write_text("def leaked():\n    return 1\n")
    b.add_file("delta", "alias.py", "def leaked():\n    return 1\n", write=False)
    (root / "alias.py").symlink_to(outside / "real.py")
    b.add_file("delta", "inside.py", "def fine():\n    return 0\n")
    result = b.publish(StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state"))
    return b, Generation(result.path)


def test_a_symlink_leaving_the_repository_is_never_followed(tmp_path: Path) -> None:
    _b, generation = _symlinked_graph(tmp_path)
    with generation:
        text = source(
            generation,
            {"qualified_name": "link.mod.secret"},
            {"qualified_name": "alias.leaked"},
            {"qualified_name": "inside.fine"},
        )
    lines = text.splitlines()
    assert lines[0].endswith("1 bodies  context 0")
    assert lines[1] == "! delta link/mod.py link.mod.secret — the path has a symlink component, which is never followed"
    assert lines[2] == "! delta alias.py alias.leaked — the path has a symlink component, which is never followed"
    assert lines[3:] == ["@ delta inside.py:1-2 function inside.fine", "def fine():", "    return 0"]
    assert "42" not in text


def test_the_confined_reader_refuses_dot_dot_and_absolute_paths(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert source_query.read_confined(str(tmp_path), "a.py") == b"x = 1\n"
    for bad in ("../a.py", "/etc/passwd", "x/../a.py", ""):
        with pytest.raises(source_query.Refused, match="escapes the repository"):
            source_query.read_confined(str(tmp_path), bad)


def test_a_selector_that_resolves_to_nothing_is_an_error_row_and_the_others_are_served(gen: Generation) -> None:
    lines = source(
        gen, {"qualified_name": "pkg.nowhere"}, {"qualified_name": "pkg.use.main"}, {"name": "area"}
    ).splitlines()
    assert lines[0].endswith("1 bodies  context 0  2 not found")
    assert lines[1] == '! symbols[0] pkg.nowhere — SYMBOL_NOT_FOUND: qualified name "pkg.nowhere" was not found'
    assert lines[2] == "@ alpha pkg/use.py:8-10 function pkg.use.main"
    assert lines[-1].startswith("! symbols[2] area — AMBIGUOUS_SYMBOL: ")


@pytest.mark.parametrize("count", [0, 21])
def test_between_one_and_twenty_symbols_are_accepted(gen: Generation, count: int) -> None:
    err = error(gen, {"symbols": [{"qualified_name": "pkg.use.main"}] * count})
    assert err.code == INVALID_ARGUMENT and "between 1 and 20" in err.message


def test_twenty_symbols_are_served_and_each_file_is_read_once(gen: Generation, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    real = source_query.read_confined

    def counting(root: str, relative: str) -> bytes:
        reads.append(relative)
        return real(root, relative)

    monkeypatch.setattr(source_query, "read_confined", counting)
    text = source(gen, *[{"qualified_name": "pkg.shapes.make_square"}, {"qualified_name": "pkg.use.main"}] * 10)
    assert text.splitlines()[0].endswith("20 bodies  context 0")
    assert sorted(reads) == ["pkg/shapes.py", "pkg/use.py"]


def test_a_selector_entry_must_be_an_object_with_selector_fields(gen: Generation) -> None:
    text = source(gen, "pkg.use.main", {"name": "main", "repository": "alpha"}, {"name": "main", "kind": "x"})
    lines = text.splitlines()
    assert lines[1] == "! symbols[0] ? — INVALID_ARGUMENT: symbols[0] must be an object, got a string"
    assert lines[2] == "@ alpha pkg/use.py:8-10 function pkg.use.main"  # name, like every symbol tool
    assert lines[-1].startswith("! symbols[2] main — INVALID_ARGUMENT: unknown argument symbols[2].kind")


def test_bodies_beyond_the_byte_ceiling_are_trimmed_and_declared(graph: StandardGraph, gen: Generation) -> None:
    symbols = [
        gen.symbol(graph.key("alpha", qn))
        for qn in ("pkg.shapes.Square", "pkg.shapes.make_square", "pkg.shapes.unused")
    ]
    square = "".join(SHAPES.splitlines(keepends=True)[8:14])
    ceiling = len(square.encode()) + 30  # Square fits whole, the first line of make_square too, unused not
    answer = get_sources(gen, [s for s in symbols if s is not None], ceiling=ceiling)
    assert answer.trimmed == 2
    square_body, make_body, unused_row = answer.items
    assert isinstance(square_body, source_query.Body) and square_body.text == square and not square_body.trimmed
    assert isinstance(make_body, source_query.Body) and make_body.trimmed
    assert make_body.text == "def make_square(side):\n"  # cut at a line boundary
    assert isinstance(unused_row, source_query.Refusal) and unused_row.reason.startswith("trimmed")


def test_the_tool_declares_the_ceiling_when_it_trims(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("big")
    body = "def huge():\n" + "".join(f"    value_{i:06d} = {i}\n" for i in range(9000))
    b.add_file("big", "huge.py", body)
    b.add_file("big", "small.py", "def small():\n    return 0\n")
    result = b.publish(StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state"))
    with Generation(result.path) as generation:
        text = source(
            generation,
            {"qualified_name": "huge.huge"},
            {"qualified_name": "huge.huge"},
            {"qualified_name": "small.small"},
        )
    first = text.splitlines()[0]
    assert first.endswith("  trimmed 2 at the 262144 byte ceiling")
    assert len(text.encode()) < 262144 + 1000
    assert text.splitlines()[-1].startswith("! big small.py small.small — trimmed")
    assert os.path.getsize(tmp_path / "src" / "big" / "huge.py") > 262144 // 2
