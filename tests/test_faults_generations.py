"""Fault suite, generations: damaged, truncated and unpointed generations, a full disk — and a server that survives."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from snapshot_format.layout import read_current, read_pointer
from snapshot_format.manifest import read_manifest
from snapshot_format.reader import Generation, open_newest_intact
from tests.fault_kit import SOURCE, flip_bytes, indexed_home, layout_of
from tests.fault_kit import index as run_index
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph
from tests.server_fixtures import StdioPeer, stdio_serve

pytestmark = [pytest.mark.e2e]

SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.05", "--verify-delay", "0"]
PAGE = 4096


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def data_file(home: Path, name: str) -> Path:
    """The repository's layer of a generation (its declarations and files; ``--full`` wrote it afresh)."""
    generation = layout_of(home).generations_dir / name
    (layer,) = read_manifest(generation).layers
    return generation / layer.directory / "data.mdb"


def damage_lightly(path: Path) -> None:
    """Flip the bytes of one stored name: the file still opens and reads, only the digest can tell."""
    raw = path.read_bytes()
    at = raw.index(b"pkg/core.py")
    flip_bytes(path, [at + 1, at + 2])


def damage_heavily(path: Path) -> None:
    """Flip the page number and flags of every data page: LMDB itself trips over them."""
    pages = path.stat().st_size // PAGE
    flip_bytes(path, [p * PAGE + off for p in range(2, pages) for off in (0, 10)])


async def snapshot_becomes(peer: StdioPeer, snapshot_id: int) -> dict[str, object]:
    """Ask graph_status until it answers from ``snapshot_id`` (bounded by the caller's timeout)."""
    while True:
        is_error, text = await peer.call("graph_status")
        if not is_error and json.loads(text)["snapshot_id"] == snapshot_id:
            return json.loads(text)
        await anyio.sleep(0.05)


# --- fault 2: a damaged generation is detected, reported and left for the newest good one --------------


@pytest.mark.anyio
@pytest.mark.parametrize("damage", [damage_lightly, damage_heavily], ids=["flipped-value", "flipped-pages"])
async def test_a_server_leaves_a_damaged_generation_for_the_newest_intact_one(tmp_path: Path, damage: object) -> None:
    home = indexed_home(tmp_path, generations=2)
    damage(data_file(home, "g000002.v1"))  # type: ignore[operator]
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        with anyio.fail_after(60):
            status = await snapshot_becomes(peer, 1)
        assert status["results"]["status"] == "ready"  # type: ignore[index]
        is_error, text = await peer.call("find_symbol", {"name": "helper"})
        assert not is_error, text
        assert json.loads(text)["snapshot_id"] == 1
    assert peer.process.returncode == 0
    assert b"Traceback" not in peer.stderr
    # refused on open (LMDB cannot open its sub-databases) or condemned by a failed read or digest
    assert b"g000002.v1 is damaged" in peer.stderr or b"skipped a generation" in peer.stderr


@pytest.mark.parametrize("damage", [damage_lightly, damage_heavily], ids=["flipped-value", "flipped-pages"])
def test_status_and_doctor_deep_report_a_damaged_current_generation(tmp_path: Path, damage: object) -> None:
    home = indexed_home(tmp_path, generations=2)
    damage(data_file(home, "g000002.v1"))  # type: ignore[operator]
    status = run_kivgraph(home, "status", "--json")
    assert status.returncode == 1, status.stderr
    payload = json.loads(status.stdout)
    assert payload["status"] == "degraded" and payload["generation"] == "g000001.v1"
    assert any("g000002.v1" in r for r in payload["refused"])
    doctor = run_kivgraph(home, "doctor", "--deep", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert doctor.returncode == 1
    assert "generation: FAIL (CURRENT names g000002.v1, which is unusable" in doctor.stdout
    assert "servers answer from g000001.v1" in doctor.stdout
    for result in (status, doctor):
        assert "Traceback" not in result.stderr


def test_every_generation_unreadable_says_so(tmp_path: Path) -> None:
    home = indexed_home(tmp_path, generations=2)
    for name in ("g000001.v1", "g000002.v1"):
        damage_heavily(data_file(home, name))
    status = run_kivgraph(home, "status")
    assert status.returncode == 1
    assert "every generation in" in status.stderr and "is unreadable" in status.stderr
    doctor = run_kivgraph(home, "doctor", "--deep", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert "generation: FAIL (every generation in" in doctor.stdout
    assert "Traceback" not in status.stderr + doctor.stderr
    # the next index publishes a good one over them
    assert run_index(home).returncode == 0
    generation, refused = open_newest_intact(layout_of(home))
    with generation:
        assert generation.name == "g000003.v1" and refused == []


# --- fault 3: CURRENT that is not a valid pointer ----------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00g000002.v1", b"", b"../../etc/passwd\n", b"g" * 5000],
    ids=["non-utf8", "empty", "not-a-name", "oversized"],
)
def test_an_invalid_current_is_no_pointer_everyone_falls_back_and_the_next_index_repairs_it(
    tmp_path: Path, content: bytes
) -> None:
    home = indexed_home(tmp_path, generations=2)
    layout = layout_of(home)
    layout.current_pointer.write_bytes(content)
    assert read_pointer(layout).name is None and read_pointer(layout).problem
    status = run_kivgraph(home, "status", "--json")
    assert status.returncode == 1 and json.loads(status.stdout)["generation"] == "g000002.v1"
    doctor = run_kivgraph(home, "doctor", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert "generation.pointer: FAIL" in doctor.stdout and "rewrites CURRENT" in doctor.stdout
    assert "no published generation yet" not in doctor.stdout
    repaired = run_index(home)
    assert repaired.returncode == 0, repaired.stderr
    assert read_current(layout) == "g000003.v1"
    assert run_kivgraph(home, "status").returncode == 0


def test_a_missing_current_with_generations_on_disk_is_a_doctor_warning(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    layout_of(home).current_pointer.unlink()
    doctor = run_kivgraph(home, "doctor", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    assert "generation.pointer: WARN" in doctor.stdout and "1 generations are on disk" in doctor.stdout


@pytest.mark.anyio
async def test_a_server_starts_on_a_non_utf8_current_and_answers_from_the_newest_generation(tmp_path: Path) -> None:
    home = indexed_home(tmp_path, generations=2)
    layout_of(home).current_pointer.write_bytes(b"\xc3\x28\xa0\xa1")
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        is_error, text = await peer.call("find_symbol", {"name": "helper"})
        assert not is_error and json.loads(text)["snapshot_id"] == 2
        assert run_index(home).returncode == 0  # publishing repairs the pointer; the server follows it
        with anyio.fail_after(60):
            await snapshot_becomes(peer, 3)
    assert peer.process.returncode == 0 and b"Traceback" not in peer.stderr


# --- fault 4: a data file that changes size under a running server ------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("new_size", [0, PAGE * 3, None], ids=["emptied", "cut-to-three-pages", "grown"])
async def test_a_server_survives_the_served_data_file_changing_size_and_falls_back(
    tmp_path: Path, new_size: int | None
) -> None:
    home = indexed_home(tmp_path, generations=2)
    data = data_file(home, "g000002.v1")
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        is_error, text = await peer.call("find_symbol", {"name": "helper"})
        assert not is_error and json.loads(text)["snapshot_id"] == 2
        with open(data, "r+b") as fh:
            fh.truncate(data.stat().st_size + PAGE if new_size is None else new_size)
        for tool, arguments in [
            ("find_symbol", {"name": "helper"}),
            ("get_file_outline", {"repository": "repo", "path": "pkg/core.py"}),
            ("find_by_intent", {"query": "helper"}),
        ]:
            is_error, text = await peer.call(tool, arguments)
            assert not is_error, text
            assert json.loads(text)["snapshot_id"] == 1
    assert peer.process.returncode == 0, peer.stderr.decode(errors="replace")[-2000:]
    assert b"differs from the" in peer.stderr


def test_a_truncated_generation_is_refused_before_it_is_mapped(tmp_path: Path) -> None:
    home = indexed_home(tmp_path, generations=2)
    data = data_file(home, "g000002.v1")
    with open(data, "r+b") as fh:
        fh.truncate(PAGE * 2)
    with pytest.raises(Exception, match="differs from the"):
        Generation(layout_of(home).generations_dir / "g000002.v1")
    status = run_kivgraph(home, "status", "--json")
    assert json.loads(status.stdout)["generation"] == "g000001.v1"


# --- fault 10: a full disk says which directory and what still serves ----------------------------------------


def test_a_full_disk_names_the_directory_and_the_generation_that_still_serves(tmp_path: Path) -> None:
    files = dict(SOURCE)
    for i in range(60):
        files[f"pkg/m{i}.py"] = "".join(f"def f{i}_{j}():\n    return {j}\n\n" for j in range(40))
    home = indexed_home(tmp_path, files=files)
    layout = layout_of(home)
    (tmp_path / "repo" / "pkg" / "late.py").write_text("def late():\n    return 1\n")
    limit = data_file(home, "g000001.v1").stat().st_size // 2

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "index", "--fact-cache", "off"],
        cwd=REPO_ROOT,
        env=kivgraph_env(home, KIVGRAPH_SCIP_PYTHON="/nonexistent"),
        capture_output=True,
        text=True,
        preexec_fn=small_disk,
        timeout=300,
    )
    assert result.returncode == 1
    assert f"could not write into {layout.generations_dir}" in result.stderr
    assert "the previous generation g000001.v1 still serves" in result.stderr
    assert "Traceback" not in result.stderr
    assert read_current(layout) == "g000001.v1"
    assert not [p for p in layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]
