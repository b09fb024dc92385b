"""Dart extraction on the real grammar: every declaration kind with its span, names, docs, sites, partial files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from indexer.languages.dart import extract, package_for, package_for_root
from indexer.languages.dart import sites as S

SOURCE = b"""library shapes;

import 'package:geo/geo.dart' show Point, Line hide Other;
import 'package:geo/geo.dart' as g;
export 'src/a.dart' show A;
part 'shapes_part.dart';

/// A shape.
///
/// Second paragraph.
abstract class Shape extends Base with Named implements Comparable<Shape> {
  final int sides;
  static const String label = 'x', other = 'y';
  Shape(this.sides) : super(1);
  Shape.named({required this.sides});
  factory Shape.make(int n) => Square(n);
  int get area;
  set area(int v) {}
  double perimeter() => sides * 2.0;
  Shape operator +(Shape other) => this;
}

mixin Named on Base {
  String get name => 'n';
}

extension StringX on String {
  String shout() => toUpperCase();
}

extension on int {
  int twice() => this * 2;
}

extension type Meters(int value) implements Object {
  Meters add(Meters o) => Meters(value + o.value);
}

enum Color { red, green }

typedef Callback = void Function(int);

int topLevel(int a) {
  final s = Square(2);
  s.area;
  g.Point(1, 2);
  list.map(topLevel);
  return a;
}

var _counter = 0;
final String greeting = 'hi';
int get globalGetter => 1;
set globalSetter(int v) {}
"""


def _facts():
    return extract("lib/shapes.dart", SOURCE, "geo")


def test_every_declaration_kind_gets_its_qualified_name_kind_and_span() -> None:
    facts = _facts()
    assert facts.status == "indexed"
    rows = {(s.qualified_name, s.kind): (s.start_line, s.start_col, s.end_line, s.end_col) for s in facts.symbols}
    assert rows == {
        ("lib.shapes", "module"): (1, 0, 55, 0),
        ("Shape", "class"): (11, 0, 21, 1),
        ("Shape.sides", "field"): (12, 2, 12, 17),
        ("Shape.label", "field"): (13, 2, 13, 33),
        ("Shape.other", "field"): (13, 35, 13, 46),
        ("Shape.new", "constructor"): (14, 2, 14, 30),
        ("Shape.named", "constructor"): (15, 2, 15, 36),
        ("Shape.make", "constructor"): (16, 2, 16, 41),
        ("Shape.area", "getter"): (17, 2, 17, 14),
        ("Shape.area", "setter"): (18, 2, 18, 20),
        ("Shape.perimeter", "method"): (19, 2, 19, 36),
        ("Shape.+", "method"): (20, 2, 20, 40),
        ("Named", "mixin"): (23, 0, 25, 1),
        ("Named.name", "getter"): (24, 2, 24, 25),
        ("StringX", "extension"): (27, 0, 29, 1),
        ("StringX.shout", "method"): (28, 2, 28, 34),
        ("<extension on int>", "extension"): (31, 0, 33, 1),
        ("<extension on int>.twice", "method"): (32, 2, 32, 26),
        ("Meters", "extension_type"): (35, 0, 37, 1),
        ("Meters.new", "constructor"): (35, 21, 35, 32),
        ("Meters.value", "field"): (35, 21, 35, 32),
        ("Meters.add", "method"): (36, 2, 36, 50),
        ("Color", "enum"): (39, 0, 39, 25),
        ("Color.red", "enum_member"): (39, 13, 39, 16),
        ("Color.green", "enum_member"): (39, 18, 39, 23),
        ("Callback", "type_alias"): (41, 0, 41, 38),
        ("topLevel", "function"): (43, 0, 49, 1),
        ("_counter", "variable"): (51, 0, 51, 16),
        ("greeting", "variable"): (52, 0, 52, 28),
        ("globalGetter", "getter"): (53, 0, 53, 26),
        ("globalSetter", "setter"): (54, 0, 54, 26),
    }


def test_find_symbol_facts_name_container_export_signature_and_doc() -> None:
    by = {(s.qualified_name, s.kind): s for s in _facts().symbols}
    shape = by[("Shape", "class")]
    assert shape.doc == "A shape."  # first paragraph only
    assert shape.signature == "abstract class Shape extends Base with Named implements Comparable<Shape>"
    assert (shape.name, shape.container, shape.exported) == ("Shape", "", True)
    perimeter = by[("Shape.perimeter", "method")]
    assert (perimeter.name, perimeter.container, perimeter.signature) == ("perimeter", "Shape", "double perimeter()")
    assert by[("Shape.make", "constructor")].signature == "factory Shape.make(int n)"
    assert by[("Shape.label", "field")].signature == "static const String label"
    assert not by[("_counter", "variable")].exported
    assert not by[("<extension on int>", "extension")].exported  # nobody outside the library can name it
    assert not by[("<extension on int>.twice", "method")].exported
    assert by[("lib.shapes", "module")].name == "shapes"


def test_directive_sites_carry_prefix_show_and_hide() -> None:
    sites = [(s.kind, s.name, s.extra) for s in _facts().sites if s.kind in S.DIRECTIVES]
    assert sites == [
        (S.LIBRARY, "shapes", ()),
        (S.IMPORT, "package:geo/geo.dart", ("", "Point,Line", "Other", "", "")),
        (S.SHOW, "Point", ("package:geo/geo.dart", "", "import")),
        (S.SHOW, "Line", ("package:geo/geo.dart", "", "import")),
        (S.IMPORT, "package:geo/geo.dart", ("g", "", "", "", "")),
        (S.EXPORT, "src/a.dart", ("", "A", "", "", "")),
        (S.SHOW, "A", ("src/a.dart", "", "export")),
        (S.PART, "shapes_part.dart", ()),
    ]


def test_use_sites_sit_on_the_identifier_with_their_qualifier() -> None:
    sites = {(s.kind, s.name, s.enclosing, s.extra) for s in _facts().sites}
    assert (S.EXTENDS, "Base", "Shape", ("", "", "")) in sites
    assert (S.WITH, "Named", "Shape", ("", "", "")) in sites
    assert (S.IMPLEMENTS, "Comparable", "Shape", ("", "", "")) in sites
    assert (S.ON, "Base", "Named", ("", "", "")) in sites
    assert (S.CALL, "new", "Shape.new", ("super", S.SUPER, "")) in sites  # super(1) in the initializer list
    assert (S.CALL, "Square", "Shape.make", ("", "", "")) in sites
    assert (S.REF, "area", "topLevel", ("s", S.LOCAL, "Square")) in sites  # final s = Square(2)
    assert (S.CALL, "Point", "topLevel", ("g", S.OUTER, "")) in sites
    assert (S.CALLBACK, "topLevel", "topLevel", ("", "", "")) in sites  # list.map(topLevel)
    assert (S.CALL, "toUpperCase", "StringX.shout", ("", "", "")) in sites
    assert (S.REF, "value", "Meters.add", ("o", S.LOCAL, "Meters")) in sites
    # locals and parameters are never sites
    assert not any(s.name in ("s", "a", "o", "n", "v") and s.kind != S.TYPED and not s.extra[0] for s in _facts().sites)


def test_a_syntax_error_makes_the_file_partial_and_keeps_the_other_declarations() -> None:
    source = (Path(__file__).parent / "fixtures" / "dart_app" / "lib" / "src" / "broken.dart").read_bytes()
    facts = extract("lib/src/broken.dart", source, "app")
    assert facts.status == "partial"
    assert facts.reason == "syntax error at line 5; lines 5-7 not parsed, the rest indexed"
    assert {(s.qualified_name, s.kind) for s in facts.symbols} == {
        ("lib.src.broken", "module"),
        ("BeforeError", "class"),
        ("BeforeError.fine", "method"),
        ("AfterError", "class"),
        ("AfterError.alsoFine", "method"),
    }
    assert ("broken", 5, 5) in facts.unparsed  # the blind spot is named


def test_duplicate_names_in_one_file_are_numbered() -> None:
    facts = extract("lib/dup.dart", b"void f() {}\nvoid f() {}\n", "p")
    assert [s.qualified_name for s in facts.symbols if s.kind == "function"] == ["f", "f#2"]


def test_the_package_is_the_pubspec_name_of_the_nearest_package(tmp_path: Path) -> None:
    (tmp_path / "pubspec.yaml").write_text("name: outer\nversion: 1.0.0\n")
    (tmp_path / "packages" / "inner").mkdir(parents=True)
    (tmp_path / "packages" / "inner" / "pubspec.yaml").write_text("# a comment\nname: 'inner' # quoted\n")
    assert package_for_root(tmp_path, "lib/a.dart", frozenset()) == "outer"
    assert package_for_root(tmp_path, "packages/inner/lib/src/b.dart", frozenset()) == "inner"
    assert package_for("packages/inner/lib/src/b.dart", frozenset()) == "packages/inner"
    assert package_for_root(tmp_path / "packages", "x/lib/c.dart", frozenset()) == "x"  # no pubspec: the guess


def test_loading_the_grammar_imports_no_other_grammar_of_the_pack() -> None:
    code = (
        "import sys; import indexer.languages.dart.extract as e; "
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tree_sitter_language_pack.bindings.dart']"
