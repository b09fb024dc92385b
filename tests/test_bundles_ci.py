"""docs/deploy run locally: the workflow's own commands as separate jobs, and a server following a copied directory.

The bundle step of ``docs/deploy/github-actions.yml`` runs once per repository, each in its own process with its
own workspace, ``KIVGRAPH_HOME`` (state directory and fact cache) and ``RUNNER_TEMP``, as matrix jobs would; the
bundles are "uploaded" (copied) into the publishing job's ``bundles/``, whose own step runs next. Then a server's
holder follows a second state directory into which a generation is copied in the order docs/deploy/README.md
gives, one step at a time, and in wrong orders. Python stays on its fallback in every job here (the equality
through real analyzers is tests/test_bundles_equal.py), so these are fast.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from server.holder import SnapshotHolder
from snapshot_format.layout import MANIFEST_FILENAME, StateLayout, read_current, resolve_layout
from snapshot_format.reader import open_current
from tests.bundle_kit import differences, git_commit, kivgraph, stored_rows
from tests.helpers import REPO_ROOT, copy_fixture

WORKFLOW = REPO_ROOT / "docs" / "deploy" / "github-actions.yml"
NO_ANALYZER = {"KIVGRAPH_SCIP_PYTHON": "/nonexistent/scip-python"}


def step_script(name: str) -> str:
    """The ``run: |`` block of the workflow step called ``name``, dedented."""
    text = WORKFLOW.read_text()
    match = re.search(rf"- name: {re.escape(name)}\n(?:\s+\w+:.*\n)*?\s+run: \|\n((?:\s{{10,}}.*\n|\n)+)", text)
    assert match, f"no step {name!r} with a run block in {WORKFLOW}"
    return textwrap.dedent(match.group(1))


def matrix(script: str, **values: str) -> str:
    """``${{ matrix.KEY }}`` replaced as GitHub Actions would."""

    def value(m: re.Match[str]) -> str:
        return values[m.group(1)]

    return re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", value, script)


def _job_env(tmp: Path, workspace: Path, home: Path) -> dict[str, str]:
    """What a runner gives a job: its workspace, a temp dir, the job's KIVGRAPH_HOME, kivgraph on the PATH."""
    bin_dir = tmp / "bin"
    if not (bin_dir / "kivgraph").exists():
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "kivgraph").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kivgraph_cli "$@"\n')
        (bin_dir / "kivgraph").chmod(0o755)
    runner_temp = workspace.parent / f"{workspace.name}-temp"
    runner_temp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIVGRAPH", "GITHUB", "RUNNER", "VIRTUAL_ENV"))}
    env.update(NO_ANALYZER)
    env.update(
        {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(runner_temp),
            "KIVGRAPH_HOME": str(home),
        }
    )
    return env


@pytest.fixture(scope="module")
def ci(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fixture pair through the workflow: two bundle jobs, one publishing job; and ``kivgraph index`` of both."""
    tmp = tmp_path_factory.mktemp("ci")
    bundle_step = step_script("Build the bundle")
    publish_step = step_script("Link and publish")
    publisher = tmp / "publish-job"
    (publisher / "bundles").mkdir(parents=True)
    checkouts: dict[str, Path] = {}
    for name, fixture in (("shapes", "pyrepo_a"), ("drawing", "pyrepo_b")):
        workspace = tmp / f"job-{name}"
        workspace.mkdir()
        src = copy_fixture(fixture, workspace)
        src = src.rename(workspace / "src")  # actions/checkout with path: src
        git_commit(src)
        checkouts[name] = src
        env = _job_env(tmp, workspace, Path(f"{workspace}-temp") / "kivgraph")
        done = subprocess.run(
            ["bash", "-e", "-c", matrix(bundle_step, name=name, languages="python")],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        built = Path(env["RUNNER_TEMP"]) / f"{name}.kgbundle"
        assert built.is_file(), done.stdout
        shutil.copy(built, publisher / "bundles" / built.name)  # upload-artifact, then download-artifact
    env = _job_env(tmp, publisher, publisher / "kivgraph")
    done = subprocess.run(
        ["bash", "-e", "-c", publish_step], cwd=publisher, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "publish: PASS g000001.v1" in done.stdout and "graph: g000001.v1" in done.stdout
    index_home = tmp / "index"
    for name, src in checkouts.items():
        assert kivgraph(index_home, "init", "--repository", f"{name}={src}", "--languages", "python").returncode == 0
    indexed = kivgraph(index_home, "index", env=NO_ANALYZER)
    assert indexed.returncode == 0, indexed.stderr
    return {"publisher": publisher / "kivgraph", "index": index_home, "tmp": tmp, **checkouts}


def test_the_workflow_jobs_build_bundles_apart_and_the_publish_job_links_them(ci: dict[str, Path]) -> None:
    with (
        open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(ci["publisher"])})) as published,
        open_current(resolve_layout(environ={"KIVGRAPH_HOME": str(ci["index"])})) as indexed,
    ):
        assert sorted(r.name for r in published.repositories()) == ["drawing", "shapes"]
        assert all(r.root == "" for r in published.repositories())  # the publishing job has no checkout
        a, b = stored_rows(indexed), stored_rows(published)
        for rows in (a, b):  # where each generation found the checkouts is no content
            for key in [k for k in rows if k.startswith("repository ")]:
                rows[key] = {**rows[key], "root": ""}
            # nothing registered in the publishing job: the repositories come in the order of bundles/*.kgbundle
            rows["lexicon"] = sorted(rows["lexicon"])
        assert a == b, "\n".join(differences(a, b))
        deps = list(published.package_dependencies("shapes"))  # the consumer's use of the provider, linked across jobs
        assert [(d.consumer_repository, d.provider_repository) for d in deps] == [("drawing", "shapes")]
    # Each job had its own state directory: the publisher's holds no fact of a job, each job no generation.
    caches = set()
    for name in ("shapes", "drawing"):
        job = resolve_layout(environ={"KIVGRAPH_HOME": str(ci["tmp"] / f"job-{name}-temp" / "kivgraph")})
        assert job.fact_cache_dir.is_dir() and read_current(job) is None
        caches.add(job.fact_cache_dir)
    caches.add(resolve_layout(environ={"KIVGRAPH_HOME": str(ci["publisher"])}).fact_cache_dir)
    assert len(caches) == 3


# --- a server following a generations directory another machine publishes into ------------------------------


def _copy_layers(source: Path, incoming: Path) -> None:
    incoming.mkdir(parents=True)
    for f in sorted(source.iterdir()):
        if f.is_dir():  # a layered generation's layers/: one environment per repository
            shutil.copytree(f, incoming / f.name)
        elif f.name != MANIFEST_FILENAME:
            shutil.copy2(f, incoming / f.name)


def _set_current(layout: StateLayout, name: str) -> None:
    tmp = layout.state_dir / "CURRENT.tmp"
    tmp.write_text(f"{name}\n")
    os.replace(tmp, layout.current_pointer)


def _ship_in_order(source: StateLayout, follower: StateLayout, name: str, holder: SnapshotHolder) -> list[str | None]:
    """Copy generation ``name`` in the documented order; what the holder serves after each step."""
    served: list[str | None] = []
    incoming = follower.generations_dir / f".incoming-{name}"
    _copy_layers(source.generations_dir / name, incoming)  # 1. the layers
    holder.refresh()
    served.append(holder.current_name)
    shutil.copy2(source.generations_dir / name / MANIFEST_FILENAME, incoming / MANIFEST_FILENAME)  # 2. the manifest
    holder.refresh()
    served.append(holder.current_name)
    os.rename(incoming, follower.generations_dir / name)  # 3. one rename
    holder.refresh()
    served.append(holder.current_name)
    _set_current(follower, name)  # 4. CURRENT last
    holder.refresh()
    served.append(holder.current_name)
    return served


def _second_generation(ci: dict[str, Path]) -> StateLayout:
    """The publisher's state with a second generation (drawing's bundle published again)."""
    source = resolve_layout(environ={"KIVGRAPH_HOME": str(ci["publisher"])})
    if read_current(source) == "g000001.v1":
        bundle = next((ci["publisher"].parent / "bundles").glob("drawing*.kgbundle"))
        again = kivgraph(ci["publisher"], "publish", "--bundle", str(bundle))
        assert again.returncode == 0, again.stderr
    assert read_current(source) == "g000002.v1"
    return source


def test_a_following_server_swaps_only_once_a_generation_copied_in_order_is_whole(
    ci: dict[str, Path], tmp_path: Path
) -> None:
    source = _second_generation(ci)
    follower = resolve_layout(environ={"KIVGRAPH_HOME": str(tmp_path / "server")})
    follower.generations_dir.mkdir(parents=True)
    holder = SnapshotHolder(follower)
    try:
        holder.start()
        assert holder.current_name is None
        assert _ship_in_order(source, follower, "g000001.v1", holder) == [None, None, None, "g000001.v1"]
        assert _ship_in_order(source, follower, "g000002.v1", holder) == [
            "g000001.v1",
            "g000001.v1",
            "g000001.v1",
            "g000002.v1",
        ]
        with holder.lease() as gen:
            assert gen is not None and gen.counts().repositories == 2
    finally:
        holder.close()


@pytest.mark.parametrize("wrong", ["current first", "manifest with a cut data file", "damaged data of equal size"])
def test_a_following_server_never_serves_a_generation_copied_out_of_order(
    ci: dict[str, Path], tmp_path: Path, wrong: str
) -> None:
    source = _second_generation(ci)
    follower = resolve_layout(environ={"KIVGRAPH_HOME": str(tmp_path / "server")})
    follower.generations_dir.mkdir(parents=True)
    holder = SnapshotHolder(follower)
    try:
        holder.start()
        _ship_in_order(source, follower, "g000001.v1", holder)
        assert holder.current_name == "g000001.v1"
        name = "g000002.v1"
        target = follower.generations_dir / name
        if wrong == "current first":  # CURRENT copied with the tree, before the generation
            _set_current(follower, name)
            holder.refresh()
            assert holder.current_name == "g000001.v1"
            _copy_layers(source.generations_dir / name, target)  # the data under its final name, no manifest yet
            holder.refresh()
            assert holder.current_name == "g000001.v1"
        elif wrong == "manifest with a cut data file":  # a copy interrupted in the middle of the data file
            shutil.copytree(source.generations_dir / name, target)
            data = target / "data.mdb"
            data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
            _set_current(follower, name)
            holder.refresh()
            assert holder.current_name == "g000001.v1"
        else:  # every size right, a page of the data changed on the way: the digest check refuses it
            shutil.copytree(source.generations_dir / name, target)
            # the environment holding the record: a repository's layer of a layered generation
            data = next(p for p in sorted(target.rglob("data.mdb")) if b"Canvas" in p.read_bytes())
            raw = bytearray(data.read_bytes())
            at = raw.find(b"Canvas")  # inside a stored record: the content digest covers it
            assert at > 0
            raw[at] ^= 0x20
            data.write_bytes(bytes(raw))
            _set_current(follower, name)
            holder.refresh()
            holder.verify_current()  # the full check the server runs off the request path
            assert holder.current_name == "g000001.v1"
        with holder.lease() as gen:
            assert gen is not None and gen.name == "g000001.v1" and gen.counts().repositories == 2
    finally:
        holder.close()
