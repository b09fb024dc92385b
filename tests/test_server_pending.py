"""Answers from a CANDIDATE generation (published before its exact analysis) say which files are pending."""

from __future__ import annotations

from pathlib import Path

import msgspec

from server.tools import READ_TOOLS
from snapshot_format import records
from snapshot_format.layout import StateLayout
from snapshot_format.reader import open_current
from snapshot_format.vocab import EdgeKind
from tests.server_fixtures import GraphBuilder


def _publish(tmp_path: Path, pending: set[str]) -> StateLayout:
    b = GraphBuilder(tmp_path / "repos")
    b.repo("alpha", mode="pending" if pending else "exact")
    b.add_file("alpha", "core.py", "def helper():\n    return 1\n")
    b.add_file("alpha", "app.py", "def main():\n    return helper()\n")
    b.edge(b.sym("alpha", "app.main"), EdgeKind.CALLS_DIRECT, b.sym("alpha", "core.helper"))
    b.files = [msgspec.structs.replace(f, analysis="pending") if f.path in pending else f for f in b.files]
    if pending:
        analysis = records.LanguageAnalysis(
            language="python",
            mode="pending",
            analyzer="scip-python",
            reason="exact analysis pending for 1 of 2 files (app.py)",
        )
        b.repositories["alpha"] = msgspec.structs.replace(b.repositories["alpha"], analyses=(analysis,))
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    b.publish(layout)
    return layout


def test_every_answer_from_a_candidate_generation_names_the_files_pending_exact_analysis(tmp_path: Path) -> None:
    layout = _publish(tmp_path, {"app.py"})
    with open_current(layout) as gen:
        for tool, arguments in [
            ("find_symbol", {"name": "helper"}),
            ("find_references", {"name": "helper"}),
            ("get_blast_radius", {"qualified_name": "core.helper"}),
            ("graph_status", {}),
            ("get_file_outline", {"repository": "alpha", "path": "app.py"}),
        ]:
            answer = READ_TOOLS[tool](gen, arguments)
            assert answer["pending_exact"]["files"] == 1, tool
            assert answer["pending_exact"]["paths"] == ["alpha:app.py"], tool
            assert "CANDIDATE" in answer["pending_exact"]["note"]
        (row,) = READ_TOOLS["list_repositories"](gen, {})["results"]
        assert row["analyses"] == [
            {
                "language": "python",
                "mode": "pending",
                "analyzer": "scip-python",
                "reason": "exact analysis pending for 1 of 2 files (app.py)",
            }
        ]


def test_an_exact_generation_carries_no_pending_field(tmp_path: Path) -> None:
    layout = _publish(tmp_path, set())
    with open_current(layout) as gen:
        assert "pending_exact" not in READ_TOOLS["find_symbol"](gen, {"name": "helper"})


def test_a_consumer_of_a_repository_with_pending_files_is_named_and_its_uses_are_a_lower_bound(tmp_path: Path) -> None:
    """A scoped run's CANDIDATE generation rebuilds the edited repository alone: the repositories using it keep
    their edges into it from before the edit. Every answer names them; a walk over the edited repository's
    uses is a lower bound until the exact analysis publishes."""
    b = GraphBuilder(tmp_path / "repos")
    b.repo("alpha", mode="pending")
    b.repo("beta", mode="exact")
    b.add_file("alpha", "core.py", "def helper():\n    return 1\n")
    b.add_file("beta", "app.py", "from core import helper\n\n\ndef main():\n    return helper()\n")
    b.edge(b.sym("beta", "app.main"), EdgeKind.CALLS_DIRECT, b.sym("alpha", "core.helper"))
    b.package_dependency("beta", "app", "alpha", "core", "app.py", 1)
    b.files = [msgspec.structs.replace(f, analysis="pending") if f.repository == "alpha" else f for f in b.files]
    analysis = records.LanguageAnalysis(language="python", mode="pending", analyzer="scip-python", reason="pending")
    b.repositories["alpha"] = msgspec.structs.replace(b.repositories["alpha"], analyses=(analysis,))
    layout = StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")
    b.publish(layout)
    with open_current(layout) as gen:
        for tool, arguments in [
            ("graph_status", {}),
            ("find_cross_repo_consumers", {"qualified_name": "core.helper"}),
            ("find_references", {"qualified_name": "core.helper"}),
        ]:
            answer = READ_TOOLS[tool](gen, arguments)
            assert answer["pending_exact"]["consumers"] == [{"repository": "beta", "of": "alpha"}], tool
            assert "before the edit" in answer["pending_exact"]["consumers_note"]
        for view in ("full", "compact"):
            blast = READ_TOOLS["get_blast_radius"](gen, {"qualified_name": "core.helper", "view": view})
            assert blast["completeness"]["verdict"] == "LOWER_BOUND", view
            assert [(p["repository"], p["of"]) for p in blast["completeness"]["pending_consumers"]] == [
                ("beta", "alpha")
            ]
        # an absence in the pending repository is no proof: its users' edges are from before the edit
        none = READ_TOOLS["find_references"](gen, {"qualified_name": "core"})
        assert none["total"] == 0 and "pending" in none["guidance"] and "beta" in none["guidance"], none
        # a walk that touches no pending repository answers as before
        outgoing = READ_TOOLS["get_blast_radius"](gen, {"qualified_name": "app.main"})
        assert "pending_consumers" not in outgoing["completeness"]
