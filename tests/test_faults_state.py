"""The state heals itself: no analyzer outlives a killed indexer, a damaged fact cache is rebuilt, nothing
in the state directory can hang a command, and CURRENT is always repairable (issue 28).

Randomized where it fits, from ``KIVGRAPH_FAULT_SEED`` over ``KIVGRAPH_FAULT_ROUNDS`` rounds (a few in
``make test``, the long version in ``make faults``); counts go to ``KIVGRAPH_FAULT_REPORT``.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexer import children
from snapshot_format.reader import open_current
from tests.fault_kit import exits, flip_bytes, indexed_home, layout_of, spawn_index
from tests.fault_kit import index as run_index
from tests.helpers import run_kivgraph

pytestmark = [pytest.mark.faults, pytest.mark.e2e]

ROUNDS = int(os.environ.get("KIVGRAPH_FAULT_ROUNDS", "4"))
SEED = int(os.environ.get("KIVGRAPH_FAULT_SEED", "12"))


def report(campaign: str, **counts: int) -> None:
    target = os.environ.get("KIVGRAPH_FAULT_REPORT")
    if target:
        with open(target, "a") as fh:
            fh.write(json.dumps({"campaign": campaign, "rounds": ROUNDS, "seed": SEED, **counts}) + "\n")


# --- a killed indexer leaves no analyzer running ------------------------------------------------------------

# An analyzer that starts workers of its own (as scip-python's node does), each writing its pid, then waits.
FAMILY_ANALYZER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo 0.6.6; exit 0; fi
sleep 600 &
sh -c 'sleep 600 & echo $! >> "{pids}"; wait' &
echo "$$ $!" >> "{pids}"
wait
"""


def _fake_analyzer(tmp: Path, pids: Path) -> Path:
    fake = tmp / "scip-python"
    fake.write_text(FAMILY_ANALYZER.format(pids=pids))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake


def _wait_for_pids(path: Path, count: int, proc: subprocess.Popen[bytes]) -> list[int]:
    """The pids the analyzer family wrote, once ``count`` are there (bounded; the indexer must still run)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [int(p) for p in path.read_text().split()] if path.exists() else []
        if len(found) >= count:
            return found
        assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
        time.sleep(0.02)
    raise AssertionError(f"the analyzer did not start within the bound ({path})")


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def test_sigkill_of_the_indexer_while_its_analyzer_runs_leaves_no_analyzer_process(tmp_path: Path) -> None:
    rng = random.Random(SEED + 28)
    home = indexed_home(tmp_path)
    repo = tmp_path / "repo"
    kills = left = 0
    for round_no in range(max(ROUNDS, 1)):
        pids_file = tmp_path / f"pids-{round_no}"
        fake = _fake_analyzer(tmp_path, pids_file)
        (repo / "pkg" / f"new_{round_no}.py").write_text(f"def new_{round_no}():\n    return {round_no}\n")
        proc = spawn_index(home, analyzer=True, KIVGRAPH_SCIP_PYTHON=str(fake))
        pids = _wait_for_pids(pids_file, 3, proc)
        time.sleep(rng.uniform(0, 0.3))  # a random point of the analyzer's run (the outcome may not depend on it)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        kills += 1
        survivors = [pid for pid in pids if not exits(pid, timeout=30) and _running(pid)]
        left += len(survivors)
        assert not survivors, f"round {round_no}: analyzer processes {survivors} outlived the killed indexer"
    report("analyzer_kill", kills=kills, left=left)


def test_the_next_run_ends_an_analyzer_group_a_killed_run_left(tmp_path: Path) -> None:
    """The watchdog itself killed too (a kill of the whole tree in the wrong order): the record remains."""
    home = indexed_home(tmp_path)
    layout = layout_of(home)
    pids_file = tmp_path / "pids"
    fake = _fake_analyzer(tmp_path, pids_file)
    (tmp_path / "repo" / "pkg" / "new.py").write_text("def new():\n    return 1\n")
    proc = spawn_index(home, analyzer=True, KIVGRAPH_SCIP_PYTHON=str(fake))
    pids = _wait_for_pids(pids_file, 3, proc)
    records = list((layout.scratch_dir / "analyzer-groups").glob("*.json"))
    assert len(records) == 1
    leader = json.loads(records[0].read_text())["pgid"]
    os.kill(leader, signal.SIGKILL)  # the watchdog first, so nothing ends the group when the indexer dies
    assert exits(leader)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert all(_running(pid) for pid in pids), "the analyzer should have been left running for this test"
    result = run_index(home)
    assert result.returncode == 0, result.stderr
    warning = next(line for line in result.stderr.splitlines() if "a killed run left running" in line)
    assert all(str(pid) in warning for pid in pids), warning
    for pid in pids:
        assert exits(pid, timeout=30) or not _running(pid), f"analyzer process {pid} was not ended"


def test_a_recorded_group_whose_process_is_another_one_now_is_left_alone(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        groups = tmp_path / "groups"
        groups.mkdir()
        (groups / f"{other.pid}.json").write_text(json.dumps({"pgid": other.pid, "start": 1}))  # not its start
        assert children.end_leftovers(groups) == []
        assert other.poll() is None and not list(groups.iterdir())
    finally:
        other.kill()
        other.wait()


def test_an_analyzer_that_cannot_start_raises_as_popen_would(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), children.spawned([str(tmp_path / "absent")]):
        pass
    script = tmp_path / "not-executable"
    script.write_text("echo hi\n")
    with pytest.raises(PermissionError), children.spawned([str(script)]):
        pass


def test_the_watchdog_passes_the_analyzers_exit_status_through(tmp_path: Path) -> None:
    assert children.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=60) == (3, b"out\n", b"err\n")
    code, _out, _err = children.run(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"], timeout=60
    )
    assert code == -signal.SIGTERM


# --- a damaged fact cache is a cache ------------------------------------------------------------------------

PAGE = 4096
CACHE_DAMAGE = (
    "flip_page",
    "flip_bytes",
    "truncate",
    "not_lmdb",
    "fifo_data",
    "fifo_lock",
    "fifo_dir",
    "dir_data",
    "symlink_data",
)


def _damage_cache(cache: Path, kind: str, rng: random.Random) -> None:
    data = cache / "data.mdb"
    size = data.stat().st_size
    if kind == "flip_page":
        page = rng.randrange(size // PAGE)
        flip_bytes(data, [page * PAGE + off for off in range(0, PAGE, 7)])
    elif kind == "flip_bytes":
        flip_bytes(data, sorted(rng.sample(range(size), 16)))
    elif kind == "truncate":
        os.truncate(data, rng.choice([0, PAGE, 2 * PAGE + 100, size // 2]))
    elif kind == "not_lmdb":
        data.write_bytes(bytes(rng.randrange(256) for _ in range(3 * PAGE)))
    elif kind in ("fifo_data", "fifo_lock"):
        target = data if kind == "fifo_data" else cache / "lock.mdb"
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    elif kind == "fifo_dir":
        shutil.rmtree(cache)
        os.mkfifo(cache)
    elif kind == "dir_data":
        data.unlink()
        data.mkdir()
    elif kind == "symlink_data":
        data.unlink()
        data.symlink_to("/nonexistent/data.mdb")


def _content(home: Path) -> tuple[list[str], int]:
    with open_current(layout_of(home)) as gen:
        names = sorted(
            f"{s.qualified_name}@{s.path}"
            for repo in gen.repositories()
            for s in gen.declarations(repo.name, "", directory=True)
        )
        return names, gen.counts().edges


def test_a_damaged_fact_cache_is_moved_aside_rebuilt_and_the_index_publishes(tmp_path: Path) -> None:
    rng = random.Random(SEED + 280)
    detected = later = harmless = 0
    kinds = [CACHE_DAMAGE[i % len(CACHE_DAMAGE)] for i in range(max(ROUNDS, len(CACHE_DAMAGE)))]
    rng.shuffle(kinds)
    base = indexed_home(tmp_path)
    (tmp_path / "repo" / "pkg" / "edit.py").write_text(
        "from .core import helper\n\n\ndef edit():\n    return helper()\n"
    )
    reference_home = tmp_path / "reference"
    shutil.copytree(base, reference_home)
    assert run_index(reference_home, "--full").returncode == 0
    reference = _content(reference_home)
    assert any(name.startswith("pkg.edit.edit@") for name in reference[0])
    for round_no, kind in enumerate(kinds):
        home = tmp_path / f"home-{round_no}"
        shutil.copytree(base, home)
        layout = layout_of(home)
        _damage_cache(layout.fact_cache_dir, kind, rng)
        result = run_index(home, timeout=120)
        assert result.returncode == 0, (kind, result.stderr[-2000:])
        assert "Traceback" not in result.stderr, kind
        assert _content(home) == reference, kind  # what the sources say, whatever the cache held
        if "the fact cache" in result.stderr and "was damaged" in result.stderr:
            detected += 1
            aside = [p for p in layout.state_dir.iterdir() if p.name.startswith("factcache.damaged-")]
            assert len(aside) == 1, (kind, aside)
            status = run_kivgraph(home, "status", "--json")
            assert json.loads(status.stdout)["fact_cache_damage"]["moved_to"] == str(aside[0]), kind
            if detected == 1:
                doctor = run_kivgraph(home, "doctor", "--json")
                check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "state.fact_cache")
                assert check["status"] == "WARN" and "rebuilt" in check["detail"], (kind, check)
        else:  # flipped bytes this run did not touch (a page no read reached)
            assert kind in ("flip_page", "flip_bytes"), (kind, result.stderr[-2000:])
        again = run_index(home, "--full", timeout=120)  # every cache write of the tree: the rest of the file
        assert again.returncode == 0 and "Traceback" not in again.stderr, (kind, again.stderr[-2000:])
        assert _content(home) == reference, kind
        if "was damaged" in again.stderr:
            assert "was damaged" not in result.stderr, (kind, "a rebuilt cache was found damaged again")
            later += 1  # the damage lay where only a write reached it: found then, and healed the same way
        elif "was damaged" not in result.stderr:
            harmless += 1  # bytes no entry and no page LMDB reads use (a free page)
    report("fact_cache_damage", tried=len(kinds), detected=detected, later=later, harmless=harmless)


# --- nothing in the state directory can hang a command ---------------------------------------------------------

# Every file and directory of an indexed state directory (and the configuration beside it), with what a
# command does when something else stands there: the index heals it, or fails naming it.
STATE_PATHS = {
    "kivgraph.toml": "names",
    "state/CURRENT": "heals",
    "state/publish.lock": "names",
    "state/factcache": "heals",
    "state/factcache/data.mdb": "heals",
    "state/factcache/lock.mdb": "heals",
    "state/generations/g000001.v1": "heals",
    "state/generations/g000001.v1/manifest": "heals",
    "state/generations/g000001.v1/data.mdb": "heals",
    "state/generations/g000001.v1/hold.lock": "heals",
    "state/logs": "heals",
    "state/logs/serve.jsonl": "heals",
    "state/scratch": "heals",
}
IN_PLACE = ("fifo", "directory", "symlink")
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"clientInfo":{"name":"faults","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
)
BOUND = 60  # seconds: far above any of these commands on a loaded machine, far below a hang


def _put_in_place(path: Path, kind: str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/nonexistent/target")


def _serve_lists_tools(home: Path) -> tuple[bool, str]:
    """Start a real serve, initialize and list the tools (bounded); whether it answered, and its stderr."""
    from tests.helpers import REPO_ROOT, kivgraph_env

    proc = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "serve"],
        cwd=REPO_ROOT,
        env=kivgraph_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    out = b""
    deadline = time.monotonic() + BOUND
    while b'"id":2' not in out and time.monotonic() < deadline:
        ready, _w, _x = select.select([proc.stdout], [], [], 1)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            out += chunk
    proc.stdin.close()
    proc.stdin = None  # communicate must not flush it again
    try:
        _out, err = proc.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
    return b'"id":2' in out, err.decode(errors="replace")


def _state_cases() -> list[tuple[str, str]]:
    """Every (path, what stands there) in ``make faults``; a seeded sample of them in ``make test``."""
    cases = [(path, kind) for path in STATE_PATHS for kind in IN_PLACE]
    if len(cases) <= ROUNDS:
        return cases
    rng = random.Random(SEED + 2803)
    return sorted(rng.sample(cases, max(ROUNDS * 2, 1)))


def _state_case(tmp_path: Path, target: str, kind: str) -> str:
    """Run every command over a state with ``kind`` in place of ``target``: "healed" or "named" by the index."""
    home = indexed_home(tmp_path)
    (home / "state" / "logs").mkdir(exist_ok=True)
    (home / "state" / "logs" / "serve.jsonl").touch()
    (home / "state" / "scratch").mkdir(exist_ok=True)
    path = home / target
    _put_in_place(path, kind)
    for command in ("status", "doctor"):
        result = run_kivgraph(home, command, timeout=BOUND)  # a hang is a TimeoutExpired: the test fails
        assert "Traceback" not in result.stderr, (command, result.stderr[-2000:])
        assert result.returncode in (0, 1), (command, result.returncode, result.stderr[-2000:])
    answered, err = _serve_lists_tools(home)
    assert answered and "Traceback" not in err, err[-2000:]
    (tmp_path / "repo" / "pkg" / "more.py").write_text("def more():\n    return 2\n")  # something to publish
    result = run_index(home, timeout=BOUND)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    if STATE_PATHS[target] == "names":
        assert result.returncode == 1, result.stderr[-2000:]
        assert str(path) in result.stderr.splitlines()[-1], result.stderr[-2000:]
        return "named"
    assert result.returncode == 0, result.stderr[-2000:]
    with open_current(layout_of(home)) as gen:
        gen.verify_digest()
        assert gen.symbols_by_name("more"), "the healed state serves the new content"
    status = run_kivgraph(home, "status", "--json", timeout=BOUND)
    assert json.loads(status.stdout)["status"] in ("ready", "degraded"), status.stdout[-2000:]
    return "healed"


def test_nothing_in_place_of_a_state_file_hangs_a_command_and_the_index_heals_or_names_it(tmp_path: Path) -> None:
    outcomes = []
    for n, (target, kind) in enumerate(_state_cases()):
        try:
            outcomes.append(_state_case(tmp_path / f"case-{n}", target, kind))
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            raise AssertionError(f"{kind} in place of {target}: {exc}") from exc
    report(
        "state_files",
        cases=len(outcomes),
        commands=5 * len(outcomes),
        healed=outcomes.count("healed"),
        named=outcomes.count("named"),
    )


def _session_members(sid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


@pytest.mark.analyzers
def test_sigkill_of_the_indexer_during_a_real_scip_python_run_leaves_no_process_of_it(tmp_path: Path) -> None:
    rng = random.Random(SEED + 2801)
    home = indexed_home(tmp_path, analyzer=True)
    layout = layout_of(home)
    groups = layout.scratch_dir / "analyzer-groups"
    kills = left = 0
    for round_no in range(max(ROUNDS // 2, 1)):
        (tmp_path / "repo" / "pkg" / f"new_{round_no}.py").write_text(f"def new_{round_no}():\n    return 1\n")
        proc = spawn_index(home, "--full", analyzer=True)
        deadline = time.monotonic() + 120
        while not list(groups.glob("*.json")) if groups.exists() else True:
            assert proc.poll() is None and time.monotonic() < deadline, "scip-python did not start"
            time.sleep(0.02)
        session = int(next(groups.glob("*.json")).stem)
        time.sleep(rng.uniform(0, 1.5))  # somewhere in node's start, the type check or the index write
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        kills += 1
        deadline = time.monotonic() + 30
        while _session_members(session) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = _session_members(session)
        left += len(survivors)
        assert not survivors, f"round {round_no}: scip-python processes {survivors} outlived the killed indexer"
    report("analyzer_kill_scip_python", kills=kills, left=left)


def test_a_fifo_in_place_of_the_token_store_its_lock_or_the_audit_log_is_refused_not_waited_on(tmp_path: Path) -> None:
    from server.audit import AuditLog
    from snapshot_format.layout import resolve_layout
    from snapshot_format.tokens import TokenStoreError, create_token, last_uses, read_store

    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(tmp_path)})
    store = layout.state_dir / "tokens.json"
    store.parent.mkdir(parents=True)
    os.mkfifo(store)
    with pytest.raises(TokenStoreError, match="is a FIFO"):
        read_store(store)
    store.unlink()
    os.mkfifo(store.with_name("tokens.json.lock"))
    with pytest.raises(TokenStoreError, match="is a FIFO"):
        create_token(store, "ci", "read")
    layout.log_dir.mkdir()
    os.mkfifo(layout.log_dir / "audit.jsonl")
    assert last_uses(layout) == {}
    audit = AuditLog(layout.log_dir)
    audit.record("index_project", token="ci", token_id="x")  # disabled, not blocked
    audit.close()
