"""Go extraction and the CANDIDATE resolver on syntax: qualified names, kinds, sites, unresolved rows."""

from __future__ import annotations

from pathlib import Path

from indexer.languages.go import extract, package_for, package_for_root
from indexer.languages.go import resolve as resolve_go
from snapshot_format.vocab import Confidence
from tests.go_corpus import build_go_corpus

SOURCE = b"""package shapes

import (
    f "fmt"
    "example.com/other/lib"
)

// Shape is anything with an area.
//
// Second paragraph.
type Shape interface {
    Area() int
}

type Base struct{ ID int }

type Square struct {
    Base
    Side, Depth int
    Meta struct{ Tag string }
}

func (s *Square) Area() int { return s.Side * s.Side }

func init() {}
func init() {}

const Pi, E = 3, 2

var _ Shape = (*Square)(nil)

func Describe(s *Square) string {
    f.Println(s.Area(), lib.Helper(), s.Missing())
    return unknownName
}
"""


def test_declarations_get_go_qualified_names_kinds_and_docs() -> None:
    facts = extract("shapes/shapes.go", SOURCE, "shapes")
    assert facts.status == "indexed"
    rows = {(s.qualified_name, s.kind) for s in facts.symbols}
    assert rows >= {
        ("Shape", "type"),
        ("Shape.Area", "method"),
        ("Base", "type"),
        ("Base.ID", "field"),
        ("Square", "type"),
        ("Square.Base", "field"),
        ("Square.Side", "field"),
        ("Square.Depth", "field"),
        ("Square.Meta", "field"),
        ("Square.Meta.Tag", "field"),
        ("Square.Area", "method"),
        ("init", "func"),
        ("init#2", "func"),
        ("Pi", "const"),
        ("E", "const"),
        ("Describe", "func"),
        ("shapes.shapes", "module"),
    }
    by_qn = {s.qualified_name: s for s in facts.symbols}
    assert by_qn["Shape"].doc == "Shape is anything with an area."
    assert by_qn["Square.Area"].signature == "func (s *Square) Area() int"
    assert by_qn["Square.Area"].container == "Square"
    assert by_qn["Shape"].exported and not by_qn["init"].exported
    assert by_qn["Square"].start_line == 17


def test_sites_sit_on_the_resolved_identifier_with_their_qualifier() -> None:
    facts = extract("shapes/shapes.go", SOURCE, "shapes")
    sites = {(s.kind, s.name, s.enclosing, tuple(s.extra)) for s in facts.sites}
    assert ("embed", "Base", "Square", ("", "", "")) in sites
    assert ("call", "Println", "Describe", ("f", "outer", "")) in sites
    assert ("call", "Area", "Describe", ("s", "local", "Square")) in sites
    assert ("import", "example.com/other/lib", "", ("",)) in sites
    assert not any(s.name in ("s", "Side") and s.kind == "ref" and not s.extra[0] for s in facts.sites)


def test_a_syntax_error_makes_the_file_partial_and_keeps_the_rest() -> None:
    facts = extract("bad.go", b"package x\n\nfunc Good() int { return 1 }\n\nfunc (\n\nfunc After() {}\n", ".")
    assert facts.status == "partial" and "line 5" in facts.reason
    assert {s.qualified_name for s in facts.symbols} >= {"Good", "After"}


def test_the_package_is_the_directory() -> None:
    assert package_for("cmd/app/main.go", frozenset()) == "cmd/app"
    assert package_for("main.go", frozenset()) == "."


def test_the_package_is_the_import_path_under_a_go_mod(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m // the module\n\ngo 1.21\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "go.mod").write_text("module example.com/tools\n")
    assert package_for_root(tmp_path, "main.go", frozenset()) == "example.com/m"
    assert package_for_root(tmp_path, "cmd/app/main.go", frozenset()) == "example.com/m/cmd/app"
    assert package_for_root(tmp_path, "tools/gen/gen.go", frozenset()) == "example.com/tools/gen"
    (tmp_path / "go.mod").write_text("module example.com/renamed\n")
    assert package_for_root(tmp_path, "main.go", frozenset()) == "example.com/renamed"


def test_without_a_go_mod_the_package_is_the_directory(tmp_path: Path) -> None:
    assert package_for_root(tmp_path, "cmd/app/main.go", frozenset()) == "cmd/app"
    assert package_for_root(tmp_path, "main.go", frozenset()) == "."


def test_candidate_resolution_binds_syntax_and_keeps_the_rest_unresolved(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/shapes\n\ngo 1.22\n")
    (tmp_path / "shapes").mkdir()
    (tmp_path / "shapes" / "shapes.go").write_bytes(SOURCE)
    built = build_go_corpus([("shapes", tmp_path)])
    res = resolve_go(built.corpus)
    rows = {(built.edge_row(e), e.line) for e in res.edges}
    assert (("CALLS_DIRECT", "Describe", "Square.Area"), 33) in rows
    assert (("EMBEDS", "Square", "Base"), 18) in rows
    assert (("TYPE_USES", "shapes.shapes", "Shape"), 30) in rows
    assert all(e.confidence == Confidence.CANDIDATE for e in res.edges)
    reasons = {(u.name, u.reason) for u in res.unresolved}
    assert ("Helper", "MODULE_PROVIDER_NOT_FOUND") in reasons
    assert ("Missing", "DECLARATION_NOT_RESOLVED") in reasons
    assert ("unknownName", "NAME_NOT_RESOLVED") in reasons
    assert not any(u.name == "Println" for u in res.unresolved)
