"""get_blast_radius of a change (``changes``): a real git checkout, hand-made generations of either side.

The repository ``calc`` is committed at a base, then edited in the working tree: a body edited
(``compute``), a function removed (``gone``, whose caller ``legacy`` is edited not to call it), and two
functions added, one of them a new caller of ``compute`` (``helper_call``, called by ``fresh``). The
generation holds the base (indexed before the change), the working tree (indexed after it), or a third
version (edited since indexing). Every expected set below was worked out by hand from the three files.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from server.errors import ToolError
from server.queries.changes import compress_lines, other_side, parse_unified_diff
from server.tools import READ_TOOLS
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.vocab import Confidence, EdgeKind, Provenance
from tests.server_fixtures import GraphBuilder

CORE = """def compute(x):
    return helper(x) + 1


def helper(x):
    return x * 2


def gone(x):
    return x


def untouched():
    return 0
"""
USE = """from pkg.core import compute, gone


def run():
    return compute(1)


def legacy():
    return gone(2)


def top():
    return run()
"""
NEW_CORE = """def compute(x):
    return helper(x) + 2


def helper(x):
    return x * 2


def untouched():
    return 0
"""
NEW_USE = """from pkg.core import compute


def run():
    return compute(1)


def legacy():
    return 2


def fresh():
    return helper_call()


def helper_call():
    return compute(3)


def top():
    return run()
"""
MID_CORE = """def compute(x):
    return helper(x) + 7


def helper(x):
    return x * 2


def gone(x):
    return x


def untouched():
    return 0
"""


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env)
    return done.stdout


def publish(tmp: Path, core: str, use: str) -> tuple[Generation, Path]:
    """A generation of ``calc`` holding these two files (edges as the code says), its checkout at the base."""
    b = GraphBuilder(tmp / "src")
    root = b.repo("calc")
    b.add_file("calc", "pkg/__init__.py", "")
    b.add_file("calc", "pkg/core.py", core)
    b.add_file("calc", "pkg/use.py", use)
    qn = {s.qualified_name for s in b.symbols}

    def calls(a: str, z: str) -> None:
        if a in qn and z in qn:
            b.edge(b.sym("calc", a), EdgeKind.CALLS_DIRECT, b.sym("calc", z))

    calls("pkg.core.compute", "pkg.core.helper")
    calls("pkg.use.run", "pkg.core.compute")
    calls("pkg.use.top", "pkg.use.run")
    if "gone(2)" in use:
        calls("pkg.use.legacy", "pkg.core.gone")
    calls("pkg.use.fresh", "pkg.use.helper_call")
    calls("pkg.use.helper_call", "pkg.core.compute")
    if "from pkg.core import compute, gone" not in use and "gone" not in core:
        # indexed after the removal: the checker recorded the stale import of the removed name
        b.unresolved_ref("gone", "IMPORT_NOT_RESOLVED", "calc", "pkg/use.py", line=1, source=b.sym("calc", "pkg.use"))
    result = b.publish(StateLayout(config_path=tmp / "kivgraph.toml", state_dir=tmp / "state"))
    # the checkout: the base committed, then the working tree edited
    (root / "pkg/core.py").write_text(CORE)
    (root / "pkg/use.py").write_text(USE)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    (root / "pkg/core.py").write_text(NEW_CORE)
    (root / "pkg/use.py").write_text(NEW_USE)
    return Generation(result.path), root


def blast(gen: Generation, **arguments: Any) -> dict[str, Any]:
    return READ_TOOLS["get_blast_radius"](gen, arguments)


def refused(gen: Generation, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        blast(gen, **arguments)
    return caught.value


def roots(answer: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """(qualified name or name, change, lines, "" or "not indexed") of every root."""
    return {
        (r.get("qn", r.get("name")), r["change"], r["lines"], "not indexed" if r.get("indexed") is False else "")
        for r in answer["results"]["roots"]
    }


def affected(answer: dict[str, Any]) -> set[tuple[str, int, str]]:
    return {(s["qualified_name"], s["depth"], s["reached_from"]) for s in answer["results"]["symbols"]}


def test_indexed_before_the_change_the_roots_are_the_base_declarations_and_a_removal_is_walked(tmp_path: Path) -> None:
    gen, _root = publish(tmp_path, CORE, USE)
    answer = blast(gen, changes={"base": "HEAD"}, view="full")
    assert roots(answer) == {
        ("pkg.core.compute", "edited", "2", ""),
        ("pkg.core.gone", "removed", "9-10", ""),
        ("pkg.use", "edited", "1", ""),  # the import line
        ("pkg.use.legacy", "edited", "9", ""),
        ("fresh", "added", "12", "not indexed"),  # not in a generation of the base
        ("helper_call", "added", "16", "not indexed"),
    }
    assert {r.get("generation_side") for r in answer["results"]["roots"]} == {"old"}
    # compute's callers, and the caller of the removed gone (an edited root is affected by another root too)
    assert affected(answer) == {
        ("pkg.use.run", 1, "pkg.core.compute"),
        ("pkg.use.top", 2, "pkg.use.run"),
        ("pkg.use.legacy", 1, "pkg.core.gone"),
    }
    by_root = {r.get("qn", r.get("name")): r for r in answer["results"]["roots"]}
    assert (by_root["pkg.core.compute"]["affected"], by_root["pkg.core.gone"]["affected"]) == (2, 1)
    assert answer["completeness"]["verdict"] == "COMPLETE"
    assert answer["results"]["changes"]["indexed_before"] == 2


def test_indexed_after_the_change_a_removed_function_is_named_and_never_complete(tmp_path: Path) -> None:
    gen, _root = publish(tmp_path, NEW_CORE, NEW_USE)
    answer = blast(gen, changes={"base": "HEAD"}, view="full")
    assert roots(answer) == {
        ("pkg.core.compute", "edited", "2", ""),
        ("gone", "removed", "9", "not indexed"),  # its declaring line on the base side
        ("pkg.use", "edited", "1", ""),
        ("pkg.use.legacy", "edited", "9", ""),
        ("pkg.use.fresh", "added", "12-13", ""),
        ("pkg.use.helper_call", "added", "16-17", ""),
    }
    # the added caller of compute is reached by compute's walk; fresh calls it
    assert affected(answer) == {
        ("pkg.use.run", 1, "pkg.core.compute"),
        ("pkg.use.helper_call", 1, "pkg.core.compute"),
        ("pkg.use.fresh", 1, "pkg.use.helper_call"),
        ("pkg.use.top", 2, "pkg.use.run"),
    }
    gone = next(r for r in answer["results"]["roots"] if r.get("name") == "gone")
    assert gone["unbound_uses"] == {"calc:pkg/use.py": ["pkg.use@1-21"]}
    block = answer["completeness"]
    assert block["verdict"] == "LOWER_BOUND" and block["removed_not_indexed"] == 1
    assert [(s["reason"], s["requested_symbol"]) for s in block["blind_spots"]] == [("IMPORT_NOT_RESOLVED", "gone")]
    assert block["fallback"]["pattern"] == r"\bgone\b"


def test_a_file_edited_since_indexing_is_pending_and_named_not_guessed(tmp_path: Path) -> None:
    gen, _root = publish(tmp_path, MID_CORE, USE)  # core.py indexed as neither the base nor the working tree
    answer = blast(gen, changes={"base": "HEAD"})
    pending = answer["results"]["pending"]
    assert [(p["at"], p["lines"]) for p in pending] == [("calc:pkg/core.py", "2")]
    assert "edited since indexing" in pending[0]["reason"]
    assert not any(r.get("qn", "").startswith("pkg.core") for r in answer["results"]["roots"])
    assert ("pkg.use.legacy", "edited", "9", "") in roots(answer)  # use.py is still mapped (its base side)
    assert answer["completeness"]["verdict"] == "LOWER_BOUND" and answer["completeness"]["pending_files"] == 1


def test_a_diff_given_as_text_maps_whichever_side_the_generation_holds(tmp_path: Path) -> None:
    before, root = publish(tmp_path / "before", CORE, USE)
    text = git(root, "diff", "HEAD")  # the applied diff, with git's three lines of context
    assert roots(blast(before, changes={"diff": text})) == roots(blast(before, changes={"base": "HEAD"}))
    after, root_after = publish(tmp_path / "after", NEW_CORE, NEW_USE)
    text_after = git(root_after, "diff", "HEAD")
    assert roots(blast(after, changes={"diff": text_after})) == roots(blast(after, changes={"base": "HEAD"}))
    # not applied: the working tree back at the base, the generation too; the diff is a proposal
    git(root, "checkout", "-q", "--", ".")
    proposal = blast(before, changes={"diff": text, "repository": "calc"})
    assert ("pkg.core.compute", "edited", "2", "") in roots(proposal)
    assert proposal["results"]["changes"]["indexed_before"] == 2


def test_the_other_side_of_a_diff_is_rebuilt_from_one_side_and_the_hunks() -> None:
    (diff,) = parse_unified_diff("--- a/m.py\n+++ b/m.py\n@@ -2,2 +2,3 @@\n-b\n-c\n+B\n+C\n+D\n@@ -6,0 +7 @@ e\n+f\n")
    old = b"a\nb\nc\nd\ne\nx\n"
    new = b"a\nB\nC\nD\nd\ne\nf\nx\n"
    assert other_side(old, diff, to_new=True) == new
    assert other_side(new, diff, to_new=False) == old
    assert compress_lines([9, 3, 4, 5, 7]) == "3-5,7,9"


def test_files_the_graph_does_not_index_are_named_apart(tmp_path: Path) -> None:
    gen, root = publish(tmp_path, CORE, USE)
    (root / "README.md").write_text("# calc\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "readme")
    (root / "README.md").write_text("# calc, edited\n")
    (root / "notes.py").write_text("def scratch():\n    return 1\n")  # untracked, a language of the repository
    answer = blast(gen, changes={"base": "HEAD"})
    assert answer["results"]["not_indexed"] == ["calc:README.md"]
    assert ("scratch", "added", "1", "not indexed") in roots(answer)  # indexed before it existed
    elsewhere = blast(gen, changes={"diff": "--- a/other/x.py\n+++ b/other/x.py\n@@ -1 +1 @@\n-a\n+b\n"})
    assert elsewhere["results"]["not_indexed"] == ["other/x.py"]
    assert elsewhere["total"] == 0 and "touches no declaration" in elsewhere["guidance"]


def test_git_is_only_read(tmp_path: Path) -> None:
    gen, root = publish(tmp_path, CORE, USE)
    index = root / ".git" / "index"
    # make the index stale, so a refreshing git would rewrite it
    os.utime(root / "pkg/core.py", ns=(1, 1))
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    entries_before = sorted(p.name for p in (root / ".git").iterdir())
    blast(gen, changes={"base": "HEAD"})
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    assert sorted(p.name for p in (root / ".git").iterdir()) == entries_before
    assert not (root / ".git" / "index.lock").exists()


@pytest.mark.parametrize(
    ("changes", "extra", "message"),
    [
        ({"base": "HEAD", "diff": "x"}, {}, "changes takes exactly one of base"),
        ({}, {}, "changes takes exactly one of base"),
        ({"base": "HEAD", "rev": "x"}, {}, "unknown argument changes.rev"),
        ({"base": "HEAD"}, {"qualified_name": "pkg.core.compute"}, "changes replaces the symbol"),
        ({"base": "no-such-branch"}, {}, "'no-such-branch' names no commit here"),
        ({"base": "no-such-branch", "repository": "calc"}, {}, "changes.base: 'no-such-branch' names no commit here"),
        ({"base": "--output=/tmp/x"}, {}, "is not a revision git would read as one"),
        ({"base": "HEAD", "repository": "nope"}, {}, "changes.repository: no repository named 'nope'"),
        ({"diff": "--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-a\n+b\n"}, {}, "not a repository-relative path"),
        ({"diff": "@@ -1 +1 @@\n-a\n+b\n"}, {}, "a hunk before any file header"),
        ({"diff": "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n"}, {}, "the hunk ends before"),
        ({"diff": "x" * ((1 << 20) + 1)}, {}, "changes.diff must be at most"),
        ({"diff": 3}, {}, "changes.diff must be a string"),
    ],
)
def test_bad_changes_are_refused_naming_the_field(
    tmp_path: Path, changes: dict[str, Any], extra: dict[str, Any], message: str
) -> None:
    gen, _root = publish(tmp_path, CORE, USE)
    error = refused(gen, changes=changes, **extra)
    assert error.code in ("INVALID_ARGUMENT", "REPOSITORY_NOT_FOUND")
    assert message in error.message, error.message


def test_a_cursor_continues_the_affected_set_and_expires_with_the_working_tree(tmp_path: Path) -> None:
    gen, root = publish(tmp_path, CORE, USE)
    first = blast(gen, changes={"base": "HEAD"}, limit=2, view="full")
    assert (first["total"], first["returned"]) == (3, 2) and first["next_cursor"]
    rest = blast(gen, changes={"base": "HEAD"}, limit=2, view="full", cursor=first["next_cursor"])
    assert rest["returned"] == 1
    seen = [s["qualified_name"] for s in first["results"]["symbols"] + rest["results"]["symbols"]]
    assert sorted(seen) == ["pkg.use.legacy", "pkg.use.run", "pkg.use.top"]
    (root / "pkg/use.py").write_text(NEW_USE + "\n\ndef more():\n    return 1\n")
    error = refused(gen, changes={"base": "HEAD"}, limit=2, cursor=first["next_cursor"])
    assert error.code == "CURSOR_INVALID"


def test_the_tree_view_of_a_change_is_one_tree_per_root(tmp_path: Path) -> None:
    gen, _root = publish(tmp_path, CORE, USE)
    answer = blast(gen, changes={"base": "HEAD"}, view="tree")
    trees = {t["qn"]: t for t in answer["results"]["trees"]}
    assert set(trees) == {"pkg.core.compute", "pkg.core.gone", "pkg.use", "pkg.use.legacy"}
    compute = trees["pkg.core.compute"]
    (run,) = compute["children"]
    assert run["qn"] == "pkg.use.run" and [c["qn"] for c in run["children"]] == ["pkg.use.top"]
    # legacy is spelled once, under the root that reaches it first
    spelled = [n for t in trees.values() for n in _nodes(t) if "qn" in n]
    assert [n["qn"] for n in spelled].count("pkg.use.legacy") == 1


def _nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for child in tree.get("children", []):
        out.append(child)
        out.extend(_nodes(child))
    return out


def test_a_candidate_edge_on_a_roots_walk_makes_the_merged_verdict_a_lower_bound(tmp_path: Path) -> None:
    b = GraphBuilder(tmp_path / "src")
    root = b.repo("calc")
    b.add_file("calc", "m.py", "def a():\n    return 1\n\n\ndef b():\n    return a()\n")
    b.edge(
        b.sym("calc", "m.b"),
        EdgeKind.CALLS_DIRECT,
        b.sym("calc", "m.a"),
        confidence=Confidence.CANDIDATE,
        provenance=Provenance.PYTHON_SYNTAX_CALL,
    )
    gen = Generation(b.publish(StateLayout(tmp_path / "k.toml", tmp_path / "state")).path)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    text = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-    return 1\n+    return 2\n"
    (root / "m.py").write_text("def a():\n    return 2\n\n\ndef b():\n    return a()\n")
    answer = blast(gen, changes={"diff": text})
    assert answer["results"]["roots"][0]["qn"] == "m.a" and answer["results"]["changes"]["indexed_before"] == 1
    assert answer["completeness"]["verdict"] == "LOWER_BOUND" and answer["completeness"]["candidate_edges"] == 1


def test_any_text_given_as_a_diff_is_read_or_refused_with_a_diff_error() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from server.queries.changes import DiffError, consistent

    pieces = st.sampled_from(
        [
            "diff --git a/x.py b/x.py",
            "--- a/x.py",
            "+++ b/x.py",
            "--- /dev/null",
            "+++ /dev/null",
            "@@ -1 +1 @@",
            "@@ -1,0 +2,3 @@",
            "@@ -3,2 +0,0 @@",
            "-a",
            "+b",
            " c",
            "",
            "\\ No newline at end of file",
            "new file mode 100644",
            "deleted file mode 100644",
            "Binary files a/x and b/x differ",
            "+++ b/../y.py",
            "@@ -99999999999 +1 @@",
        ]
    )

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.lists(pieces, max_size=30))
    def read(lines: list[str]) -> None:
        try:
            files = parse_unified_diff("\n".join(lines))
        except DiffError:
            return
        for f in files:
            for new in (True, False):
                if consistent(b"a\nb\nc\n", f, new=new):
                    other_side(b"a\nb\nc\n", f, to_new=not new)

    read()
