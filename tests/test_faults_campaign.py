"""Randomized fault campaigns: SIGKILL at random points while a server answers, racing indexers,
random corruptions of a generation, random protocol input.

Each campaign runs ``KIVGRAPH_FAULT_ROUNDS`` rounds (a few in ``make test``; ``make faults`` runs the
long version) from a seed (``KIVGRAPH_FAULT_SEED``, default fixed) so a failure replays exactly. With
``KIVGRAPH_FAULT_REPORT=<file>`` each campaign appends its counts there (the README's table).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from indexer.faults import POINTS
from indexer.publish import PUBLISH_STEPS
from snapshot_format.layout import list_generations, read_current
from snapshot_format.reader import Generation, open_current
from tests.fault_kit import SOURCE, flip_bytes, indexed_home, layout_of, no_analyzer_env
from tests.fault_kit import index as run_index
from tests.helpers import REPO_ROOT, kivgraph_env, run_kivgraph
from tests.server_fixtures import StdioPeer, stdio_serve

pytestmark = [pytest.mark.faults, pytest.mark.e2e]

ROUNDS = int(os.environ.get("KIVGRAPH_FAULT_ROUNDS", "4"))
SEED = int(os.environ.get("KIVGRAPH_FAULT_SEED", "12"))
SERVE = [sys.executable, "-m", "kivgraph_cli", "serve", "--poll-interval", "0.05", "--verify-delay", "0"]
PAGE = 4096


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def report(campaign: str, **counts: int) -> None:
    target = os.environ.get("KIVGRAPH_FAULT_REPORT")
    if target:
        with open(target, "a") as fh:
            fh.write(json.dumps({"campaign": campaign, "rounds": ROUNDS, "seed": SEED, **counts}) + "\n")


def visible_generations_are_whole(home: Path) -> list[str]:
    """Every published generation opens and verifies; CURRENT names one of them."""
    layout = layout_of(home)
    names = []
    for _gid, _fmt, path in list_generations(layout):
        with Generation(path) as gen:
            gen.verify_digest()
            names.append(gen.name)
    assert read_current(layout) in names
    return names


# --- SIGKILL at random points, a server answering throughout -------------------------------------------


def kill_points(files: int, cache_writes: int) -> list[str]:
    """Every fault point, the per-file ones at each of their hits in a run that re-reads one edited file."""
    out = [f"extract#{n}" for n in range(1, files + 1)] + [f"cache.write#{n}" for n in range(1, cache_writes + 1)]
    return [*out, "discover", "analyze", *PUBLISH_STEPS]


@pytest.mark.anyio
async def test_sigkill_at_random_points_never_loses_the_served_generation(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home = indexed_home(tmp_path)
    repo = tmp_path / "repo"
    layout = layout_of(home)
    points = kill_points(len(SOURCE) + 1, 2)  # the edited file's facts and its lexical terms
    assert {p.split("#")[0] for p in points} == {*POINTS, *PUBLISH_STEPS}
    injected = survived = 0
    order = [points[i % len(points)] for i in range(max(ROUNDS, 1))]
    rng.shuffle(order)
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for round_no, point in enumerate(order):
            (repo / "pkg" / "edit.py").write_text(f"def edit_{round_no}():\n    return {round_no}\n")
            before = read_current(layout)
            killed = await anyio.to_thread.run_sync(lambda p=point: run_index(home, KIVGRAPH_FAULT_KILL_AT=p))
            injected += 1
            assert killed.returncode == -9, (point, killed.returncode, killed.stderr[-500:])
            now = read_current(layout)
            assert now == before or point == "current", point
            visible_generations_are_whole(home)
            is_error, text = await peer.call("find_symbol", {"name": "helper"})
            assert not is_error, (point, text)
            assert json.loads(text)["total"] >= 1
            recovered = await anyio.to_thread.run_sync(lambda: run_index(home))
            assert recovered.returncode == 0, (point, recovered.stderr[-1000:])
            assert not [p for p in layout.generations_dir.iterdir() if p.name.startswith(".tmp-")]
            with open_current(layout) as gen:
                assert gen.symbols_by_name(f"edit_{round_no}"), point
            survived += 1
    assert peer.process.returncode == 0 and b"Traceback" not in peer.stderr
    report("sigkill", injected=injected, survived=survived)


# --- two indexers racing over an edit ------------------------------------------------------------------------


def test_two_indexers_racing_over_an_edit_publish_only_newer_content(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    home = indexed_home(tmp_path)
    layout = layout_of(home)
    repo = tmp_path / "repo"
    env = kivgraph_env(home, **no_analyzer_env())
    races = refused = 0
    for round_no in range(max(ROUNDS, 1)):
        (repo / "pkg" / f"race_{round_no}.py").write_text(f"def race_{round_no}():\n    return {rng.random()}\n")
        before = open_current(layout)
        before_id = before.id
        before.close()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "kivgraph_cli", "index"],
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=300), p.communicate()[1].decode()) for p in procs]
        codes = sorted(code for code, _err in results)
        assert codes in ([0, 0], [0, 3]), results
        for code, err in results:
            if code == 3:
                refused += 1
                assert "another kivgraph index is running" in err and "pid " in err
        with open_current(layout) as gen:
            assert gen.id > before_id
            assert gen.symbols_by_name(f"race_{round_no}")  # both read the tree after the edit
        races += 1
    visible_generations_are_whole(home)
    report("race", races=races, second_refused=refused)


# --- random corruptions of the newest generation ---------------------------------------------------------------


def corrupt(rng: random.Random, gen_dir: Path, layout_current: Path) -> str:
    """Apply one random corruption; returns its name."""
    data = gen_dir / "data.mdb"
    size = data.stat().st_size
    kind = rng.choice(
        [
            "flip-bytes",
            "flip-pages",
            "zero-page",
            "truncate",
            "extend",
            "manifest",
            "current-bytes",
            "current-garbage",
            "delete-data",
        ]
    )
    if kind == "flip-bytes":
        flip_bytes(data, [rng.randrange(2 * PAGE, size) for _ in range(rng.randint(1, 64))])
    elif kind == "flip-pages":
        flip_bytes(data, [p * PAGE + rng.randrange(16) for p in range(2, size // PAGE) if rng.random() < 0.5])
    elif kind == "zero-page":
        with open(data, "r+b") as fh:
            fh.seek(rng.randrange(2, size // PAGE) * PAGE)
            fh.write(b"\0" * PAGE)
    elif kind == "truncate":
        with open(data, "r+b") as fh:
            fh.truncate(rng.randrange(0, size))
    elif kind == "extend":
        with open(data, "r+b") as fh:
            fh.truncate(size + rng.randint(1, 4) * PAGE)
    elif kind == "manifest":
        manifest = gen_dir / "manifest"
        raw = bytearray(manifest.read_bytes())
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] ^= 0xFF
        manifest.write_bytes(bytes(raw))
    elif kind == "current-bytes":
        layout_current.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))))
    elif kind == "current-garbage":
        layout_current.write_text(rng.choice(["g999999.v1\n", "g000002.v9\n", "../g000001.v1", "\n"]))
    else:
        data.unlink()
    return kind


def _probe_tools() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("find_symbol", {"name": "helper"}),
        ("get_symbol", {"qualified_name": "pkg.core.helper"}),
        ("find_references", {"name": "helper"}),
        ("get_blast_radius", {"qualified_name": "pkg.core.helper"}),
        ("trace_dependencies", {"qualified_name": "pkg.core.run"}),
        ("get_file_outline", {"repository": "repo", "path": "pkg/core.py"}),
        ("find_by_intent", {"query": "helper"}),
        ("get_source", {"symbols": [{"qualified_name": "pkg.core.helper"}]}),
        ("find_cross_repo_consumers", {"qualified_name": "pkg.core.helper"}),
        ("list_repositories", {}),
        ("graph_status", {}),
    ]


async def _answers_from(peer: StdioPeer, snapshot_id: int) -> None:
    with anyio.fail_after(60):
        while True:
            is_error, text = await peer.call("graph_status")
            if not is_error and json.loads(text)["snapshot_id"] == snapshot_id:
                return
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_random_corruptions_are_detected_and_a_server_survives_them(tmp_path: Path) -> None:
    rng = random.Random(SEED + 2)
    tried = detected = harmless = 0
    kinds: dict[str, int] = {}
    for round_no in range(max(ROUNDS, 1)):
        home = indexed_home(tmp_path / f"r{round_no}", generations=2)
        layout = layout_of(home)
        kind = corrupt(rng, layout.generations_dir / "g000002.v1", layout.current_pointer)
        kinds[kind] = kinds.get(kind, 0) + 1
        tried += 1
        status = run_kivgraph(home, "status", "--json")
        assert status.returncode in (0, 1) and "Traceback" not in status.stderr, (kind, status.stderr[-800:])
        payload = json.loads(status.stdout)
        assert payload["status"] in ("ready", "degraded"), (kind, payload)
        expected = payload["generation_id"]
        if expected == 1 or payload["status"] == "degraded":
            detected += 1
        else:
            harmless += 1  # the bytes changed were not content (free space): the digest still matches
        doctor = run_kivgraph(home, "doctor", "--deep", KIVGRAPH_SCIP_PYTHON="/nonexistent")
        assert "Traceback" not in doctor.stderr
        assert (doctor.returncode == 0) == (payload["status"] == "ready"), (kind, doctor.stdout)
        async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
            await peer.initialize()
            await _answers_from(peer, expected)
            for tool, arguments in _probe_tools():
                is_error, text = await peer.call(tool, arguments)
                assert not is_error or not text.startswith("SNAPSHOT_UNAVAILABLE"), (kind, tool, text)
        assert peer.process.returncode == 0, (kind, peer.stderr.decode(errors="replace")[-2000:])
        if b"Traceback" in peer.stderr:  # pytest folds long messages: keep the whole log next to the round
            log = tmp_path / f"r{round_no}" / "serve-stderr.log"
            log.write_bytes(bytes(peer.stderr))
            raise AssertionError(f"{kind}: serve logged a traceback; its whole stderr is in {log}")
    assert tried == detected + harmless
    report(
        "corruption", tried=tried, detected=detected, harmless=harmless, **{f"kind.{k}": v for k, v in kinds.items()}
    )


# --- random protocol input -----------------------------------------------------------------------------------


def garbage_line(rng: random.Random, request_id: int) -> tuple[bytes, object]:
    """(a line, the id its error must carry) — every line here is a request or garbage, so it must be answered."""
    good = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "find_symbol", "arguments": {"name": "helper"}},
    }
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(rng.randrange(1, 256) for _ in range(rng.randint(1, 300))).replace(b"\n", b" "), None
    if kind == 1:
        text = json.dumps(good)
        cut = rng.randrange(1, len(text))
        return text[:cut].encode(), None
    if kind == 2:
        good["params"] = rng.choice([[1, 2, 3], 7, "x", None, True])
        return json.dumps(good).encode(), request_id
    if kind == 3:
        depth = rng.randint(65, 3000)
        return (
            b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":' % request_id
            + b'{"a":' * depth
            + b"1"
            + b"}" * depth
            + b"}",
            request_id,
        )
    if kind == 4:
        good["params"]["arguments"]["name"] = "\ud800" + "x" * rng.randint(0, 10)  # type: ignore[index]
        return json.dumps(good).encode(), request_id
    if kind == 5:
        return json.dumps([good] * rng.randint(1, 3)).encode(), None
    if kind == 6:
        good["id"] = rng.choice([None, 1.5, True, [1], {"a": 1}])
        return json.dumps(good).encode(), None
    good["params"]["arguments"] = {
        rng.choice(["name", "limit", "mode", "x"]): rng.choice(  # type: ignore[index]
            [None, -1, 10**30, "", [], {}, "\x00"]
        )
    }
    return json.dumps(good).encode(), request_id


@pytest.mark.anyio
async def test_random_protocol_input_always_gets_an_answer(tmp_path: Path) -> None:
    rng = random.Random(SEED + 3)
    home = indexed_home(tmp_path)
    tried = unanswered = 0
    missed: list[bytes] = []
    async with stdio_serve(SERVE, kivgraph_env(home), REPO_ROOT) as peer:
        await peer.initialize()
        for i in range(max(ROUNDS, 1) * 10):
            line, reply_id = garbage_line(rng, 1000 + i)
            await peer.send_raw(line)
            tried += 1
            try:
                response = await peer.response_for(reply_id, timeout=10)
            except TimeoutError:
                unanswered += 1
                missed.append(line[:200])
                continue
            assert "error" in response or "result" in response
        is_error, _text = await peer.call("graph_status")
        assert not is_error
    assert peer.process.returncode == 0 and b"Traceback" not in peer.stderr
    report("protocol", tried=tried, unanswered=unanswered)
    assert unanswered == 0, missed
