"""Callables held in variables: what each extractor sees as one, and a blast radius that walks and lists them.

A variable whose value is a function, a class or another callable the extractor can see is marked
``callable`` (records.Symbol.callable, feature 8); get_blast_radius lists it by default, while data variables
and fields stay behind ``symbol_kinds`` (docs/surface.md §11.9).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indexer.languages.dart.extract import extract as extract_dart
from indexer.languages.go.extract import extract as extract_go
from indexer.languages.python import analyzer as scip_python
from indexer.languages.python.extract import extract as extract_python
from indexer.languages.rust.extract import extract as extract_rust
from indexer.languages.typescript import analyzer as scip_ts
from indexer.languages.typescript.extract import extract as extract_ts
from server.tools.symbols import get_symbol
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from tests.helpers import run_kivgraph, write_repo

TS_SOURCE = b"""import * as core from "./core";
type Parse = <T>(s: T) => T;
interface Ctor { new (def: unknown): object }
export const annotated: (x: number) => string = make();
export const constructed: new () => Foo = make();
export const typeofClass: typeof Foo = make();
export const factory: core.$constructor<Z> = core.$constructor("Z", (inst, def) => { inst.y(); });
export const wrapped = (() => 1) as Fn;
export const classExpression = class extends Base {};
export const ownAlias: Parse = _parse(1);
export const ownInterface: Ctor = _ctor();
export const arrow = () => 1;
export const count = 3;
export const table = { a: helper(1) };
export const imported: Imported = make();
export const chained = list.map(String);
class Foo {}
"""


def flags(facts: Any) -> dict[str, tuple[str, bool]]:
    return {s.name: (s.kind, s.callable) for s in facts.symbols}


def test_typescript_variables_holding_functions_classes_and_factories_are_callable() -> None:
    got = flags(extract_ts("src/m.ts", TS_SOURCE, "src.m"))
    assert got["Parse"] == ("type", True) and got["Ctor"] == ("interface", True)  # their values are callable
    callable_ = {n for n, (k, c) in got.items() if c and k == "variable"}
    assert callable_ == {
        "annotated",
        "constructed",
        "typeofClass",
        "factory",
        "wrapped",
        "classExpression",
        "ownAlias",
        "ownInterface",
    }
    assert got["arrow"] == ("function", False)  # the kind says it already
    for data in ("count", "table", "imported", "chained"):  # an imported type or a call handed no code: unknown
        assert got[data] == ("variable", False)


PY_SOURCE = b"""import functools
import functools as ft
from collections import namedtuple
from typing import Callable, NamedTuple, TypedDict
import enum


def _load(x):
    return helper(x)


class Base:
    pass


load = _load
square = lambda x: helper(x) * 2
p1 = functools.partial(_load, 1)
p2 = ft.partial(_load, 2)
Point = namedtuple("Point", "x y")
Pair = NamedTuple("Pair", [("a", int)])
Movie = TypedDict("Movie", {"name": str})
Color = enum.Enum("Color", "RED GREEN")
Dyn = type("Dyn", (Base,), {})
hook: Callable[[int], int] = make_hook()
kind = type(load)
DATA = {"a": helper(1)}
partial = 3
"""


def test_python_module_variables_holding_callables_are_callable_and_own_the_uses_in_their_value() -> None:
    facts = extract_python("pkg/m.py", PY_SOURCE, "pkg.m")
    got = flags(facts)
    assert {n for n, (_k, c) in got.items() if c} == {
        "load",
        "square",
        "p1",
        "p2",
        "Point",
        "Pair",
        "Movie",
        "Color",
        "Dyn",
        "hook",
    }
    assert got["kind"] == got["DATA"] == got["partial"] == ("variable", False)  # type(x) with one argument: data
    helper_calls = {s.enclosing for s in facts.sites if s.name == "helper"}
    assert helper_calls == {"pkg.m._load", "pkg.m.square", ""}  # DATA's call stays the module's
    assert {s.enclosing for s in facts.sites if s.name == "_load"} == {"pkg.m.load", "pkg.m.p1", "pkg.m.p2"}


def test_a_factory_name_counts_only_through_the_import_that_binds_it() -> None:
    source = b"def partial(f, x):\n    return f\n\n\nbound = partial(print, 1)\n"
    assert flags(extract_python("m.py", source, "m"))["bound"] == ("variable", False)


def test_go_rust_and_dart_variables_holding_functions_are_callable() -> None:
    go = flags(
        extract_go(
            "p.go", b"package p\nvar f = func(x int) int { return x }\nvar g func()\nvar a, b = func() {}, 3\n", "p"
        )
    )
    assert go == {"f": ("var", True), "g": ("var", True), "a": ("var", True), "b": ("var", False)}
    rust = flags(extract_rust("src/lib.rs", b"pub const ADD: fn(i32) -> i32 = |x| x + 1;\nstatic N: u8 = 1;\n", "c"))
    assert rust["ADD"] == ("const", True) and rust["N"] == ("static", False)
    dart = flags(extract_dart("lib/a.dart", b"final greet = (String n) => n;\nvar data = [1];\n", "a"))
    assert dart["greet"] == ("variable", True) and dart["data"] == ("variable", False)


@pytest.mark.parametrize(
    ("hover", "held"),
    [
        ("var createSlice: (name: string) => { name: string; }", True),
        ("var pick: <T extends Map<string, number>>(x: T) => T", True),
        ("var Again: typeof Foo", True),
        ("var Made: new () => Foo", True),
        ("var both: { (x: number): string; y: number; }", True),
        ("var data: { a: number; }", False),
        ("var list: (A | B)[]", False),
        ("var named: PayloadActionCreator<void>", False),  # a named type: not decided
    ],
)
def test_the_checkers_printed_type_says_whether_a_variable_holds_a_callable(hover: str, held: bool) -> None:
    assert scip_ts.holds_callable(f"```ts\n{hover}\n```") is held


TS_REPO = {
    "package.json": '{"name": "schemas", "version": "1.0.0"}\n',
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "esnext"}}\n',
    "src/core.ts": (
        "export interface Ctor<T> { new (def: unknown): T }\n"
        "export function helper(x: number): number { return x + 1; }\n"
        "export function buildCreate() {\n  return (n: number) => helper(n);\n}\n"
        "export type Make = { (n: number): number };\n"
        "export type Named = { n: number };\n"
        "export function buildMake(): Make {\n  return (n: number) => helper(n);\n}\n"
        "export function buildNamed(): Named {\n  return { n: helper(2) };\n}\n"
        "export function $constructor<T>(name: string, init: (inst: T) => void): Ctor<T> {\n"
        "  return class { constructor(def: unknown) { init(this as unknown as T); } } as unknown as Ctor<T>;\n"
        "}\n"
    ),
    "src/api.ts": (
        'import { helper, buildCreate, buildMake, buildNamed, $constructor, Ctor } from "./core";\n'
        "export const create = buildCreate();\n"
        "export const made = buildMake();\n"
        "export const named = buildNamed();\n"
        "export interface ZodString { check(): number }\n"
        'export const ZodString: Ctor<ZodString> = $constructor("ZodString", (inst: ZodString) => {\n'
        "  inst.check = () => helper(1);\n"
        "});\n"
        "export const LIMITS = { max: helper(3) };\n"
    ),
    "src/use.ts": (
        'import { ZodString } from "./api";\nexport function build(): ZodString {\n  return new ZodString({});\n}\n'
    ),
}

PY_REPO = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "1"\n',
    "calc/__init__.py": "",
    "calc/core.py": "def helper(x):\n    return x + 1\n",
    "calc/api.py": (
        "import functools\n\nfrom calc.core import helper\n\n"
        "square = lambda x: helper(x) * 2\n"
        "bound = functools.partial(helper, 1)\n"
        "TABLE = {'a': helper(1)}\n"
    ),
    "calc/use.py": "from calc.api import square\n\n\ndef run():\n    return square(3)\n",
}


def _rows(answer: dict[str, Any]) -> dict[str, str]:
    """The reached declarations, modules left out (a module that imports a name is a row of its own)."""
    return {n["qualified_name"]: n["kind"] for n in answer["results"]["symbols"] if n["kind"] != "module"}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> StateLayout:
    if not scip_ts.executable().exists() or not scip_python.executable().exists():
        pytest.skip("SCIP-TYPESCRIPT or SCIP-PYTHON UNAVAILABLE: run `make setup` (python -m indexer.setup_analyzers)")
    tmp: Path = tmp_path_factory.mktemp("callables")
    home = tmp / "home"
    ts, py = write_repo(tmp / "schemas", TS_REPO), write_repo(tmp / "calc", PY_REPO)
    assert run_kivgraph(home, "init", "--repository", f"schemas={ts}", "--languages", "typescript").returncode == 0
    assert run_kivgraph(home, "init", "--repository", f"calc={py}", "--languages", "python").returncode == 0
    result = run_kivgraph(home, "index")
    assert result.returncode == 0, result.stderr
    return StateLayout(home / "kivgraph.toml", home / "state")


@pytest.mark.analyzers
def test_a_callable_variable_is_walked_and_listed_by_default_and_a_data_variable_is_not(indexed: StateLayout) -> None:
    with open_current(indexed) as gen:
        ts = get_blast_radius(gen, {"qualified_name": "src.core.helper", "view": "full"})
        # build is reached through ZodString; only the checker's type shows that create (a function type) and
        # made (the repository's one type Make, which has a call signature) hold functions; named holds data
        assert _rows(ts) == {
            "src.api.ZodString": "variable",
            "src.use.build": "function",
            "src.core.buildCreate": "function",
            "src.core.buildMake": "function",
            "src.core.buildNamed": "function",
            "src.api.create": "variable",
            "src.api.made": "variable",
        }
        assert [n.get("callable") for n in ts["results"]["symbols"] if n["kind"] == "variable"] == [True] * 3
        assert ts["results"]["symbol_kinds_default_excluded"] == ["field", "variable"]
        everything = get_blast_radius(gen, {"qualified_name": "src.core.helper", "symbol_kinds": ["*"], "view": "full"})
        assert {"src.api.LIMITS", "src.api.named"} <= set(_rows(everything)) and len(_rows(everything)) == 9
        py = get_blast_radius(gen, {"qualified_name": "calc.core.helper", "view": "full"})
        assert _rows(py) == {"calc.api.square": "variable", "calc.api.bound": "variable", "calc.use.run": "function"}
        assert {n["via_confidence"] for n in py["results"]["symbols"]} == {"EXACT_TYPECHECKED"}
        # a Python data variable's initializer runs as its module's code: the module is reached, never TABLE
        every = get_blast_radius(gen, {"qualified_name": "calc.core.helper", "symbol_kinds": ["*"], "view": "full"})
        assert "calc.api" in {n["qualified_name"] for n in every["results"]["symbols"]}
        assert "calc.api.TABLE" not in _rows(every)
        assert get_symbol(gen, {"qualified_name": "calc.api.square"})["results"]["callable"] is True
        assert "callable" not in get_symbol(gen, {"qualified_name": "calc.api.TABLE"})["results"]
