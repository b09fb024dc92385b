"""Bundles: ``kivgraph index --repository NAME --bundle PATH`` writes one repository's part, ``kivgraph publish
--bundle`` verifies, links and publishes; a bad bundle is refused and nothing is published.

These run without an exact analyzer (``KIVGRAPH_SCIP_PYTHON`` points nowhere, so Python is on its fallback in
every job alike); the equality with ``kivgraph index`` through the real analyzers is tests/test_bundles_equal.py.
"""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import msgspec
import pytest

from indexer.bundle import MAGIC, BundleManifest, read_bundle
from snapshot_format.layout import read_current, resolve_layout
from snapshot_format.reader import open_current
from tests.bundle_kit import differences, git_commit, kivgraph, stored_rows, tool_answers
from tests.helpers import copy_fixture

NO_ANALYZER = {"KIVGRAPH_SCIP_PYTHON": "/nonexistent/scip-python"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The Python fixture pair as two git checkouts, a bundle of each built in its own home, and the
    generation ``kivgraph index`` publishes of both."""
    tmp = tmp_path_factory.mktemp("bundles")
    shapes = copy_fixture("pyrepo_a", tmp)
    drawing = copy_fixture("pyrepo_b", tmp)
    git_commit(shapes)
    git_commit(drawing)
    out: dict[str, Path] = {"shapes": shapes, "drawing": drawing, "tmp": tmp}
    for name, root in (("shapes", shapes), ("drawing", drawing)):
        home = tmp / f"job-{name}"
        assert kivgraph(home, "init", "--repository", f"{name}={root}", "--languages", "python").returncode == 0
        built = kivgraph(
            home, "index", "--repository", name, "--bundle", str(tmp / f"{name}.kgbundle"), env=NO_ANALYZER
        )
        assert built.returncode == 0, built.stderr
        out[f"{name}.kgbundle"] = tmp / f"{name}.kgbundle"
    index_home = tmp / "index"
    _register_both(index_home, out)
    indexed = kivgraph(index_home, "index", env=NO_ANALYZER)
    assert indexed.returncode == 0, indexed.stderr
    out["index"] = index_home
    return out


def _register_both(home: Path, pair: dict[str, Path]) -> None:
    for name in ("shapes", "drawing"):
        done = kivgraph(home, "init", "--repository", f"{name}={pair[name]}", "--languages", "python")
        assert done.returncode == 0, done.stderr


def _publisher(tmp: Path, pair: dict[str, Path], name: str) -> Path:
    home = tmp / name
    _register_both(home, pair)
    return home


def test_a_bundle_names_its_repository_commit_analyzers_and_packages_and_no_path_of_the_building_machine(
    pair: dict[str, Path],
) -> None:
    bundle = read_bundle(pair["drawing.kgbundle"])
    m = bundle.manifest
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=pair["drawing"], capture_output=True, text=True)
    assert (m.repository, m.commit, m.languages) == ("drawing", head.stdout.strip(), ("python",))
    assert [(e.language, e.name) for e in m.exports] == [("python", "drawing")]
    assert m.files == 3 and len(m.digest) == 64
    assert not m.complete and m.failures[0].startswith("python: scip-python failed: scip-python not found")
    assert [(a.language, a.analyzer, a.failure != "") for a in m.analyzers] == [("python", "scip-python", True)]
    raw = pair["drawing.kgbundle"].read_bytes()
    assert str(pair["drawing"]).encode() not in raw and str(pair["tmp"]).encode() not in raw
    assert {f.path for f in bundle.payload.files} >= {"drawing/canvas.py", "drawing/cli.py"}


def test_publishing_both_bundles_answers_every_tool_as_index_does(pair: dict[str, Path], tmp_path: Path) -> None:
    home = _publisher(tmp_path, pair, "publisher")
    done = kivgraph(
        home, "publish", "--bundle", str(pair["shapes.kgbundle"]), "--bundle", str(pair["drawing.kgbundle"])
    )
    assert done.returncode == 0, done.stderr
    assert "publish: PASS g000001.v1" in done.stdout
    with (
        open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(pair["index"])})) as a,
        open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as b,
    ):
        rows_a, rows_b = stored_rows(a), stored_rows(b)
        assert rows_a == rows_b, "\n".join(differences(rows_a, rows_b))
        answers_a, answers_b = tool_answers(a), tool_answers(b)
        assert answers_a == answers_b, "\n".join(differences(answers_a, answers_b))
        assert len(answers_a) > 100


def test_a_second_publication_carries_the_other_repository_from_its_kept_bundle(
    pair: dict[str, Path], tmp_path: Path
) -> None:
    home = tmp_path / "only-bundles"  # nothing registered: the repositories exist here only as bundles
    first = kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"]), "--json")
    assert first.returncode == 0, first.stderr
    second = kivgraph(home, "publish", "--bundle", str(pair["drawing.kgbundle"]), "--json")
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout.splitlines()[-1])["result"]
    assert [(r["name"], r["source"]) for r in result["repositories"]] == [  # the current generation's order first
        ("shapes", "kept bundle"),
        ("drawing", "bundle"),
    ]
    with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as gen:
        assert [r.name for r in gen.repositories()] == ["shapes", "drawing"]
        assert all(r.root == "" for r in gen.repositories())  # no checkout here: paths stay repository-relative
        with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(pair["index"])})) as indexed:
            assert gen.counts() == indexed.counts()


def _rewrite_manifest(path: Path, dest: Path, **fields: object) -> Path:
    raw = path.read_bytes()
    (n,) = struct.unpack_from(">Q", raw, len(MAGIC))
    start = len(MAGIC) + 8
    manifest = msgspec.json.decode(raw[start : start + n], type=BundleManifest)
    head = msgspec.json.encode(msgspec.structs.replace(manifest, **fields))
    dest.write_bytes(MAGIC + struct.pack(">Q", len(head)) + head + raw[start + n :])
    return dest


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncated", "truncated bundle: payload of"),
        ("header", "not a kivgraph bundle"),
        ("version", "bundle_format 99, this kivgraph"),
        ("generation", "built for generation format 0.0"),
        ("name", "field 'repository': the manifest names 'shapes' but the facts are 'drawing''s"),
        ("digest", "digest mismatch: the payload hashes to"),
    ],
)
def test_a_bad_bundle_is_refused_with_its_fault_named_and_nothing_published(
    pair: dict[str, Path], tmp_path: Path, damage: str, message: str
) -> None:
    good = pair["drawing.kgbundle"]
    bad = tmp_path / "bad.kgbundle"
    raw = good.read_bytes()
    if damage == "truncated":
        bad.write_bytes(raw[: len(raw) - 100])
    elif damage == "header":
        bad.write_bytes(b"PK\x03\x04" + raw[4:])
    elif damage == "version":
        _rewrite_manifest(good, bad, bundle_format=99)
    elif damage == "generation":
        _rewrite_manifest(good, bad, format_version=0, feature_version=0)
    elif damage == "name":
        _rewrite_manifest(good, bad, repository="shapes")
    else:
        flipped = bytearray(raw)
        flipped[-10] ^= 0xFF
        bad.write_bytes(bytes(flipped))
    home = _publisher(tmp_path, pair, "publisher")
    before = kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"]))
    assert before.returncode == 0, before.stderr
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    served = read_current(layout)
    refused = kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"]), "--bundle", str(bad))
    assert refused.returncode == 1
    assert f"error: {bad}: " in refused.stderr and message in refused.stderr, refused.stderr
    assert "nothing was published" in refused.stderr
    assert read_current(layout) == served
    assert sorted(p.name for p in layout.generations_dir.iterdir()) == [served]


def test_two_bundles_of_one_repository_are_refused(pair: dict[str, Path], tmp_path: Path) -> None:
    twin = tmp_path / "twin.kgbundle"
    twin.write_bytes(pair["shapes.kgbundle"].read_bytes())
    done = kivgraph(tmp_path / "home", "publish", "--bundle", str(pair["shapes.kgbundle"]), "--bundle", str(twin))
    assert done.returncode == 1
    assert f"{twin}: a second bundle of repository 'shapes'" in done.stderr
    assert not (tmp_path / "home" / "state" / "generations").exists() or not any(
        (tmp_path / "home" / "state" / "generations").iterdir()
    )


def test_a_bundle_of_another_commit_than_the_checkout_is_refused_naming_both_unless_allowed(
    pair: dict[str, Path], tmp_path: Path
) -> None:
    checkout = tmp_path / "drawing"
    subprocess.run(["git", "clone", "-q", str(pair["drawing"]), str(checkout)], check=True)
    (checkout / "drawing" / "extra.py").write_text("def later():\n    return 1\n")
    newer = git_commit_on(checkout)
    bundle = read_bundle(pair["drawing.kgbundle"]).manifest.commit
    home = tmp_path / "publisher"
    assert kivgraph(home, "init", "--repository", f"drawing={checkout}", "--languages", "python").returncode == 0
    refused = kivgraph(home, "publish", "--bundle", str(pair["drawing.kgbundle"]))
    assert refused.returncode == 1
    assert f"built at commit {bundle}, its checkout {checkout} is at commit {newer}" in refused.stderr
    assert "--allow-commit-mismatch" in refused.stderr
    assert read_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) is None
    allowed = kivgraph(home, "publish", "--bundle", str(pair["drawing.kgbundle"]), "--allow-commit-mismatch")
    assert allowed.returncode == 0, allowed.stderr
    assert f"(checkout here at {newer[:12]})" in allowed.stdout
    from server.tools.status import graph_status

    with open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(home)})) as gen:
        (row,) = graph_status(gen, {})["results"]["repository_freshness"]
        assert (row["indexed_commit"], row["current_commit"], row["moved"]) == (bundle, newer, True)


def git_commit_on(root: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "later"], cwd=root, check=True, env={**_path_env(), **env})
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()


def _path_env() -> dict[str, str]:
    import os

    return {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}


def test_bundle_needs_exactly_one_repository_and_no_watch(tmp_path: Path) -> None:
    none = kivgraph(tmp_path, "index", "--bundle", str(tmp_path / "x.kgbundle"))
    assert none.returncode == 2 and "give exactly one --repository NAME" in none.stderr
    watching = kivgraph(tmp_path, "index", "--repository", "a", "--bundle", str(tmp_path / "x"), "--watch")
    assert watching.returncode == 2 and "cannot be combined with --watch" in watching.stderr
    publish = kivgraph(tmp_path, "publish")
    assert publish.returncode == 2 and "--bundle" in publish.stderr


def test_help_explains_both_commands() -> None:
    index_help = kivgraph(Path("/nonexistent"), "index", "--help").stdout
    assert "--bundle PATH" in index_help and "kivgraph publish --bundle" in index_help
    publish_help = kivgraph(Path("/nonexistent"), "publish", "--help").stdout
    for text in ("--allow-commit-mismatch", "Exit codes", "nothing is written", "digest"):
        assert text in publish_help


def test_a_server_reads_the_source_of_a_bundle_published_without_checkout_from_its_own_kivgraph_toml(
    pair: dict[str, Path], tmp_path: Path
) -> None:
    from server.holder import SnapshotHolder
    from server.tools.source import get_source

    home = tmp_path / "serving"
    done = kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"]))
    assert done.returncode == 0, done.stderr
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})

    def source_of_circle() -> str:
        holder = SnapshotHolder(layout)
        try:
            holder.start()
            with holder.lease() as gen:
                assert gen is not None
                circle = next(s for s in gen.declarations("shapes", "src/shapes/circle.py") if s.name == "Circle")
                return get_source(gen, {"symbols": [{"stable_key": circle.key}]})
        finally:
            holder.close()

    assert "class Circle" not in source_of_circle()  # the generation names no checkout, and none is registered
    checkout = copy_fixture("pyrepo_a", tmp_path / "here")  # this server's own checkout, somewhere else
    assert kivgraph(home, "init", "--repository", f"shapes={checkout}", "--languages", "python").returncode == 0
    assert "class Circle" in source_of_circle()


def test_publish_fails_fast_with_code_three_while_another_indexer_holds_the_state_directory(
    pair: dict[str, Path], tmp_path: Path
) -> None:
    from indexer.publish import PublishLock

    home = tmp_path / "locked"
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    with PublishLock(layout):
        done = kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"]))
        built = kivgraph(home, "index", "--repository", "x", "--bundle", str(tmp_path / "x.kgbundle"))
    assert done.returncode == 3 and "another kivgraph index is running" in done.stderr
    assert built.returncode == 3, built.stderr
    assert read_current(layout) is None


@pytest.mark.parametrize("step", ["built", "validated", "renamed"])
def test_a_publish_killed_at_any_step_leaves_the_previous_generation_serving_and_the_next_one_completes(
    pair: dict[str, Path], tmp_path: Path, step: str
) -> None:
    home = tmp_path / "killed"
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    assert kivgraph(home, "publish", "--bundle", str(pair["shapes.kgbundle"])).returncode == 0
    kept = (home / "state" / "bundles" / "kept.json").read_text()
    killed = kivgraph(home, "publish", "--bundle", str(pair["drawing.kgbundle"]), env={"KIVGRAPH_FAULT_KILL_AT": step})
    assert killed.returncode == -9, killed.stderr
    assert read_current(layout) == "g000001.v1"
    with open_current(layout) as gen:
        assert [r.name for r in gen.repositories()] == ["shapes"]
    assert (home / "state" / "bundles" / "kept.json").read_text() == kept  # still the bundles g000001 came from
    again = kivgraph(home, "publish", "--bundle", str(pair["drawing.kgbundle"]))
    assert again.returncode == 0, again.stderr
    with open_current(layout) as gen:
        assert [r.name for r in gen.repositories()] == ["shapes", "drawing"]
        assert gen.name != "g000001.v1" and not list(layout.generations_dir.glob(".tmp-*"))
