"""Callers through an interface, an implemented member or an overridden base method (real analyzers).

Each language gets a tiny repository where a method is only ever called through its base type. Its
blast radius and its incoming references must list those callers as dispatch rows (``via`` the method the
call was written against), and a repository analysed without its type checker must never answer COMPLETE
for a member.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.tools.references import find_references
from server.tools.traversal import get_blast_radius, trace_dependencies
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from tests.helpers import row_dicts, run_kivgraph, write_repo

pytestmark = pytest.mark.analyzers

# A mapping on the standard library's MutableMapping: its popitem overrides a base method outside the graph,
# which MutableMapping.clear calls; its __setitem__ is called by ``m[k] = v`` (docs/surface.md §4.8).
PYTHON_OUTSIDE = {
    "store/__init__.py": "",
    "store/mapping.py": (
        "import collections.abc\n"
        "\n\n"
        "class Store(collections.abc.MutableMapping):\n"
        "    def __init__(self) -> None:\n"
        "        self.data: dict = {}\n"
        "\n"
        "    def __getitem__(self, key):\n"
        "        return self.data[key]\n"
        "\n"
        "    def __setitem__(self, key, value) -> None:\n"
        "        self.data[key] = value\n"
        "\n"
        "    def __delitem__(self, key) -> None:\n"
        "        del self.data[key]\n"
        "\n"
        "    def __iter__(self):\n"
        "        return iter(self.data)\n"
        "\n"
        "    def __len__(self) -> int:\n"
        "        return len(self.data)\n"
        "\n"
        "    def popitem(self):\n"
        "        key = next(iter(self.data))\n"
        "        return key, self.data.pop(key)\n"
        "\n"
        "    def keys_sorted(self) -> list:\n"
        "        return sorted(self.data)\n"
        "\n\n"
        "def fill(store: Store) -> None:\n"
        "    store['k'] = 1\n"
        "    store.clear()\n"
        "\n\n"
        "def listing(store: Store) -> list:\n"
        "    return store.keys_sorted()\n"
    ),
}

PYTHON = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "class Handler:\n"
        "    def handle(self, x: int) -> int:\n"
        "        return x\n"
        "\n\n"
        "class Loud(Handler):\n"
        "    def handle(self, x: int) -> int:\n"
        "        return x * 2\n"
        "\n\n"
        "class Louder(Loud):\n"
        "    def handle(self, x: int) -> int:\n"
        "        return x * 3\n"
        "\n\n"
        "class Quiet(Handler):\n"
        "    def handle(self, x: int) -> int:\n"
        "        return 0\n"
    ),
    "pkg/use.py": (
        "from pkg.base import Handler, Loud\n"
        "\n\n"
        "def run(h: Handler) -> int:\n"
        "    return h.handle(1)\n"
        "\n\n"
        "def run_twice(h: Handler) -> int:\n"
        "    return run(h) + run(h)\n"
        "\n\n"
        "def loud_only(h: Loud) -> int:\n"
        "    return h.handle(2)\n"
        "\n\n"
        "def nobody_calls_me() -> int:\n"
        "    return 0\n"
    ),
}

# Members JavaScript calls without naming them: toString for string conversion, [Symbol.iterator] for for..of.
TYPESCRIPT_IMPLICIT = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, '
    '"include": ["src"]}\n',
    "src/money.ts": (
        "export class Money {\n"
        "  constructor(private cents: number) {}\n"
        "  toString(): string {\n"
        "    return `${this.cents / 100}`;\n"
        "  }\n"
        "  plain(): number {\n"
        "    return this.cents;\n"
        "  }\n"
        "}\n"
        "export class Bag implements Iterable<number> {\n"
        "  private items: number[] = [];\n"
        "  [Symbol.iterator](): Iterator<number> {\n"
        "    return this.items[Symbol.iterator]();\n"
        "  }\n"
        "}\n"
        "export function show(m: Money, b: Bag): string {\n"
        "  let n = 0;\n"
        "  for (const x of b) { n += x; }\n"
        "  return 'cost ' + m + String(m.plain() + n);\n"
        "}\n"
    ),
}

TYPESCRIPT = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, '
    '"include": ["src"]}\n',
    "src/shapes.ts": (
        "export interface Shape {\n"
        "  area(): number;\n"
        "}\n"
        "export class Square implements Shape {\n"
        "  area(): number { return 4; }\n"
        "}\n"
        "export class Circle implements Shape {\n"
        "  area(): number { return 3; }\n"
        "}\n"
        "export abstract class Base {\n"
        "  abstract name(): string;\n"
        "  greet(): string { return 'hi ' + this.name(); }\n"
        "}\n"
        "export class Impl extends Base {\n"
        "  name(): string { return 'impl'; }\n"
        "}\n"
    ),
    "src/use.ts": (
        "import { Shape, Base } from './shapes';\n"
        "export function total(shapes: Shape[]): number {\n"
        "  return shapes.reduce((a, s) => a + s.area(), 0);\n"
        "}\n"
        "export function hello(b: Base): string {\n"
        "  return b.greet();\n"
        "}\n"
    ),
}

GO = {
    "go.mod": "module example.com/shapes\n\ngo 1.21\n",
    "shapes/shapes.go": (
        "package shapes\n"
        "\n"
        "type Shape interface {\n"
        "\tArea() float64\n"
        "}\n"
        "\n"
        "type Square struct{ S float64 }\n"
        "\n"
        "func (s Square) Area() float64 { return s.S * s.S }\n"
        "\n"
        "type Circle struct{ R float64 }\n"
        "\n"
        "func (c *Circle) Area() float64 { return 3 * c.R * c.R }\n"
        "\n"
        "func Total(xs []Shape) float64 {\n"
        "\tt := 0.0\n"
        "\tfor _, x := range xs {\n"
        "\t\tt += x.Area()\n"
        "\t}\n"
        "\treturn t\n"
        "}\n"
        "\n"
        "func Report(xs []Shape) float64 { return Total(xs) }\n"
    ),
}

# Generic declarations, indexed without go/types: nothing can tell which types implement the interfaces.
GO_GENERIC = {
    "go.mod": "module example.com/lru\n\ngo 1.22\n",
    "lru/lru.go": (
        "package lru\n"
        "\n"
        "type Cache[K comparable, V any] interface {\n"
        "\tGet(k K) (V, bool)\n"
        "}\n"
        "\n"
        "type Sizer interface{ Len() int }\n"
        "\n"
        "type LRU[K comparable, V any] struct{ m map[K]V }\n"
        "\n"
        "func (c *LRU[K, V]) Get(k K) (V, bool) { v, ok := c.m[k]; return v, ok }\n"
        "\n"
        "func (c *LRU[K, V]) Len() int { return len(c.m) }\n"
        "\n"
        'func Lookup(c Cache[string, int]) int { v, _ := c.Get("a"); return v }\n'
        "\n"
        "type Keyed[K comparable] interface{ Key() K }\n"
        "\n"
        "type Box[T any] struct{ v T }\n"
        "\n"
        "func (b Box[T]) Key() T { return b.v }\n"
        "\n"
        "func KeyOf(k Keyed[int]) int { return k.Key() }\n"
    ),
}

# A method called only through the standard library's io.Writer (and once directly), and one that implements
# fmt.Stringer, handed to fmt only as an any.
GO_OUTSIDE = {
    "go.mod": "module example.com/sink\n\ngo 1.22\n",
    "sink.go": (
        "package sink\n"
        "\n"
        'import (\n\t"fmt"\n\t"io"\n)\n'
        "\n"
        "type File struct{ n int }\n"
        "\n"
        "func (f *File) Write(p []byte) (int, error) { f.n += len(p); return len(p), nil }\n"
        "\n"
        "func Dump(w io.Writer) { w.Write(nil) }\n"
        "\n"
        "func Flush(f *File) { f.Write(nil) }\n"
        "\n"
        "func Run() { f := &File{}; Dump(f); Flush(f) }\n"
        "\n"
        "type Name string\n"
        "\n"
        "func (n Name) String() string { return string(n) }\n"
        "\n"
        'func Hello() { Dump(nil); fmt.Println(Name("n")) }\n'
    ),
}


def _index(tmp: Path, name: str, files: dict[str, str], language: str, env: dict[str, str] | None = None) -> Generation:
    extra: dict[str, Any] = dict(env or {})
    home = tmp / f"home-{name}"
    repo = write_repo(tmp / name, files)
    assert run_kivgraph(home, "init", str(repo), "--languages", language, **extra).returncode == 0
    result = run_kivgraph(home, "index", "--json", **extra)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])["result"]
    assert report["passed"]
    return open_current(StateLayout(home / "kivgraph.toml", home / "state"))


@pytest.fixture(scope="module")
def generations(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Generation]]:
    tmp = tmp_path_factory.mktemp("dispatch")
    gens = {
        "py": _index(tmp, "py", PYTHON, "python"),
        "ts": _index(tmp, "ts", TYPESCRIPT, "typescript"),
        "go": _index(tmp, "go", GO, "go"),
        "ts-implicit": _index(tmp, "tsimp", TYPESCRIPT_IMPLICIT, "typescript"),
        "py-outside": _index(tmp, "pyout", PYTHON_OUTSIDE, "python"),
        "py-fallback": _index(tmp, "pyfb", PYTHON, "python", {"KIVGRAPH_SCIP_PYTHON": str(tmp / "no-such-analyzer")}),
        "go-generic": _index(tmp, "gogen", GO_GENERIC, "go"),
        "go-generic-fallback": _index(tmp, "gofb", GO_GENERIC, "go", {"KIVGRAPH_GO": str(tmp / "no-such-go")}),
        "go-outside": _index(tmp, "gooutx", GO_OUTSIDE, "go"),
        "go-outside-fallback": _index(tmp, "goout", GO_OUTSIDE, "go", {"KIVGRAPH_GO": str(tmp / "no-such-go")}),
    }
    yield gens
    for g in gens.values():
        g.close()


def _blast(gen: Generation, qn: str) -> dict[str, Any]:
    return get_blast_radius(gen, {"qualified_name": qn, "view": "full"})


def _refs(gen: Generation, qn: str) -> dict[str, Any]:
    return find_references(gen, {"qualified_name": qn, "view": "full"})


def _rows(answer: dict[str, Any]) -> set[tuple[str, int, str]]:
    return {(s["qualified_name"], s["depth"], s.get("dispatch_via", "")) for s in answer["results"]["symbols"]}


def test_python_an_override_reaches_the_callers_of_its_base_method(generations: dict[str, Generation]) -> None:
    answer = _blast(generations["py"], "pkg.base.Loud.handle")
    assert _rows(answer) == {
        ("pkg.use.run", 1, "pkg.base.Handler.handle"),  # h: Handler, h.handle(): may run Loud.handle
        ("pkg.use.loud_only", 1, ""),  # written against Loud.handle itself
        ("pkg.base.Louder.handle", 1, ""),  # its own override: a change of signature reaches it
        ("pkg.use.run_twice", 2, ""),
    }
    assert answer["results"]["dispatch_through"] == ["pkg.base.Handler.handle"]
    assert answer["completeness"]["verdict"] == "COMPLETE"


def test_python_dispatch_climbs_every_level_of_the_hierarchy(generations: dict[str, Generation]) -> None:
    answer = _blast(generations["py"], "pkg.base.Louder.handle")
    assert _rows(answer) == {
        ("pkg.use.loud_only", 1, "pkg.base.Loud.handle"),
        ("pkg.use.run", 1, "pkg.base.Handler.handle"),
        ("pkg.use.run_twice", 2, ""),
    }
    refs = _refs(generations["py"], "pkg.base.Louder.handle")["results"]
    assert refs["dispatch_through"] == ["pkg.base.Loud.handle", "pkg.base.Handler.handle"]
    assert {(r["qualified_name"], r["via"]) for r in refs["references"]} == {
        ("pkg.use.loud_only", "pkg.base.Loud.handle"),
        ("pkg.use.run", "pkg.base.Handler.handle"),
    }


def test_python_a_sibling_override_is_no_caller(generations: dict[str, Generation]) -> None:
    refs = _refs(generations["py"], "pkg.base.Quiet.handle")["results"]
    names = {r["qualified_name"] for r in refs["references"]}
    assert names == {"pkg.use.run"}  # not Loud.handle or Louder.handle, which override the same base


def test_python_the_base_method_keeps_its_direct_callers_and_overriders(generations: dict[str, Generation]) -> None:
    answer = _blast(generations["py"], "pkg.base.Handler.handle")
    direct = {(q, d) for q, d, via in _rows(answer) if not via}
    assert ("pkg.use.run", 1) in direct and ("pkg.base.Loud.handle", 1) in direct
    assert ("pkg.base.Louder.handle", 2) not in direct  # an override of an override does not use its base


def test_typescript_an_interface_member_and_an_abstract_override_reach_their_callers(
    generations: dict[str, Generation],
) -> None:
    gen = generations["ts"]
    square = _blast(gen, "src.shapes.Square.area")
    assert _rows(square) == {("src.use.total", 1, "src.shapes.Shape.area")}
    refs = _refs(gen, "src.shapes.Circle.area")["results"]  # one of two implementations: still bridged
    assert [(r["qualified_name"], r["via"]) for r in refs["references"]] == [("src.use.total", "src.shapes.Shape.area")]
    impl = _blast(gen, "src.shapes.Impl.name")
    assert _rows(impl) == {("src.shapes.Base.greet", 1, "src.shapes.Base.name"), ("src.use.hello", 2, "")}


def test_go_a_method_that_satisfies_an_interface_reaches_calls_through_it(generations: dict[str, Generation]) -> None:
    gen = generations["go"]
    answer = _blast(gen, "Circle.Area")
    assert _rows(answer) == {("Total", 1, "Shape.Area"), ("Report", 2, "")}
    refs = _refs(gen, "Square.Area")
    assert refs["total"] == 1 and refs["results"]["references"][0]["via"] == "Shape.Area"
    # the compact view says which rows came by dispatch
    compact = get_blast_radius(gen, {"qualified_name": "Circle.Area"})["results"]
    assert "dispatch_via" in compact["columns"]
    assert any(r["dispatch_via"] == "Shape.Area" for r in row_dicts(compact))


def test_go_a_type_bridges_only_through_its_methods(generations: dict[str, Generation]) -> None:
    answer = _blast(generations["go"], "Square")
    # the type's own IMPLEMENTS edge bridges nothing; its method Area (a user of the type) does
    assert _rows(answer) == {("Square.Area", 1, ""), ("Total", 2, "Shape.Area"), ("Report", 3, "")}


def test_without_the_type_checker_a_member_is_never_complete(generations: dict[str, Generation]) -> None:
    gen = generations["py-fallback"]
    answer = _blast(gen, "pkg.base.Loud.handle")
    assert answer["completeness"]["verdict"] == "LOWER_BOUND"
    assert "without its type checker" in answer["completeness"]["dispatch_unknown"]
    assert "pkg.base.Loud.handle" in answer["completeness"]["dispatch_unknown"]
    # a top-level function is not reached by dispatch: its verdict rests on the edges alone
    plain = _blast(gen, "pkg.use.nobody_calls_me")
    assert "dispatch_unknown" not in plain["completeness"]


def test_go_without_the_type_checker_no_interface_or_generic_method_is_complete(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-generic-fallback"]
    # an interface nobody names: no edge reaches it, yet its implementations are unknown, not absent
    sizer = _blast(gen, "Sizer")
    assert sizer["total"] == 0
    assert sizer["completeness"]["verdict"] == "LOWER_BOUND"
    assert "types that implement Sizer" in sizer["completeness"]["dispatch_unknown"]
    cache = _blast(gen, "Cache")
    assert cache["completeness"]["verdict"] == "LOWER_BOUND" and cache["completeness"]["dispatch_unknown"]
    # the generic type's method: the call through Cache[string, int] may run it, which syntax cannot tell
    get = _blast(gen, "LRU.Get")
    assert _rows(get) == set()
    assert get["completeness"]["verdict"] == "LOWER_BOUND"
    assert "LRU.Get" in get["completeness"]["dispatch_unknown"]
    # the call through the instantiated interface still binds (CANDIDATE) to the generic interface's method
    refs = _refs(gen, "Cache.Get")["results"]["references"]
    assert [(r["qualified_name"], r["confidence"]) for r in refs] == [("Lookup", "CANDIDATE")]
    implementations = find_references(gen, {"qualified_name": "Cache", "edge_kinds": ["IMPLEMENTS"]})
    assert implementations["total"] == 0 and "not proof of absence" in implementations["guidance"]


def test_go_generic_implementations_are_found_and_an_undecided_one_says_so_on_both_sides(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-generic"]
    get = _blast(gen, "LRU.Get")
    assert _rows(get) == {("Lookup", 1, "Cache.Get")}  # the call through Cache[string, int]
    assert get["completeness"]["verdict"] == "COMPLETE"
    # Box[T any] has Keyed[K comparable]'s method: some instantiations implement it, others cannot
    box = _blast(gen, "Box.Key")["completeness"]
    assert box["verdict"] == "LOWER_BOUND"
    assert "could not decide whether method Box.Key implements" in box["dispatch_unknown"]
    assert "calls through that interface may run Box.Key" in box["dispatch_unknown"]
    keyed = _blast(gen, "Keyed.Key")
    assert _rows(keyed) == {("KeyOf", 1, "")}
    assert "Keyed.Key may have implementations the graph does not list" in keyed["completeness"]["dispatch_unknown"]
    implementations = find_references(gen, {"qualified_name": "Keyed", "edge_kinds": ["IMPLEMENTS"], "view": "full"})
    assert implementations["total"] == 0 and "not proof of absence" in implementations["guidance"]
    ((detail, where),) = implementations["results"]["unbound"]["DISPATCH_UNDECIDED"].items()
    assert "could not decide whether type Box implements" in detail and where["in"] == {"gogen:lru/lru.go": ["Box@19"]}


# --- find_references relation over the same hierarchies (docs/surface.md §11.5.1) ------------------------------


def _relation(gen: Generation, relation: str, **selector: str) -> dict[str, Any]:
    return find_references(gen, {**selector, "relation": relation, "view": "full"})


def test_relations_follow_go_generics_and_name_an_undecided_pair(generations: dict[str, Generation]) -> None:
    gen = generations["go-generic"]
    cache = _relation(gen, "implementations", qualified_name="Cache")
    assert {n["qualified_name"] for n in cache["results"]["nodes"]} == {"LRU"}
    assert cache["completeness"]["verdict"] == "COMPLETE"
    keyed = _relation(gen, "implementations", qualified_name="Keyed")
    assert keyed["total"] == 0 and keyed["completeness"]["verdict"] == "LOWER_BOUND"
    assert "could not decide whether type Box implements" in keyed["completeness"]["dispatch_unknown"]
    box = _relation(gen, "supertypes", qualified_name="Box")
    assert box["completeness"]["verdict"] == "LOWER_BOUND" and box["completeness"]["dispatch_unknown"]


def test_relations_without_the_type_checker_are_never_complete(generations: dict[str, Generation]) -> None:
    sizer = _relation(generations["go-generic-fallback"], "implementations", qualified_name="Sizer")
    assert sizer["total"] == 0 and sizer["completeness"]["verdict"] == "LOWER_BOUND"
    assert "types that implement Sizer" in sizer["completeness"]["dispatch_unknown"]
    handle = _relation(generations["py-fallback"], "implementations", qualified_name="pkg.base.Handler.handle")
    assert handle["completeness"]["verdict"] == "LOWER_BOUND"
    assert "without its type checker" in handle["completeness"]["dispatch_unknown"]
    exact = _relation(generations["py"], "implementations", qualified_name="pkg.base.Handler.handle")
    assert {(n["qualified_name"], n["depth"]) for n in exact["results"]["nodes"]} == {
        ("pkg.base.Loud.handle", 1),
        ("pkg.base.Quiet.handle", 1),
        ("pkg.base.Louder.handle", 2),
    }
    assert exact["completeness"]["verdict"] == "COMPLETE"


def test_go_without_the_type_checker_a_call_through_a_standard_interface_binds_to_nothing_and_says_so(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-outside-fallback"]
    write = _blast(gen, "File.Write")
    # the direct call binds by syntax (CANDIDATE); w.Write through io.Writer is bound to no method of that name
    assert _rows(write) == {("Flush", 1, ""), ("Run", 2, "")}
    completeness = write["completeness"]
    assert completeness["verdict"] == "LOWER_BOUND"
    assert "calls through a base class or an interface" in completeness["dispatch_unknown"]
    assert "implements_outside" not in completeness  # only go/types pairs a type with io.Writer
    refs = _refs(gen, "File.Write")["results"]["references"]
    assert [(r["qualified_name"], r["confidence"], r.get("via", "")) for r in refs] == [("Flush", "CANDIDATE", "")]


def test_go_a_call_through_io_writer_reaches_the_module_writer_in_every_view(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-outside"]
    write = _blast(gen, "File.Write")
    assert _rows(write) == {("Flush", 1, ""), ("Dump", 1, "io.Writer.Write"), ("Run", 2, ""), ("Hello", 2, "")}
    assert write["results"]["dispatch_through"] == ["io.Writer.Write"]
    completeness = write["completeness"]
    assert completeness["implements_outside"] == ["io.Writer.Write"]
    # Run hands its *File to Dump as an io.Writer: code outside the graph may call Write through it
    assert completeness["verdict"] == "LOWER_BOUND"
    assert [(b["reason"], b["in"]) for b in completeness["blind_spots"]] == [("EXTERNAL_CONVERSION", "Run")]
    compact = get_blast_radius(gen, {"qualified_name": "File.Write"})
    assert any(r["dispatch_via"] == "io.Writer.Write" for r in row_dicts(compact["results"]))
    assert compact["completeness"]["implements_outside"] == ["io.Writer.Write"]
    refs = find_references(gen, {"qualified_name": "File.Write"})
    assert refs["total"] == 2 and any(r["via"] == "io.Writer.Write" for r in row_dicts(refs["results"]))
    assert refs["results"]["implements_outside"] == ["io.Writer.Write"]
    assert list(refs["results"]["unbound"]) == ["EXTERNAL_CONVERSION"]


def test_go_a_method_of_an_outside_interface_nobody_calls_is_an_absence_that_names_the_interface(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-outside"]
    refs = find_references(gen, {"qualified_name": "Name.String"})
    assert refs["total"] == 0 and "unbound" not in refs["results"]
    assert refs["results"]["implements_outside"] == ["fmt.Stringer.String"]
    assert "implements fmt.Stringer.String" in refs["guidance"] and "may still call it" in refs["guidance"]
    blast = _blast(gen, "Name.String")["completeness"]
    assert blast["verdict"] == "COMPLETE" and blast["implements_outside"] == ["fmt.Stringer.String"]


def test_go_relations_to_outside_interfaces_are_not_unbound_uses_of_an_outgoing_answer(
    generations: dict[str, Generation],
) -> None:
    gen = generations["go-outside"]
    for qn in ("Dump", "Run", "File.Write"):
        out = find_references(gen, {"qualified_name": qn, "direction": "outgoing", "view": "full"})
        assert "unbound" not in out["results"] and out["coverage"]["unresolved_related"] == 0, qn
    trace = trace_dependencies(gen, {"qualified_name": "Run", "view": "full"})
    assert "unbound" not in trace["results"]


def test_python_calls_nobody_writes_are_blind_spots_of_their_declaration_alone(
    generations: dict[str, Generation],
) -> None:
    """``store['k'] = 1`` calls Store.__setitem__ and MutableMapping.clear calls Store.popitem, and no analyzer
    records either call: both answers say so rather than COMPLETE; a plain method's answer stays complete."""
    gen = generations["py-outside"]
    setitem = _blast(gen, "store.mapping.Store.__setitem__")
    assert setitem["completeness"]["verdict"] == "LOWER_BOUND"
    spots = setitem["completeness"]["blind_spots"]
    assert [(b["reason"], b["in"]) for b in spots] == [("IMPLICIT_CALL", "store.mapping.Store.__setitem__")]
    assert "subscript assignment" in spots[0]["detail"]
    popitem = _blast(gen, "store.mapping.Store.popitem")
    assert popitem["completeness"]["verdict"] == "LOWER_BOUND"
    spots = popitem["completeness"]["blind_spots"]
    assert [(b["reason"], b["in"]) for b in spots] == [("EXTERNAL_OVERRIDE", "store.mapping.Store.popitem")]
    assert "MutableMapping.popitem" in spots[0]["detail"]
    refs = _refs(gen, "store.mapping.Store.popitem")
    assert refs["total"] == 0 and list(refs["results"]["unbound"]) == ["EXTERNAL_OVERRIDE"]
    # one special method's row is not a blind spot of another's: __getitem__ names only its own
    getitem = _blast(gen, "store.mapping.Store.__getitem__")
    assert [b["in"] for b in getitem["completeness"]["blind_spots"]] == ["store.mapping.Store.__getitem__"]
    plain = _blast(gen, "store.mapping.Store.keys_sorted")
    assert _rows(plain) == {("store.mapping.listing", 1, "")}
    assert plain["completeness"]["verdict"] == "COMPLETE"


def test_typescript_members_the_language_calls_unnamed_are_blind_spots_of_themselves(
    generations: dict[str, Generation],
) -> None:
    gen = generations["ts-implicit"]
    to_string = _blast(gen, "Money.toString")
    assert to_string["total"] == 0 and to_string["completeness"]["verdict"] == "LOWER_BOUND"
    spots = to_string["completeness"]["blind_spots"]
    assert [(b["reason"], b["in"]) for b in spots] == [("IMPLICIT_CALL", "src.money.Money.toString")]
    assert "string conversion" in spots[0]["detail"]
    symbols = {s["qualified_name"] for s in find_symbol_names(gen, "Symbol.iterator")}
    iterator = next(iter(symbols))
    spots = _blast(gen, iterator)["completeness"]["blind_spots"]
    assert [b["reason"] for b in spots] == ["IMPLICIT_CALL"] and "for..of" in spots[0]["detail"]
    plain = _blast(gen, "Money.plain")
    assert _rows(plain) == {("src.money.show", 1, "")}
    assert plain["completeness"]["verdict"] == "COMPLETE"


def find_symbol_names(gen: Generation, name: str) -> list[dict[str, Any]]:
    return [s for s in gen_symbols(gen) if name in s["qualified_name"]]


def gen_symbols(gen: Generation) -> list[dict[str, Any]]:
    return [{"qualified_name": s.qualified_name} for s in gen.declarations("tsimp", "src/money.ts")]
