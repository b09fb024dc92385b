"""Names a developer types: Go by package or import path, Python by the module it imports from, dotted tails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.errors import AMBIGUOUS_SYMBOL, SYMBOL_NOT_FOUND, ToolError
from server.name_forms import go_package_name
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import EdgeKind
from tests.server_fixtures import GraphBuilder, build_standard

GO_FILES = {
    # repository: (path, import path, [(qualified name, kind, line)])
    "pflag": (
        "flag.go",
        "github.com/spf13/pflag",
        [("NewFlagSet", "func", 10), ("FlagSet", "type", 3), ("FlagSet.Parse", "method", 20)],
    ),
    "flags": ("set.go", "example.com/other/flags", [("NewFlagSet", "func", 5)]),
    "yaml": ("yaml.go", "gopkg.in/yaml.v3", [("Marshal", "func", 7)]),
    "mod": ("run.go", "example.com/tool/mod/v2", [("Run", "func", 2)]),
}


def _add_go(b: GraphBuilder, repo: str) -> None:
    path, package, declarations = GO_FILES[repo]
    b.repo(repo, languages=("go",))
    named = [(qn, qn.rsplit(".", 1)[-1], kind, line) for qn, kind, line in declarations]
    b.add_declared(repo, path, "go", package, named, text="package x\n" + "\n" * 30)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    tmp: Path = tmp_path_factory.mktemp("name-forms")
    b = build_standard(GraphBuilder(tmp / "src"))
    b.add_file("beta", "geo/shapes.py", "class Square:\n    def area(self):\n        return 2\n")
    for repo in GO_FILES:
        _add_go(b, repo)
    b.repo("jlib", languages=("java",))
    overloads = [
        ("org.x.Options", "Options", "class", 3),
        ("org.x.Options.addOption(Option)", "addOption", "method", 5),
        ("org.x.Options.addOption(String,String)", "addOption", "method", 9),
        ("org.x.Options.size", "size", "method", 13),
    ]
    b.add_declared("jlib", "src/org/x/Options.java", "java", "org.x", overloads, text="package org.x;\n" + "\n" * 30)
    b.edge(b.sym("flags", "NewFlagSet"), EdgeKind.CALLS_DIRECT, b.sym("pflag", "NewFlagSet"))
    result = b.publish(StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state"))
    with Generation(result.path) as generation:
        yield generation


def subject(gen: Generation, **selector: Any) -> tuple[str, str]:
    """(repository, qualified name) of the symbol the selector names."""
    answer = READ_TOOLS["get_symbol"](gen, selector)["results"]
    return answer["repository"], answer["qualified_name"]


def error(gen: Generation, **selector: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        READ_TOOLS["get_symbol"](gen, selector)
    return caught.value


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("pflag.NewFlagSet", ("pflag", "NewFlagSet")),
        ("github.com/spf13/pflag.NewFlagSet", ("pflag", "NewFlagSet")),
        ("spf13/pflag.NewFlagSet", ("pflag", "NewFlagSet")),
        ("pflag.FlagSet.Parse", ("pflag", "FlagSet.Parse")),
        ("flags.NewFlagSet", ("flags", "NewFlagSet")),
        ("yaml.Marshal", ("yaml", "Marshal")),  # gopkg.in/yaml.v3 is package yaml
        ("mod.Run", ("mod", "Run")),  # example.com/tool/mod/v2 is package mod
        ("FlagSet.Parse", ("pflag", "FlagSet.Parse")),  # as indexed
    ],
)
def test_go_symbols_by_package_or_import_path(gen: Generation, typed: str, expected: tuple[str, str]) -> None:
    assert subject(gen, qualified_name=typed) == expected


def test_a_bare_go_name_declared_in_two_packages_lists_them_with_their_packages(gen: Generation) -> None:
    err = error(gen, name="NewFlagSet")
    assert err.code == AMBIGUOUS_SYMBOL
    assert "pflag:flag.go:10 NewFlagSet (func, package github.com/spf13/pflag)" in err.message
    assert "flags:set.go:5 NewFlagSet (func, package example.com/other/flags)" in err.message
    assert subject(gen, name="pflag.NewFlagSet") == ("pflag", "NewFlagSet")  # a dotted name is typed too


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("pkg.make_square", ("alpha", "pkg.shapes.make_square")),  # pkg/__init__.py re-exports it
        ("shapes.Shape.area", ("alpha", "pkg.shapes.Shape.area")),  # a dotted tail
        ("Shape.area", ("alpha", "pkg.shapes.Shape.area")),
        ("pkg.shapes:Square.area", ("alpha", "pkg.shapes.Square.area")),  # module:qualname
        ("pkg/shapes.py::Square::area", ("alpha", "pkg.shapes.Square.area")),  # a pytest node id
    ],
)
def test_python_symbols_by_module_path_and_dotted_tails(gen: Generation, typed: str, expected: tuple[str, str]) -> None:
    assert subject(gen, qualified_name=typed) == expected


def test_an_ambiguous_tail_is_listed_with_packages_never_picked(gen: Generation) -> None:
    err = error(gen, qualified_name="Square.area")  # pkg.shapes.Square.area and geo.shapes.Square.area
    assert err.code == AMBIGUOUS_SYMBOL
    assert "alpha pkg/shapes.py:13-14 pkg.shapes.Square.area" in err.message
    assert "beta geo/shapes.py:2-3 geo.shapes.Square.area" in err.message
    assert subject(gen, qualified_name="Square.area", repository="beta") == ("beta", "geo.shapes.Square.area")
    assert error(gen, qualified_name="Drawable.draw.nothing").code == SYMBOL_NOT_FOUND
    bare = error(gen, qualified_name="draw")  # a bare word is a tail too: two methods named draw
    assert bare.code == AMBIGUOUS_SYMBOL and "pkg.draw.Drawable.draw" in bare.message


def test_repository_and_path_pin_a_typed_name_and_a_module_relative_label_resolves(gen: Generation) -> None:
    assert subject(gen, qualified_name="area", repository="beta", path="app/run.py") == ("beta", "app.run.area")
    # a compact label is module-relative: with its file group's repository and path it names one symbol
    assert subject(gen, qualified_name="Square.area", repository="alpha", path="pkg/shapes.py") == (
        "alpha",
        "pkg.shapes.Square.area",
    )
    err = error(gen, qualified_name="Square.area", repository="gamma")
    assert err.code == SYMBOL_NOT_FOUND


def test_find_references_accepts_the_same_forms(gen: Generation) -> None:
    answer = READ_TOOLS["find_references"](gen, {"qualified_name": "github.com/spf13/pflag.NewFlagSet"})
    assert answer["results"]["qn"] == "NewFlagSet" and answer["total"] == 1


def test_the_go_package_name_of_an_import_path() -> None:
    assert go_package_name("github.com/spf13/pflag") == "pflag"
    assert go_package_name("gopkg.in/yaml.v3") == "yaml"
    assert go_package_name("example.com/m/v2") == "m"
    assert go_package_name("") == ""


def test_overloads_by_their_bare_tail_are_listed_and_a_parameter_list_picks_one(gen: Generation) -> None:
    ambiguous = error(gen, qualified_name="Options.addOption")
    assert ambiguous.code == AMBIGUOUS_SYMBOL
    assert "addOption(Option)" in ambiguous.message and "addOption(String,String)" in ambiguous.message
    assert subject(gen, qualified_name="Options.addOption(String,String)") == (
        "jlib",
        "org.x.Options.addOption(String,String)",
    )
    assert subject(gen, qualified_name="x.Options.size") == ("jlib", "org.x.Options.size")
