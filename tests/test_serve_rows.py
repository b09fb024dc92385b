"""Rows one can read, answers that say their size, cut at a row boundary (issue 27 items 5 and 6), through a
real `kivgraph serve` over stdio on a corpus indexed by a real `kivgraph index`.

The corpus: a library whose hub function has six hundred callers in thirty files (so a page of the full view is
over find_references' answer budget) and a class with a subtype in each file, and an application in another
repository that imports and calls the hub. Indexed without scip-python (the edges are CANDIDATE): what is
under test is the answers' shape, not the analysis.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks import tokenizer
from server.tools.common import ANSWER_BYTE_BUDGET
from snapshot_format.vocab import SYMBOL_KINDS, Confidence, EdgeKind
from tests.helpers import REPO_ROOT, kivgraph_env, ranked_files, row_dicts, run_kivgraph, write_repo
from tests.server_fixtures import StdioPeer, stdio_serve

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.1"]
FILES, CALLERS_PER_FILE = 30, 20

CORE = '''"""The hub everyone calls."""


class Base:
    def area(self):
        return 0


class Mid(Base):
    def area(self):
        return 1


def target(x):
    """Compute the target value."""
    return x + 1


def helper():
    return target(1)


def outer():
    return helper()
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _corpus(root: Path) -> Path:
    files = {"lib/hublib/__init__.py": "", "lib/hublib/core.py": CORE}
    for f in range(FILES):
        body = '"""Callers of the hub."""\nfrom hublib.core import Base, target\n'
        for i in range(CALLERS_PER_FILE):
            body += f"\n\ndef caller_{f:02d}_{i:02d}(value):\n    return target(value) + {i}\n"
        body += f"\n\nclass Shape{f:02d}(Base):\n    def area(self):\n        return {f}\n"
        files[f"lib/hublib/callers_{f:02d}.py"] = body
    files["app/consumer/__init__.py"] = ""
    files["app/consumer/use.py"] = (
        "from hublib.core import helper, target\n\n\ndef run():\n    return target(2) + helper()\n\n\n"
        "def main():\n    return run()\n"
    )
    write_repo(root, files)
    home = root / "home"
    init = run_kivgraph(
        home,
        "init",
        "--repository",
        f"lib={root / 'lib'}",
        "--repository",
        f"app={root / 'app'}",
        "--languages",
        "python",
    )
    assert init.returncode == 0, init.stderr
    index = run_kivgraph(home, "index", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert index.returncode == 0, index.stderr
    return home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _corpus(tmp_path_factory.mktemp("rows"))


async def _answer(peer: StdioPeer, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    is_error, text = await peer.call(tool, arguments)
    assert not is_error, text
    return text, json.loads(text)


# Every row tool, with a question whose compact page has rows.
ROW_QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("find_references", {"qualified_name": "hublib.core.target", "limit": 30}),
    ("find_references", {"qualified_name": "hublib.core.Base", "relation": "subtypes", "limit": 5}),
    ("get_blast_radius", {"qualified_name": "hublib.core.helper"}),
    ("trace_dependencies", {"qualified_name": "consumer.use.main"}),
    ("find_cross_repo_consumers", {"qualified_name": "hublib.core.target"}),
    ("find_symbol", {"name": "area"}),
    ("get_file_outline", {"repository": "lib", "path": "hublib/core.py"}),
    ("get_file_outline", {"repository": "lib", "path": "hublib"}),
]


VOCABULARY = {
    "edge_kind": {k.name for k in EdgeKind},
    "confidence": {c.name for c in Confidence},
    "kind": set(SYMBOL_KINDS),
    "exported": {"exported", "unexported", True, False},
}


def _fits(column: str, value: Any) -> bool:
    """Whether a row's value (or the header's, where the row leaves it empty) is a value of its column."""
    if value in ("", None):
        return column not in ("kind", "edge_kind", "confidence", "hop")  # every row has these
    if column == "hop":
        return str(value).isdigit()
    if column == "edge_kind":
        return all(part in VOCABULARY[column] for part in str(value).split("+"))
    if column in VOCABULARY:
        return value in VOCABULARY[column]
    # a name (from, dispatch_via, via, bound_to, name, sig): never a number or a word of another column
    return not str(value).isdigit() and not any(value in words for words in VOCABULARY.values())


def _rows_read(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's rows read through its columns, wherever the tool puts them (files, groups, at, tests)."""
    if "files" in results or ("groups" in results and any("files" in g for g in results["groups"])):
        rows = row_dicts(results)
    else:  # a one-file outline: the labels under at, flat or in groups
        rows = []
        for group in results.get("groups", [results]):
            for entry in group.get("at", []):
                cells = [entry] if isinstance(entry, str) else entry
                rows.append(
                    {c: (cells[i] if i < len(cells) else "") or group.get(c) for i, c in enumerate(results["columns"])}
                )
    return rows + (row_dicts(results, "tests") if "tests" in results else [])


async def test_every_row_tool_names_its_columns_once_and_each_row_follows_them(home: Path) -> None:
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for tool, arguments in ROW_QUESTIONS:
            _text, answer = await _answer(peer, tool, **arguments)
            results = answer["results"]
            columns = results["columns"]
            assert columns[0] == "at" and len(set(columns)) == len(columns), (tool, columns)
            assert "columns" not in json.dumps([results.get("groups"), results.get("files")]), tool  # named once
            rows = _rows_read(results)
            # every row is read (the consumers' package rows are objects, not rows)
            assert rows, tool
            assert len(rows) == answer["returned"] or tool == "find_cross_repo_consumers", (tool, rows)
            for row in rows:
                assert "@" in row["at"], (tool, row)
                for column in columns[1:]:  # a position means one column on the whole page
                    assert _fits(column, row[column]), (tool, column, row, results)
        # the walks' columns are the hop and the node a row was reached from, the same name on every page
        _text, trace = await _answer(peer, "trace_dependencies", qualified_name="consumer.use.main")
        by_at = {r["at"]: r for r in row_dicts(trace["results"])}
        assert trace["results"]["columns"] == ["at", "from", "hop"]  # more rows fill from than hop (the header's)
        assert (by_at["run@4-5"]["hop"], by_at["run@4-5"]["from"]) == ("1", "main")
        assert (str(by_at["target@14-16"]["hop"]), by_at["target@14-16"]["from"]) == ("2", "consumer.use.run")
        # find_by_intent's ranked files: file, terms, symbols, and each symbol a row of at, kind
        _text, intent = await _answer(peer, "find_by_intent", query="compute the target value")
        assert intent["results"]["columns"] == ["file", "terms", "symbols"]
        first = ranked_files(intent["results"])[0]
        assert (first["repo"], first["file"], first["symbols"], first["kinds"]) == (
            "lib",
            "hublib/core.py",
            ["target@14-16"],
            ["function"],
        )


async def test_every_answer_states_an_estimate_of_its_own_size(home: Path) -> None:
    questions = [
        *ROW_QUESTIONS,
        ("find_by_intent", {"query": "compute the target value"}),
        ("get_symbol", {"qualified_name": "hublib.core.target"}),
        ("list_repositories", {}),
        ("graph_status", {}),
        ("find_references", {"qualified_name": "hublib.core.target", "view": "full", "limit": 100}),
    ]
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for tool, arguments in questions:
            text, answer = await _answer(peer, tool, **arguments)
            measured = tokenizer.count(text)
            assert abs(answer["size_tokens"] - measured) <= max(8, measured // 4), (
                tool,
                answer["size_tokens"],
                measured,
            )
            assert list(answer)[:2] == ["snapshot_id", "size_tokens"]
        is_error, source = await peer.call("get_source", {"symbols": [{"qualified_name": "hublib.core.target"}]})
        assert not is_error
        first_line = source.split("\n", 1)[0]
        stated = int(first_line.rsplit("~", 1)[1].removesuffix(" tokens"))
        assert abs(stated - tokenizer.count(source)) <= max(8, tokenizer.count(source) // 4), (first_line, source)


async def test_an_answer_over_its_budget_is_cut_at_a_row_and_continues_with_its_cursor(home: Path) -> None:
    budget = ANSWER_BYTE_BUDGET["find_references"]
    arguments = {"qualified_name": "hublib.core.target", "view": "full", "limit": 500}
    seen: list[str] = []
    pages = 0
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        _text, compact = await _answer(peer, "find_references", qualified_name="hublib.core.target", limit=500)
        total = compact["total"]
        # every caller and each file's import, helper beside target, the application's import and run
        assert total == FILES * (CALLERS_PER_FILE + 1) + 3
        assert compact["returned"] == min(total, 500) and "cut after" not in compact.get("guidance", "")
        cursor: str | None = None
        with anyio.fail_after(120):
            while True:
                text, page = await _answer(
                    peer, "find_references", **arguments, **({"cursor": cursor} if cursor else {})
                )
                pages += 1
                assert len(text.encode()) <= budget, len(text.encode())
                rows = page["results"]["references"]
                assert len(rows) == page["returned"] >= 1
                for row in rows:  # whole rows only: every field of the full view on every row
                    assert {
                        "qualified_name",
                        "file_path",
                        "start_line",
                        "edge_kind",
                        "confidence",
                        "stable_key",
                    } <= set(row)
                seen.extend(f"{r['stable_key']}:{r['evidence_line']}:{r['edge_kind']}" for r in rows)
                assert page["total"] == total
                cursor = page.get("next_cursor")
                if cursor is None:
                    break
                assert page["truncated"] is True
                if len(seen) < 500:  # the first page asked for five hundred rows and was cut
                    assert page["returned"] < 500
                    assert "cut after" in page["guidance"] and f"budget of {budget} bytes" in page["guidance"]
                    assert "next_cursor" in page["guidance"]
    assert pages >= 3  # five hundred full rows do not fit one answer
    assert len(seen) == len(set(seen)) == total  # the cut pages continue exactly where they stopped
