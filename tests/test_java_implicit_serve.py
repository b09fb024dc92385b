"""Java's calls nobody writes, as an agent sees them: tests/annotated/java/implicit_calls indexed by a real
``kivgraph index`` with scip-java, asked through a real ``kivgraph serve`` over stdio (docs/surface.md §4.8).

A constructor's callers include the constructors and classes whose implicit super() runs it, and the enum
constants that run it, as exact edges; close(), iterator() and toString() are LOWER_BOUND naming the syntax that
calls them; an override of a JDK method names the JDK method whose callers are outside the graph.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from indexer.languages.java import analyzer
from indexer.languages.spec import AnalyzerFailed
from tests.annotated_cases import parse_case
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph
from tests.server_fixtures import StdioPeer, stdio_serve
from tests.test_java_annotated import CASES_DIR, SYNTAX, write_case

pytestmark = [pytest.mark.e2e, pytest.mark.analyzers, pytest.mark.anyio]
SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.1"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _ask(peer: StdioPeer, tool: str, **arguments: Any) -> dict[str, Any]:
    is_error, text = await peer.call(tool, {**arguments, "view": "full"})
    assert not is_error, text
    return json.loads(text)


def _callers(answer: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(r["qualified_name"], r["confidence"], r["provenance"]) for r in answer["results"]["references"]}


async def test_implicit_constructor_calls_are_callers_and_syntax_calls_are_named_blind_spots(tmp_path: Path) -> None:
    try:
        analyzer.identity()
    except AnalyzerFailed as exc:
        pytest.skip(f"SCIP-JAVA UNAVAILABLE: {exc}")
    case = parse_case(CASES_DIR / "implicit_calls.java.txt", SYNTAX)
    (repo,) = write_case(case, tmp_path)
    home = tmp_path / "home"
    init = run_kivgraph(home, "init", "--repository", f"main={tmp_path / repo}", "--languages", "java")
    assert init.returncode == 0, init.stderr
    indexed = run_kivgraph(home, "index", timeout=600)
    assert indexed.returncode == 0, indexed.stderr
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        base = await _ask(peer, "find_references", qualified_name="org.i.Base.Base()", direction="incoming")
        assert _callers(base) == {
            ("org.i.Kid.Kid(String)", "EXACT_TYPECHECKED", "JAVA_IMPLICIT_CALL"),  # its implicit super()
            ("org.i.Plain", "EXACT_TYPECHECKED", "JAVA_IMPLICIT_CALL"),  # Plain's default constructor's
            ("org.i.Local.make", "EXACT_TYPECHECKED", "JAVA_IMPLICIT_CALL"),  # its local class's
        }
        blast = await _ask(peer, "get_blast_radius", qualified_name="org.i.Base.Base()")
        assert blast["completeness"]["verdict"] == "COMPLETE", blast["completeness"]
        reached = {r["qualified_name"] for r in blast["results"]["symbols"]}
        assert reached == {"org.i.Kid.Kid(String)", "org.i.Plain", "org.i.Plain.make", "org.i.Local.make"}, reached
        color = await _ask(peer, "find_references", qualified_name="org.i.Color.Color(int)", direction="incoming")
        # RED(1) is javac's own occurrence, BLUE(2) { ... } its anonymous body's implicit call
        assert _callers(color) == {
            ("org.i.Color", "EXACT_TYPECHECKED", "JAVA_INDEXER_USE"),
            ("org.i.Color", "EXACT_TYPECHECKED", "JAVA_IMPLICIT_CALL"),
        }
        for method, syntax in (
            ("org.i.Bag.close", "try-with-resources"),
            ("org.i.Bag.iterator", "enhanced for"),
            ("org.i.Bag.toString", "string concatenation"),
            ("org.i.Bag.Cursor.hasNext", "enhanced for"),
        ):
            answer = await _ask(peer, "get_blast_radius", qualified_name=method)
            assert answer["completeness"]["verdict"] == "LOWER_BOUND", (method, answer["completeness"])
            spots = answer["completeness"]["blind_spots"]
            assert [(b["reason"], b["in"]) for b in spots] == [("IMPLICIT_CALL", method)], spots
            assert syntax in spots[0]["detail"]
            refs = await _ask(peer, "find_references", qualified_name=method, direction="incoming")
            assert list(refs["results"]["unbound"]) == ["IMPLICIT_CALL"], refs["results"]
        equals = await _ask(peer, "get_blast_radius", qualified_name="org.i.Bag.equals")
        spots = equals["completeness"]["blind_spots"]
        assert [(b["reason"], b["in"]) for b in spots] == [("EXTERNAL_OVERRIDE", "org.i.Bag.equals")], spots
        assert "java.lang.Object.equals" in spots[0]["detail"]
        plain = await _ask(peer, "get_blast_radius", qualified_name="org.i.Bag.size")
        assert plain["completeness"]["verdict"] == "COMPLETE", plain["completeness"]
