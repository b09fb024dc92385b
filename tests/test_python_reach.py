"""What a Python edit can reach: the top-level statements of a file (what each binds, what other modules see of
it) and the files the incremental exact pass checks again after a change. No analyzer runs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from indexer.languages.python.incremental import reach, source_files
from indexer.languages.python.units import ANY, statements, units_of
from tests.helpers import write_repo


def bound(source: str) -> list[tuple[str, ...]]:
    """The names of each top-level statement that binds something."""
    return [s.unit.names for s in statements(source.encode()) if s.unit.names]


def test_each_statement_binds_the_module_level_names_it_writes() -> None:
    source = (
        "import os.path, typing as t\nfrom .core import Group as G, echo\nfrom __future__ import annotations\n"
        "try:\n    import ujson as json\nexcept ImportError as err:\n    json = None\n"
        "x, (y, *z) = 1, (2, 3)\ncount += 1\nregistry.items['k'] = 1\n"
        "if (w := 3):\n    def f() -> int:\n        return 1\n"
        "@decorate\nclass C(Base):\n    attr = 1\n"
        "for i in range(3):\n    pass\nwith open(p) as fh:\n    pass\ndel gone\ntype Alias = int\n"
        "print([q for q in x])\n"
    )
    assert bound(source) == [
        ("os",),  # an import, one statement per name
        ("t",),
        ("G",),
        ("echo",),
        ("err", "json"),
        ("x", "y", "z"),
        ("count",),
        ("registry",),  # a write into a module-level object changes what it holds
        ("f", "w"),
        ("C",),
        ("i",),
        ("fh",),
        ("gone",),
        ("Alias",),
        ("q",),  # a comprehension's variable: a superset
    ]


def test_what_no_statement_can_say_binds_any_name() -> None:
    (wildcard,) = statements(b"from .core import *\n")
    assert wildcard.unit.names == (ANY,) and wildcard.wildcard == ".core"
    assert units_of(b"def unfinished(value:\n    return value\n")[0].names == (ANY,)  # it does not parse


def test_a_statement_only_moved_or_edited_in_a_comment_is_the_same_unit() -> None:
    before = units_of(b"def f(x: int) -> int:\n    return x\n")
    after = units_of(b"# a comment\n\n\ndef f(x: int) -> int:\n    # why\n    return x\n")
    assert after == before


def test_the_body_behind_a_declared_return_type_is_not_what_other_modules_see() -> None:
    def unit(source: str) -> object:
        (s,) = statements(source.encode())
        return s.unit

    typed = "def f(x: int) -> int:\n    return x\n"
    assert unit(typed) == unit(typed.replace("return x", "return x + helper()"))
    inferred = "def f(x: int):\n    return x\n"  # the checker infers its return type from the body
    assert unit(inferred) != unit(inferred.replace("return x", "return str(x)"))
    method = "class C:\n    def set(self, v: int) -> None:\n        self.v = v\n"  # declares C.v
    assert unit(method) != unit(method.replace("self.v = v", "self.v = str(v)"))
    writes = "def g() -> None:\n    global cache\n    cache = 1\n"  # writes a module-level name
    assert unit(writes) != unit(writes.replace("cache = 1", "cache = ''"))
    signature = "def f(x: int) -> int:\n    return x\n"
    assert unit(signature) != unit(signature.replace("x: int)", "x: str)"))


# --- reach --------------------------------------------------------------------------------------------------

FILES = {
    "pkg/__init__.py": "from .shapes import Shape as Shape\n",
    "pkg/shapes.py": (
        "class Shape:\n    def area(self) -> float:\n        return 0.0\n\n\n"
        "def square(x):\n    return x * x\n\n\ndef cube(x: float) -> float:\n    return x * x * x\n"
    ),
    "pkg/circle.py": (
        "from pkg.shapes import Shape, square\n\n\nclass Circle(Shape):\n    def area(self) -> float:\n"
        "        return square(2)\n"
    ),
    "pkg/app.py": "from pkg.circle import Circle\n\n\ndef run() -> float:\n    return Circle().area()\n",
    "pkg/solid.py": "from pkg.shapes import cube\n\nvolume = cube(2)\n",
    "pkg/other.py": "def alone() -> int:\n    return 0\n",
    "pkg/late.py": "from pkg import early\n\nvalue = early.VALUE\n",
    "tests/test_app.py": "from pkg.app import run\n\n\ndef test_run() -> None:\n    assert run() == 0.0\n",
}


def reach_after(tmp_path: Path, edits: Mapping[str, str | None], files: dict[str, str] = FILES) -> set[str] | None:
    """The reach of ``edits`` (path -> new text, None: deleted) to a repository written from ``files``."""
    root = write_repo(tmp_path / "repo", files)
    previous = {p: units_of((root / p).read_bytes()) for p in files}
    for path, text in edits.items():
        if text is None:
            (root / path).unlink()
        else:
            write_repo(root, {path: text})
    now = sorted(p for p in {*files, *edits} if (root / p).exists())
    return reach(previous, set(edits), now, source_files(root))


def test_a_new_declaration_nobody_names_reaches_only_its_own_file(tmp_path: Path) -> None:
    edited = FILES["pkg/shapes.py"] + "\n\ndef tesseract(x: float) -> float:\n    return cube(x) * x\n"
    assert reach_after(tmp_path, {"pkg/shapes.py": edited}) == {"pkg/shapes.py"}


def test_an_edit_behind_a_declared_return_type_reaches_only_its_own_file(tmp_path: Path) -> None:
    edited = FILES["pkg/shapes.py"].replace("return x * x * x", "return x**3")
    assert reach_after(tmp_path, {"pkg/shapes.py": edited}) == {"pkg/shapes.py"}


def test_a_changed_declaration_reaches_the_files_naming_it(tmp_path: Path) -> None:
    edited = FILES["pkg/shapes.py"].replace("return x * x\n", "return str(x)\n")  # square's inferred type
    # circle names square, but only in the body of a method that declares its return type: what Circle is
    # stays the same, so app (naming Circle) is not reached; solid names only cube
    assert reach_after(tmp_path, {"pkg/shapes.py": edited}) == {"pkg/shapes.py", "pkg/circle.py"}


def test_a_class_edit_reaches_the_files_naming_it_and_those_naming_what_they_bind(tmp_path: Path) -> None:
    # Shape's statement changed: __init__ re-exports it, Circle extends it, app names Circle
    edited = FILES["pkg/shapes.py"].replace("def area(self)", "def surface(self)")
    assert reach_after(tmp_path, {"pkg/shapes.py": edited}) == {
        "pkg/shapes.py",
        "pkg/__init__.py",
        "pkg/circle.py",
        "pkg/app.py",
    }


def test_a_deleted_file_reaches_the_files_whose_imports_name_it(tmp_path: Path) -> None:
    assert reach_after(tmp_path, {"pkg/solid.py": None}) == set()  # nobody imports it
    # app imports circle; run declares its return type, so the test calling it is not reached
    assert reach_after(tmp_path, {"pkg/circle.py": None}) == {"pkg/app.py"}


def test_an_added_file_reaches_the_files_whose_imports_may_now_resolve_to_it(tmp_path: Path) -> None:
    assert reach_after(tmp_path, {"pkg/early.py": "VALUE = 1\n"}) == {"pkg/early.py", "pkg/late.py"}


def test_what_the_statements_cannot_say_is_analysed_whole(tmp_path: Path) -> None:
    starred = {**FILES, "pkg/star.py": "from pkg.shapes import *\n\narea = cube(1)\n"}
    edited = FILES["pkg/shapes.py"] + "\n\nRADIUS = 1\n"
    assert reach_after(tmp_path / "a", {"pkg/shapes.py": edited}, starred) is None  # which names star binds
    assert reach_after(tmp_path / "b", {"pkg/other.py": "def alone( -> int:\n"}) is None  # does not parse
    assert reach_after(tmp_path / "c", {"pkg/sub/__init__.py": ""}) is None  # a package appears
