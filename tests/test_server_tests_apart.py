"""Rows in test files: counted apart by default, listed with include_tests, a group of their own in blast radius.

The indexer marks test files from feature 5 on (File.test); the committed feature-4 generation has no mark,
and the server applies the path patterns of that time to it: both must give the same answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import EdgeKind
from tests.generation_golden import GOLDEN_DIR
from tests.helpers import group_entries, ranked_files
from tests.server_fixtures import GraphBuilder

LIB = "def target():\n    return 1\n"
APP = "from lib import target\n\n\ndef use():\n    return target()\n"
TESTS = "from lib import target\n\n\ndef test_target():\n    assert target() == 1\n\n\ndef test_again():\n    assert target()\n"
CONFTEST = "from lib import target\n\n\ndef fixture():\n    return target()\n"


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generation]:
    tmp = tmp_path_factory.mktemp("tests-apart")
    b = GraphBuilder(tmp / "src")
    b.repo("tested")
    b.add_file("tested", "lib.py", LIB)
    b.add_file("tested", "app.py", APP)
    b.add_file("tested", "tests/test_lib.py", TESTS)
    b.add_file("tested", "conftest.py", CONFTEST)
    target = b.sym("tested", "lib.target")
    for qn in ("app.use", "tests.test_lib.test_target", "tests.test_lib.test_again", "conftest.fixture"):
        b.edge(b.sym("tested", qn), EdgeKind.CALLS_DIRECT, target)
    b.edge(b.sym("tested", "app"), EdgeKind.IMPORTS_SYMBOL, target)
    result = b.publish(StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state"))
    with Generation(result.path) as generation:
        yield generation


def call(gen: Generation, tool: str, **arguments: Any) -> Any:
    return READ_TOOLS[tool](gen, arguments)


def _files(results: dict[str, Any], key: str = "files") -> list[str]:
    return list(dict.fromkeys(path for _repo, path, _entry in group_entries(results, key)))


def test_find_references_lists_the_code_and_counts_the_tests(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="lib.target")
    assert answer["total"] == 2 and _files(answer["results"]) == ["app.py"]
    assert answer["tests"] == "+3 in 2 test files; include_tests=true lists them"
    everything = call(gen, "find_references", qualified_name="lib.target", include_tests=True)
    assert everything["total"] == 5 and "tests" not in everything
    assert _files(everything["results"]) == ["app.py", "conftest.py", "tests/test_lib.py"]
    full = call(gen, "find_references", qualified_name="lib.target", view="full")
    assert full["tests"] == answer["tests"] and len(full["results"]["references"]) == 2


def test_a_row_is_judged_by_the_file_of_its_other_end(gen: Generation) -> None:
    answer = call(gen, "find_references", qualified_name="tests.test_lib.test_target", direction="outgoing")
    assert answer["total"] == 1 and "tests" not in answer  # a test's callee is not in a test file
    only_tests = call(
        gen,
        "find_references",
        qualified_name="lib.target",
        in_repository="tested",
        edge_kinds=["CALLS_DIRECT"],
        include_tests=False,
    )
    assert only_tests["total"] == 1 and only_tests["tests"].startswith("+3 in 2 test files")


def test_find_symbol_counts_declarations_in_test_files(gen: Generation) -> None:
    answer = call(gen, "find_symbol", name="test_", mode="prefix")  # test_lib (the module), test_target, test_again
    assert answer["total"] == 0 and answer["tests"] == "+3 in 1 test file; include_tests=true lists them"
    assert "guidance" not in answer
    listed = call(gen, "find_symbol", name="test_", mode="prefix", include_tests=True)
    assert listed["total"] == 3 and "tests" not in listed
    plain = call(gen, "find_symbol", name="target")
    assert plain["total"] == 1 and "tests" not in plain


def test_blast_radius_lists_affected_tests_as_their_own_group(gen: Generation) -> None:
    answer = call(gen, "get_blast_radius", qualified_name="lib.target")
    results = answer["results"]
    assert answer["total"] == 5
    assert _files(results) == ["app.py"]
    assert _files(results, "tests") == ["conftest.py", "tests/test_lib.py"]
    full = call(gen, "get_blast_radius", qualified_name="lib.target", view="full")["results"]
    assert full["affected_in_tests"] == 3 and full["affected"] == 5
    assert {n["qualified_name"] for n in full["tests"]} == {
        "tests.test_lib.test_target",
        "tests.test_lib.test_again",
        "conftest.fixture",
    }
    assert {n["qualified_name"] for n in full["symbols"]} == {"app.use", "app"}


def _golden(feature: int) -> Path:
    (path,) = (GOLDEN_DIR / f"feature-{feature}").glob("g*.v*")
    return path


@pytest.mark.parametrize("feature", [4, 5])
def test_a_generation_with_or_without_the_test_mark_answers_alike(feature: int) -> None:
    with Generation(_golden(feature)) as generation:
        assert generation.manifest.feature_version == feature
        refs = call(generation, "find_references", qualified_name="packages.core.src.math.square")
        assert refs["tests"] == "+2 in 1 test file; include_tests=true lists them"
        assert "packages/core/src/math.test.ts" not in _files(refs["results"])
        blast = call(generation, "get_blast_radius", qualified_name="packages.core.src.math.square")
        assert _files(blast["results"], "tests") == ["packages/core/src/math.test.ts"]
        intent = call(generation, "find_by_intent", query="check square", limit=20)
        assert intent["tests"] == "+1 in 1 test file; include_tests=true lists them"
        listed = call(generation, "find_by_intent", query="check square", limit=20, include_tests=True)
        ranked = [f["file"] for f in ranked_files(listed["results"])]  # find_by_intent ranks files: a list
        assert "packages/core/src/math.test.ts" in ranked and "tests" not in listed


def test_uses_that_could_not_be_bound_in_test_files_follow_include_tests(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("tested")
    b.add_file("tested", "lib.py", LIB)
    b.add_file("tested", "app.py", APP)
    b.add_file("tested", "tests/test_lib.py", TESTS)
    target = b.sym("tested", "lib.target")
    b.edge(b.sym("tested", "app.use"), EdgeKind.CALLS_DIRECT, target)
    b.unresolved_ref(
        "target",
        "RECEIVER_NOT_RESOLVED",
        "tested",
        "tests/test_lib.py",
        line=5,
        detail="obj.target",
        source=b.sym("tested", "tests.test_lib.test_target"),
    )
    result = b.publish(StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state"))
    with Generation(result.path) as g:
        default = call(g, "find_references", qualified_name="lib.target")
        assert "unbound" not in default["results"] and default["coverage"]["unresolved_related"] == 1
        assert default["tests"] == "+1 unbound use in test files; include_tests=true lists them"
        listed = call(g, "find_references", qualified_name="lib.target", include_tests=True)
        # by reason, then by what was written: a small group is the file groups of the declarations holding it
        assert list(listed["results"]["unbound"]) == ["RECEIVER_NOT_RESOLVED"]
        group = listed["results"]["unbound"]["RECEIVER_NOT_RESOLVED"]["obj.target"]
        assert list(group) == ["tests/test_lib.py"] and len(group["tests/test_lib.py"]) == 1
        assert group["tests/test_lib.py"][0].startswith("test_target@")
        full = call(g, "find_references", qualified_name="lib.target", include_tests=True, view="full")
        counted = full["results"]["unbound"]["RECEIVER_NOT_RESOLVED"]["obj.target"]
        assert counted["uses"] == 1 and counted["in"] == {"tested:tests/test_lib.py": group["tests/test_lib.py"]}


def test_find_cross_repo_consumers_lists_the_code_and_counts_the_tests(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    b.repo("lib")
    b.repo("app")
    b.add_file("lib", "lib.py", LIB)
    b.add_file("app", "app.py", APP)
    b.add_file("app", "tests/test_lib.py", TESTS)
    target = b.sym("lib", "lib.target")
    for qn in ("app.use", "tests.test_lib.test_target", "tests.test_lib.test_again"):
        b.edge(b.sym("app", qn), EdgeKind.CALLS_DIRECT, target)
    b.package_dependency("app", "tests", "lib", "lib", "tests/test_lib.py", 1)
    result = b.publish(StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state"))
    with Generation(result.path) as g:
        default = call(g, "find_cross_repo_consumers", qualified_name="lib.target", view="full")
        rows = default["results"]["consumers"]
        assert [(r["category"], r.get("file_path")) for r in rows] == [("exact_symbol", "app.py")]
        assert default["coverage"] == {"exact": 1, "candidate": 0, "unresolved_related": 0, "package_level": 0}
        assert default["tests"] == "+3 in 1 test file; include_tests=true lists them"
        everything = call(g, "find_cross_repo_consumers", qualified_name="lib.target", include_tests=True)
        assert everything["total"] == 4 and "tests" not in everything
        assert everything["coverage"] == {"exact": 3, "package_level": 1}
