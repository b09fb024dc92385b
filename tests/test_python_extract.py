"""Python extraction on real tree-sitter: declarations, spans, signatures, docs, sites, failures."""

from __future__ import annotations

import textwrap

import pytest

from indexer.facts import FileFacts, Site, SymbolFact
from indexer.languages import python as py
from indexer.languages.python import sites as S


def _extract(code: str, path: str = "pkg/mod.py", package: str = "pkg.mod") -> FileFacts:
    return py.extract(path, textwrap.dedent(code).lstrip("\n").encode(), package)


def _symbols(facts: FileFacts) -> dict[str, SymbolFact]:
    return {s.qualified_name: s for s in facts.symbols}


def _sites(facts: FileFacts, kind: str) -> list[Site]:
    return [s for s in facts.sites if s.kind == kind]


def test_the_module_interface_constants_are_the_documented_ones() -> None:
    assert py.LANGUAGE == "python"
    assert py.EXTENSIONS == (".py", ".pyi")
    assert py.EXTRACTOR_VERSION.startswith("python-ts-")


@pytest.mark.parametrize(
    ("path", "all_paths", "expected"),
    [
        ("src/click/core.py", frozenset({"src/click/core.py"}), "click.core"),
        ("src/click/__init__.py", frozenset({"src/click/__init__.py"}), "click"),
        ("src/tool.py", frozenset({"src/tool.py", "src/__init__.py"}), "src.tool"),
        ("tests/test_x.py", frozenset(), "tests.test_x"),
        ("a/b/__init__.py", frozenset(), "a.b"),
        ("a/b/types.pyi", frozenset(), "a.b.types"),
        ("setup.py", frozenset(), "setup"),
        ("__init__.py", frozenset(), "__init__"),
    ],
)
def test_package_for_turns_a_path_into_its_dotted_module_name(
    path: str, all_paths: frozenset[str], expected: str
) -> None:
    assert py.package_for(path, all_paths) == expected


def test_every_file_has_one_module_symbol_spanning_the_file_with_its_docstring_summary() -> None:
    facts = _extract(
        '''
        """Tools for shapes.

        Second paragraph is not part of the summary.
        """

        X = 1
    ''',
        path="pkg/tools.py",
        package="pkg.tools",
    )
    module = facts.symbols[0]
    assert (module.kind, module.name, module.qualified_name, module.container) == ("module", "tools", "pkg.tools", "")
    assert (module.start_line, module.start_col, module.end_line, module.end_col) == (1, 0, 6, 5)
    assert module.doc == "Tools for shapes."
    assert [s.kind for s in facts.symbols].count("module") == 1


def test_an_empty_file_still_has_its_module_symbol() -> None:
    facts = py.extract("pkg/__init__.py", b"", "pkg")
    assert facts.status == "indexed"
    assert [(s.kind, s.qualified_name, s.name) for s in facts.symbols] == [("module", "pkg", "pkg")]


def test_functions_methods_classes_and_nested_functions_get_qualified_names_and_containers() -> None:
    facts = _extract("""
        class Shape:
            def area(self):
                def helper():
                    return 1
                return helper()

            class Inner:
                pass

        def outer():
            def inner():
                pass
            class Local:
                def run(self):
                    pass
    """)
    got = {qn: (s.kind, s.container) for qn, s in _symbols(facts).items()}
    assert got == {
        "pkg.mod": ("module", ""),
        "pkg.mod.Shape": ("class", "pkg.mod"),
        "pkg.mod.Shape.area": ("method", "pkg.mod.Shape"),
        "pkg.mod.Shape.area.helper": ("function", "pkg.mod.Shape.area"),
        "pkg.mod.Shape.Inner": ("class", "pkg.mod.Shape"),
        "pkg.mod.outer": ("function", "pkg.mod"),
        "pkg.mod.outer.inner": ("function", "pkg.mod.outer"),
        "pkg.mod.outer.Local": ("class", "pkg.mod.outer"),
        "pkg.mod.outer.Local.run": ("method", "pkg.mod.outer.Local"),
    }


def test_a_decorated_definition_starts_at_its_first_decorator_and_ends_with_its_body() -> None:
    facts = _extract("""
        import functools

        @functools.cache
        @other
        def cached(x):
            return x
    """)
    sym = _symbols(facts)["pkg.mod.cached"]
    assert (sym.start_line, sym.start_col, sym.end_line, sym.end_col) == (3, 0, 6, 12)


def test_signatures_keep_async_parameters_and_return_type_with_whitespace_collapsed() -> None:
    facts = _extract("""
        async def fetch(
            url: str,
            *,
            timeout: float = 1.0,
        ) -> bytes:
            return b""

        class Circle(Shape, metaclass=Meta):
            def area(self) -> float:
                return 0.0

        class Plain:
            pass
    """)
    syms = _symbols(facts)
    assert syms["pkg.mod.fetch"].signature == "async def fetch(url: str, *, timeout: float = 1.0) -> bytes"
    assert syms["pkg.mod.Circle"].signature == "class Circle(Shape, metaclass=Meta)"
    assert syms["pkg.mod.Circle.area"].signature == "def area(self) -> float"
    assert syms["pkg.mod.Plain"].signature == "class Plain"


def test_a_very_long_signature_is_cut_to_about_two_hundred_characters() -> None:
    params = ", ".join(f"parameter_{i}: int" for i in range(40))
    facts = _extract(f"def wide({params}):\n    pass\n")
    sig = _symbols(facts)["pkg.mod.wide"].signature
    assert len(sig) <= 200 and sig.startswith("def wide(parameter_0: int") and sig.endswith("...")


def test_docstrings_give_their_first_paragraph_on_one_line() -> None:
    facts = _extract('''
        def documented():
            """Compute the thing
            across two lines.

            Details that are not the summary.
            """

        class Documented:
            r\'\'\'Raw docstring.\'\'\'

        def undocumented():
            x = "not a docstring"
    ''')
    syms = _symbols(facts)
    assert syms["pkg.mod.documented"].doc == "Compute the thing across two lines."
    assert syms["pkg.mod.Documented"].doc == "Raw docstring."
    assert syms["pkg.mod.undocumented"].doc == ""


def test_exported_means_no_leading_underscore_or_a_dunder() -> None:
    facts = _extract("""
        def public(): pass
        def _private(): pass
        class Thing:
            def __init__(self): pass
            def __mangled(self): pass
    """)
    syms = _symbols(facts)
    assert syms["pkg.mod.public"].exported is True
    assert syms["pkg.mod._private"].exported is False
    assert syms["pkg.mod.Thing.__init__"].exported is True
    assert syms["pkg.mod.Thing.__mangled"].exported is False


def test_module_level_variables_are_plain_and_annotated_assignment_targets_only() -> None:
    facts = _extract("""
        __all__ = ["a"]
        LIMIT: int = 10
        declared: str
        a = b = 3
        x, y = 1, 2
        counter = 0
        counter += 1
        counter = 5
        for loop_var in range(3):
            pass
        if True:
            conditional = 1

        def f():
            local = 1

        class C:
            attr = 2
    """)
    variables = {s.qualified_name: s for s in facts.symbols if s.kind == "variable"}
    assert set(variables) == {
        "pkg.mod.__all__",
        "pkg.mod.LIMIT",
        "pkg.mod.declared",
        "pkg.mod.a",
        "pkg.mod.b",
        "pkg.mod.counter",
        "pkg.mod.conditional",
    }
    assert variables["pkg.mod.LIMIT"].signature == "LIMIT: int"
    assert variables["pkg.mod.counter"].start_line == 6  # a re-assigned variable is declared by its first assignment
    assert variables["pkg.mod.a"].container == "pkg.mod"


def test_conditional_redefinitions_keep_the_first_name_and_suffix_the_others() -> None:
    facts = _extract("""
        import sys
        if sys.platform == "win32":
            def home():
                def inner(): pass
        else:
            def home():
                def inner(): pass

        class Box:
            @property
            def size(self): return 1
            @size.setter
            def size(self, value): pass
    """)
    qns = [s.qualified_name for s in facts.symbols]
    assert qns.count("pkg.mod.home") == 1 and "pkg.mod.home#2" in qns
    assert "pkg.mod.home.inner" in qns and "pkg.mod.home#2.inner" in qns
    assert "pkg.mod.Box.size" in qns and "pkg.mod.Box.size#2" in qns
    assert len(qns) == len(set(qns))
    second = _symbols(facts)["pkg.mod.home#2"]
    assert second.name == "home" and second.start_line == 6


def test_a_syntax_error_keeps_what_parses_and_lists_the_names_on_the_lines_that_do_not() -> None:
    facts = _extract("""
        def fine():
            return 1

        def broken(x:
            return x

        def after():
            return fine()
    """)
    assert facts.status == "partial"
    assert facts.reason.startswith("syntax error at line 4; lines 4-5 not parsed")
    assert [s.qualified_name for s in facts.symbols] == ["pkg.mod", "pkg.mod.fine", "pkg.mod.after"]
    assert [(s.kind, s.name, s.line, s.enclosing) for s in facts.sites] == [("call", "fine", 8, "pkg.mod.after")]
    assert facts.unparsed == (("broken", 4, 4), ("x", 4, 11), ("x", 5, 11))
    assert (facts.path, facts.package, facts.language) == ("pkg/mod.py", "pkg.mod", "python")


def test_an_unfinished_line_inside_a_function_loses_only_that_line() -> None:
    facts = _extract("""
        def first():
            value = compute(1,

        def second():
            return helper(2)

        class Box:
            def size(self):
                return 1
    """)
    assert facts.status == "partial" and "line 2" in facts.reason
    assert [s.qualified_name for s in facts.symbols] == [
        "pkg.mod",
        "pkg.mod.first",
        "pkg.mod.second",
        "pkg.mod.Box",
        "pkg.mod.Box.size",
    ]
    assert ("compute", 2) in {(n, line) for n, line, _c in facts.unparsed}


def test_imports_become_sites_with_module_alias_and_relative_spec() -> None:
    facts = _extract("""
        import os.path
        import numpy as np
        from . import sibling
        from ..core import Thing as T, other
        from pkg.star import *
    """)
    rows = [(s.kind, s.name, s.extra, s.line) for s in facts.sites if s.kind in (S.IMPORT, S.FROM, S.STAR)]
    assert rows == [
        ("import", "os.path", ("",), 1),
        ("import", "numpy", ("np",), 2),
        ("from", "sibling", (".", "sibling"), 3),
        ("from", "Thing", ("..core", "T"), 4),
        ("from", "other", ("..core", "other"), 4),
        ("star", "pkg.star", (), 5),
    ]


def test_call_sites_record_the_callee_chain_enclosing_declaration_and_head_binding() -> None:
    facts = _extract("""
        import helpers

        class Worker:
            def run(self, job):
                self.prepare()
                super().run()
                helpers.log("x")
                job.execute()
                Worker.build().start()
                len(job)

        helpers.setup()
    """)
    calls = {(s.name, s.enclosing, s.extra[:2]) for s in _sites(facts, S.CALL)}
    assert calls == {
        ("self.prepare", "pkg.mod.Worker.run", ("self", "pkg.mod.Worker")),
        ("super().run", "pkg.mod.Worker.run", ("super", "pkg.mod.Worker")),
        ("helpers.log", "pkg.mod.Worker.run", ("module", "")),
        ("job.execute", "pkg.mod.Worker.run", ("untyped", "")),
        ("Worker.build", "pkg.mod.Worker.run", ("module", "")),
        ("Worker.build().start", "pkg.mod.Worker.run", ("module", "")),
        ("helpers.setup", "", ("module", "")),
    }  # len() is a builtin: no site at all


def test_a_call_on_an_expression_receiver_keeps_its_text_and_literals_are_silent() -> None:
    facts = _extract("""
        def f(items):
            items[0].close()
            ", ".join(items)
    """)
    calls = [(s.name, s.extra) for s in _sites(facts, S.CALL)]
    assert calls == [("?.close", ("unknown", "", "items[0].close"))]


def test_locals_are_not_references_but_typed_locals_leave_binding_hints() -> None:
    facts = _extract("""
        from shapes import Circle

        def f(radius: float, shape: "Circle", other=None):
            c = Circle(radius)
            total = radius * 2
            return c, total, other
    """)
    refs = [s.name for s in _sites(facts, S.REF)]
    assert refs == []  # reading a local names no declaration, typed or not
    binds = {s.name: s.extra for s in _sites(facts, S.BIND)}
    assert binds["shape"] == ("Circle", "module", "", "ann")
    assert binds["c"] == ("Circle()", "module", "", "value")
    assert binds["radius"] == ("float", "module", "", "ann")
    assert "total" not in binds and "other" not in binds


def test_a_local_assigned_two_different_values_has_no_binding_hint() -> None:
    facts = _extract("""
        def f(flag):
            x = A()
            if flag:
                x = B()
            x.run()
    """)
    assert [s.name for s in _sites(facts, S.BIND)] == []
    (call,) = [s for s in _sites(facts, S.CALL) if s.name == "x.run"]
    assert call.extra == ("untyped", "")


def test_annotations_are_type_sites_unwrapping_optional_and_plain_string_forward_references() -> None:
    facts = _extract("""
        from typing import Literal, Optional

        def f(a: Optional[Foo], b: "mod.Bar", c: Literal["nope"], d: list[Baz] | None) -> Qux:
            pass
    """)
    types = [s.name for s in _sites(facts, S.TYPE)]
    assert types == [
        "Optional",
        "Foo",
        "mod.Bar",
        "Literal",
        "Baz",
        "Qux",
    ]  # list is a builtin; Literal args are not names
    assert all(s.enclosing == "pkg.mod.f" for s in _sites(facts, S.TYPE))
    (returns,) = _sites(facts, S.RETURNS)
    assert (returns.name, returns.enclosing) == ("Qux", "pkg.mod.f")
    binds = {s.name: s.extra[0] for s in _sites(facts, S.BIND)}
    assert binds == {"a": "Foo", "b": "mod.Bar", "c": "Literal", "d": "list"}


def test_bases_decorators_and_callbacks_are_their_own_site_kinds() -> None:
    facts = _extract("""
        import abc

        @register
        @app.route("/")
        class Shape(abc.ABC, Generic[T]):
            pass

        def use(items):
            sorted(items, key=weight)
            items.sort(key=Shape.area)
    """)
    assert [(s.name, s.enclosing) for s in _sites(facts, S.BASE)] == [
        ("abc.ABC", "pkg.mod.Shape"),
        ("Generic", "pkg.mod.Shape"),
    ]
    assert {s.name for s in _sites(facts, S.DECORATOR)} == {"register", "app.route"}
    assert all(s.enclosing == "pkg.mod.Shape" for s in _sites(facts, S.DECORATOR))
    assert {s.name for s in _sites(facts, S.ARG)} == {"weight", "Shape.area"}


def test_self_attributes_assigned_in_methods_become_attribute_hints_of_the_class() -> None:
    facts = _extract("""
        class Canvas:
            size: int

            def __init__(self, painter: Painter):
                self.painter = painter
                self.items = []
                self.other = make()
                self.other = make_else()
    """)
    attrs = {s.name: (s.enclosing, s.extra) for s in _sites(facts, S.ATTR)}
    assert attrs["size"] == ("pkg.mod.Canvas", ("int", "module", "", "ann"))
    assert attrs["painter"] == ("pkg.mod.Canvas", ("painter", "local", "pkg.mod.Canvas.__init__", "value"))
    assert attrs["items"] == ("pkg.mod.Canvas", ("list()", "module", "", "value"))
    assert attrs["other"] == ("pkg.mod.Canvas", ("", "", "", "value"))


def test_walrus_comprehension_and_lambda_names_are_locals_not_module_names() -> None:
    facts = _extract("""
        import re

        def f(text):
            if (m := re.match("x", text)):
                m.group()
            return [w.upper() for w in text], (lambda q: q.strip())
    """)
    calls = {s.name: s.extra[0] for s in _sites(facts, S.CALL)}
    assert calls == {"re.match": "module", "m.group": "untyped", "w.upper": "untyped", "q.strip": "untyped"}


def test_class_body_names_are_not_visible_inside_methods() -> None:
    facts = _extract("""
        class C:
            helper = staticmethod(len)

            def run(self):
                return helper()
    """)
    (call,) = [s for s in _sites(facts, S.CALL) if s.name == "helper"]
    assert call.extra == ("module", "")


def test_deeply_nested_expressions_do_not_overflow_the_stack() -> None:
    source = "x = " + " + ".join(["a"] * 3000) + "\n"
    facts = py.extract("deep.py", source.encode(), "deep")
    assert facts.status == "indexed"
    assert len(_sites(facts, S.REF)) == 3000


def test_builtin_bases_and_metaclasses_are_kept_so_the_resolver_knows_members_may_come_from_elsewhere() -> None:
    facts = _extract("""
        class Registry(dict, object):
            pass

        class Plugin(Base, metaclass=Meta):
            pass
    """)
    assert [(s.name, s.enclosing) for s in _sites(facts, S.BASE)] == [
        ("dict", "pkg.mod.Registry"),
        ("Base", "pkg.mod.Plugin"),
    ]  # object adds nothing
    assert [(s.name, s.enclosing) for s in _sites(facts, S.METACLASS)] == [("Meta", "pkg.mod.Plugin")]


def test_tuple_unpacked_self_attributes_are_known_without_a_value() -> None:
    facts = _extract("""
        class Pair:
            def __init__(self):
                self.left, (self.right, other) = build()
    """)
    attrs = {s.name: s.extra for s in _sites(facts, S.ATTR)}
    assert attrs == {"left": ("", "", "", "value"), "right": ("", "", "", "value")}


def test_a_comprehension_in_a_class_body_sees_class_names_only_in_its_first_iterable() -> None:
    facts = _extract("""
        class Table:
            columns = ["a"]
            ok = [c for c in columns]
            bad = [c for c in range(3) if columns]
    """)
    refs = [(s.name, s.line, s.extra) for s in _sites(facts, S.REF) if s.name == "columns"]
    assert refs == [("columns", 4, ("module", ""))]  # line 3's is a class-body local; line 4's is not


def test_a_syntax_error_is_located_at_the_innermost_error_not_at_a_wrapping_one() -> None:
    # Valid Python that tree-sitter-python cannot parse; its recovery wraps the whole file in an ERROR node.
    facts = _extract("""
        import os

        class T:
            def a(self):
                def f():
                    (bar.
                baz)
                    (bar.
                baz(
                ))
                return f
    """)
    assert facts.status == "partial"
    assert facts.reason.startswith("syntax error at line 6; lines 6-10 not parsed")
    assert [s.qualified_name for s in facts.symbols] == ["pkg.mod", "pkg.mod.T", "pkg.mod.T.a", "pkg.mod.T.a.f"]


def test_overload_stubs_with_an_implementation_are_not_declarations_of_their_own() -> None:
    from indexer.languages.python import extract

    source = (
        b"import typing as t\n\n\nclass C:\n"
        b"    @t.overload\n    def run(self, x: int) -> int: ...\n\n"
        b"    @t.overload\n    def run(self, x: str) -> str: ...\n\n"
        b'    def run(self, x):\n        """The body."""\n        return x\n\n\n'
        b"@t.overload\ndef stub_only(x: int) -> int: ...\n@t.overload\ndef stub_only(x: str) -> str: ...\n"
    )
    facts = extract("m.py", source, "m")
    runs = [s for s in facts.symbols if s.name == "run"]
    assert [(s.qualified_name, s.start_line, s.doc) for s in runs] == [("m.C.run", 11, "The body.")]
    stubs = [s.qualified_name for s in facts.symbols if s.name == "stub_only"]
    assert stubs == ["m.stub_only", "m.stub_only#2"]  # a stub file's overloads stay declarations


def test_imports_a_try_body_and_its_import_error_handlers_bind_to_one_name_are_alternatives() -> None:
    facts = _extract(
        """
        try:
            from ._speedups import escape as escape, soft_str
            from ._speedups import only_fast
        except (ImportError, OSError) as exc:
            from ._native import escape as escape
            try:
                from ._slow import soft_str
            except ModuleNotFoundError:
                from ._slowest import soft_str
        try:
            import simplejson as json
        except:
            import json
        try:
            from ._config import settings
        except KeyError:
            from ._defaults import settings

        def lazy():
            try:
                from ._speedups import escape
            except Exception:
                from ._native import escape
            return escape
        """
    )
    alternatives = [(s.name, s.line, s.enclosing, s.extra) for s in _sites(facts, S.ALT)]
    assert alternatives == [
        # only_fast has no fallback, settings falls back on a KeyError (not an import failing): no pairs
        ("escape", 2, "", ("1:0", "try")),
        ("soft_str", 2, "", ("1:0", "try")),
        ("escape", 5, "", ("1:0", "except")),
        ("soft_str", 7, "", ("6:4", "try")),
        ("soft_str", 7, "", ("1:0", "except")),
        ("soft_str", 9, "", ("6:4", "except")),
        ("soft_str", 9, "", ("1:0", "except")),
        ("json", 11, "", ("10:0", "try")),
        ("json", 13, "", ("10:0", "except")),
        ("escape", 21, "pkg.mod.lazy", ("20:4", "try")),
        ("escape", 23, "pkg.mod.lazy", ("20:4", "except")),
    ]
    # each alternative sits where its import site is, which stays a site of its own
    froms = {(s.line, s.col) for s in _sites(facts, S.FROM)} | {(s.line, s.col) for s in _sites(facts, S.IMPORT)}
    assert {(s.line, s.col) for s in _sites(facts, S.ALT)} <= froms
