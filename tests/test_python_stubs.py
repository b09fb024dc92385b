"""A stub and the implementation it stands for answer as one symbol (docs/surface.md §4.6, issue 23 item 5).

``tests/fixtures/pystub_lib`` is laid out as markupsafe is: ``tinyesc/__init__.py`` re-exports ``escape`` and
``Buffer`` behind ``try: from ._speedups import …`` / ``except ImportError: from ._native import …``, with a
``_speedups.pyi`` stub for the compiled module; ``typed.pyi`` sits beside ``typed.py`` (inline stubs);
``_compiled.pyi`` stands for a compiled module with no Python implementation. ``pystub_app`` uses them all
through the package. A checker binds every use to the stub; the tools answer for stub and implementation as one.

The resolver's STANDS_FOR edges are checked on real tree-sitter facts; the answers through the real CLI, once
on the CANDIDATE fallback (no analyzer) and once with scip-python (marker ``analyzers``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.corpus import Resolution
from indexer.languages.python import analyzer as scip_python
from server.errors import ToolError
from server.tools.consumers import find_cross_repo_consumers
from server.tools.references import find_references
from server.tools.symbols import get_symbol
from server.tools.traversal import get_blast_radius
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation, open_current
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.helpers import FIXTURES, copy_fixture, run_kivgraph, write_repo
from tests.python_corpus import BuiltCorpus, build_corpus

LIB, APP = "pystub_lib", "pystub_app"


def _stands_for(built: BuiltCorpus, resolution: Resolution) -> set[tuple[str, str, str, str]]:
    """Every STANDS_FOR edge as (source path, source qn, target path, target qn); each checked certain."""
    out = set()
    for e in resolution.edges:
        if e.kind != EdgeKind.STANDS_FOR:
            continue
        assert (e.confidence, e.provenance) == (Confidence.STRUCTURAL_CERTAIN, Provenance.PYTHON_IMPORT_SYSTEM)
        src, dst = built.declarations[e.source], built.declarations[e.target]
        out.add((src.path, src.qualified_name, dst.path, dst.qualified_name))
    return out


def test_each_stub_of_the_fixture_stands_for_its_implementation_member_by_member() -> None:
    built = build_corpus([(LIB, FIXTURES / LIB), (APP, FIXTURES / APP)])
    speedups, native = "src/tinyesc/_speedups.pyi", "src/tinyesc/_native.py"
    assert _stands_for(built, built.resolve()) == {
        # the ImportError fallback of tinyesc/__init__.py, and the members of the classes it pairs
        (speedups, "tinyesc._speedups.escape", native, "tinyesc._native.escape"),
        (speedups, "tinyesc._speedups.Buffer", native, "tinyesc._native.Buffer"),
        (speedups, "tinyesc._speedups.Buffer.write", native, "tinyesc._native.Buffer.write"),
        (speedups, "tinyesc._speedups.Buffer.getvalue", native, "tinyesc._native.Buffer.getvalue"),
        # typed.pyi beside typed.py: the module and each declaration of the same qualified name
        ("src/tinyesc/typed.pyi", "tinyesc.typed", "src/tinyesc/typed.py", "tinyesc.typed"),
        ("src/tinyesc/typed.pyi", "tinyesc.typed.render", "src/tinyesc/typed.py", "tinyesc.typed.render"),
        ("src/tinyesc/typed.pyi", "tinyesc.typed.unused_helper", "src/tinyesc/typed.py", "tinyesc.typed.unused_helper"),
        # _compiled.pyi stands for nothing indexed: no edge
    }


def test_a_stub_only_package_stands_for_the_module_of_its_name_in_another_repository(tmp_path: Path) -> None:
    write_repo(
        tmp_path / "impl",
        {"foo/__init__.py": "def run():\n    return 1\n\n\nclass Job:\n    def start(self):\n        return run()\n"},
    )
    write_repo(
        tmp_path / "types-foo",
        {
            "foo-stubs/__init__.pyi": "def run() -> int: ...\n\nclass Job:\n    def start(self) -> int: ...\n",
            "foo-stubs/extra.pyi": "def only_typed() -> None: ...\n",
        },
    )
    built = build_corpus([("impl", tmp_path / "impl"), ("types-foo", tmp_path / "types-foo")])
    assert _stands_for(built, built.resolve()) == {
        ("foo-stubs/__init__.pyi", f"foo-stubs{qn}", "foo/__init__.py", f"foo{qn}")
        for qn in ("", ".run", ".Job", ".Job.start")
    }  # foo-stubs.extra has no module foo.extra to stand for


def test_a_fallback_between_modules_pairs_their_members_and_other_handlers_pair_nothing(tmp_path: Path) -> None:
    write_repo(
        tmp_path / "lib",
        {
            "pkg/__init__.py": (
                "try:\n    from . import _fast as impl\nexcept ImportError:\n    from . import _slow as impl\n"
                "try:\n    from ._fast import tune\nexcept KeyError:\n    from ._slow import tune\n"
                "try:\n    from ujson import dumps\nexcept ImportError:\n    from ._slow import dumps\n"
            ),
            "pkg/_fast.py": "def parse(s):\n    return s\n\n\ndef tune():\n    pass\n",
            "pkg/_slow.py": "def parse(s):\n    return s\n\n\ndef tune():\n    pass\n\n\ndef dumps(o):\n    return o\n",
        },
    )
    built = build_corpus([("lib", tmp_path / "lib")])
    assert _stands_for(built, built.resolve()) == {
        ("pkg/_fast.py", "pkg._fast", "pkg/_slow.py", "pkg._slow"),
        ("pkg/_fast.py", "pkg._fast.parse", "pkg/_slow.py", "pkg._slow.parse"),
        ("pkg/_fast.py", "pkg._fast.tune", "pkg/_slow.py", "pkg._slow.tune"),  # members of the paired modules
    }  # not through `except KeyError`, and an unregistered ujson stands for nothing we declare


# -- answers through the real CLI -------------------------------------------------------------------------------


def _index(tmp: Path, *, analyzer: str = "") -> Path:
    """Both fixture repositories indexed through the CLI (``analyzer``: where scip-python is said to be)."""
    home = tmp / "home"
    roots = [str(copy_fixture(name, tmp)) for name in (LIB, APP)]
    assert run_kivgraph(home, "init", *roots).returncode == 0
    if analyzer:
        result = run_kivgraph(home, "index", "--json", KIVGRAPH_SCIP_PYTHON=analyzer)
    else:
        result = run_kivgraph(home, "index", "--json")
    assert result.returncode == 0, result.stderr
    return home


@pytest.fixture(scope="module")
def fallback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    home = _index(tmp_path_factory.mktemp("stubs-fallback"), analyzer="/nonexistent/scip-python")
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        assert "exact" not in {a.mode for r in gen.repositories() for a in r.analyses}
        yield gen


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    exe = scip_python.executable()
    if not exe.exists():
        pytest.skip(f"SCIP-PYTHON UNAVAILABLE at {exe}: run `make setup` (python -m indexer.setup_analyzers)")
    home = _index(tmp_path_factory.mktemp("stubs-exact"))
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        assert {a.mode for r in gen.repositories() for a in r.analyses} == {"exact"}
        yield gen


def _consumers(gen: Generation, **selector: str) -> dict[str, Any]:
    return find_cross_repo_consumers(gen, {**selector, "view": "full"})


def _rows(answer: dict[str, Any], field: str) -> set[tuple[str, str, str, str]]:
    """(qualified name, edge kind, confidence, bound-to qualified name or "") of each symbol row."""
    return {
        (r["qualified_name"], r["edge_kind"], r["confidence"], r.get("bound_to", {}).get("qualified_name", ""))
        for r in answer["results"][field] or ()
        if "qualified_name" in r
    }


@pytest.mark.analyzers
def test_consumers_of_the_implementation_are_the_uses_the_checker_bound_to_its_stub(exact: Generation) -> None:
    answer = _consumers(exact, qualified_name="tinyesc._native.escape")
    stub = "tinyesc._speedups.escape"
    assert _rows(answer, "consumers") == {
        ("app.pages", "IMPORTS_SYMBOL", "EXACT_TYPECHECKED", stub),
        ("app.pages.title", "CALLS_DIRECT", "EXACT_TYPECHECKED", stub),
    }
    (merged,) = answer["results"]["merged_with"]
    assert (merged["qualified_name"], merged["file_path"], merged["role"]) == (
        stub,
        "src/tinyesc/_speedups.pyi",
        "stub",
    )
    # and the stub answers the same uses, as its own, naming the implementation it stands for
    from_stub = _consumers(exact, qualified_name=stub)
    assert _rows(from_stub, "consumers") == {(qn, kind, conf, "") for qn, kind, conf, _ in _rows(answer, "consumers")}
    assert [m["role"] for m in from_stub["results"]["merged_with"]] == ["implementation"]
    # the compact view says it once for the uses (the package row binds no declaration)
    compact = find_cross_repo_consumers(exact, {"qualified_name": "tinyesc._native.escape"})["results"]
    assert [(g["category"], g.get("bound_to")) for g in compact["groups"]] == [
        ("exact_symbol", stub),
        ("package", None),
    ]
    assert compact["merged_with"] == [f"{LIB}:src/tinyesc/_speedups.pyi:4 {stub} (stub)"]


@pytest.mark.analyzers
def test_a_method_of_a_class_behind_the_fallback_is_consumed_through_its_stub(exact: Generation) -> None:
    answer = _consumers(exact, qualified_name="tinyesc._native.Buffer.write")
    assert _rows(answer, "consumers") == {
        ("app.pages.body", "CALLS_DIRECT", "EXACT_TYPECHECKED", "tinyesc._speedups.Buffer.write")
    }


@pytest.mark.analyzers
def test_a_bare_name_only_a_stub_and_its_implementation_declare_resolves_to_the_implementation(
    exact: Generation,
) -> None:
    answer = find_references(exact, {"name": "getvalue", "view": "full"})["results"]
    assert answer["subject"]["qualified_name"] == "tinyesc._native.Buffer.getvalue"
    rows = {
        (r["qualified_name"], r["edge_kind"], r.get("bound_to", {}).get("file_path", "")) for r in answer["references"]
    }
    assert rows == {("app.pages.body", "CALLS_DIRECT", "src/tinyesc/_speedups.pyi")}
    # get_symbol takes the same selector: no dead end there either
    symbol = get_symbol(exact, {"name": "getvalue"})["results"]
    assert (symbol["file_path"], symbol["qualified_name"]) == (
        "src/tinyesc/_native.py",
        answer["subject"]["qualified_name"],
    )


@pytest.mark.analyzers
def test_a_name_also_declared_elsewhere_is_ambiguous_and_the_error_says_where_the_uses_are(exact: Generation) -> None:
    with pytest.raises(ToolError) as caught:
        find_references(exact, {"name": "escape"})
    message = str(caught.value)
    assert message.startswith('AMBIGUOUS_SYMBOL: name "escape" is declared 3 times: ')
    # the stub and its implementation are one candidate, named by the implementation, with where the uses are
    assert re.search(
        rf"declared 3 times: {LIB}:src/tinyesc/_native.py:6 tinyesc._native.escape \(function\) answering as one "
        rf"symbol with its stub {LIB}:src/tinyesc/_speedups.pyi:4 tinyesc._speedups.escape \(uses bound 2 to it, "
        rf"3 to tinyesc._speedups.escape\); {LIB}:src/tinyesc/markup.py:10 tinyesc.markup.Markup.escape \(method\); "
        "repeat with",
        message,
    ), message


@pytest.mark.analyzers
def test_inline_stubs_share_the_qualified_name_and_resolve_to_the_implementation(exact: Generation) -> None:
    answer = find_references(exact, {"qualified_name": "tinyesc.typed.render", "view": "full"})["results"]
    assert answer["subject"]["file_path"] == "src/tinyesc/typed.py"
    assert [(m["file_path"], m["role"]) for m in answer["merged_with"]] == [("src/tinyesc/typed.pyi", "stub")]
    assert {(r["qualified_name"], r["edge_kind"]) for r in answer["references"]} == {
        ("app.pages", "IMPORTS_SYMBOL"),
        ("app.pages.badge", "CALLS_DIRECT"),
    }


@pytest.mark.analyzers
def test_the_blast_radius_of_the_implementation_walks_from_its_stub_too(exact: Generation) -> None:
    answer = get_blast_radius(exact, {"qualified_name": "tinyesc._native.escape", "view": "full"})
    rows = {(n["qualified_name"], n["depth"], n["reached_from"]) for n in answer["results"]["symbols"]}
    assert ("app.pages.title", 1, "tinyesc._speedups.escape") in rows
    assert ("tinyesc._native.Buffer.write", 1, "tinyesc._native.escape") in rows
    assert answer["completeness"]["verdict"] == "COMPLETE"
    assert [m["qualified_name"] for m in answer["results"]["merged_with"]] == ["tinyesc._speedups.escape"]


@pytest.mark.analyzers
def test_a_stub_with_no_implementation_answers_its_own_uses_and_merges_nothing(exact: Generation) -> None:
    answer = _consumers(exact, name="fast_hash")
    assert _rows(answer, "consumers") == {
        ("app.pages", "IMPORTS_SYMBOL", "EXACT_TYPECHECKED", ""),
        ("app.pages.etag", "CALLS_DIRECT", "EXACT_TYPECHECKED", ""),
    }
    assert "merged_with" not in answer["results"]


def test_without_the_analyzer_the_candidate_uses_merge_the_same_way(fallback: Generation) -> None:
    answer = _consumers(fallback, qualified_name="tinyesc._native.escape")
    assert ("app.pages.title", "CALLS_DIRECT", "CANDIDATE", "tinyesc._speedups.escape") in _rows(answer, "consumers")
    refs = find_references(fallback, {"name": "write", "view": "full"})["results"]
    assert refs["subject"]["qualified_name"] == "tinyesc._native.Buffer.write"
    assert {m["qualified_name"] for m in refs["merged_with"]} == {"tinyesc._speedups.Buffer.write"}


def test_a_stub_only_package_answers_with_the_consumers_of_the_implementation_it_stands_for(tmp_path: Path) -> None:
    roots = [
        write_repo(tmp_path / "impl", {"foo/__init__.py": "def run():\n    return 1\n"}),
        write_repo(tmp_path / "types-foo", {"foo-stubs/__init__.pyi": "def run() -> int: ...\n"}),
        write_repo(tmp_path / "app", {"app.py": "from foo import run\n\n\ndef go():\n    return run()\n"}),
    ]
    home = tmp_path / "home"
    assert run_kivgraph(home, "init", *map(str, roots)).returncode == 0
    result = run_kivgraph(home, "index", "--json", KIVGRAPH_SCIP_PYTHON="/nonexistent/scip-python")
    assert result.returncode == 0, result.stderr
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        answer = _consumers(gen, qualified_name="foo-stubs.run")
        assert _rows(answer, "consumers") == {
            ("app", "IMPORTS_SYMBOL", "CANDIDATE", "foo.run"),
            ("app.go", "CALLS_DIRECT", "CANDIDATE", "foo.run"),
        }
        assert [(m["repository"], m["role"]) for m in answer["results"]["merged_with"]] == [("impl", "implementation")]
        # the implementation's own answer names the stub package standing for it
        from_impl = _consumers(gen, qualified_name="foo.run")
        assert {r[:3] for r in _rows(from_impl, "consumers")} == {r[:3] for r in _rows(answer, "consumers")}
        assert [(m["repository"], m["role"]) for m in from_impl["results"]["merged_with"]] == [("types-foo", "stub")]
