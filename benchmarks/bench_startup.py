"""Start to first answer: a real `kivgraph serve` against a bare MCP SDK server (docs/budgets.md §1.3).

What it measures. For each server, ``--runs`` times: spawn the process, send ``initialize``, then
``notifications/initialized`` and one ``tools/call``, and time (from the spawn) the ``initialize``
response and the first tool answer, read as raw JSON-RPC lines on the pipes (no client library on
the measuring side). The servers:

- ``bare_sdk``: benchmarks/bare_sdk_server.py, the SDK's low-level server with one ``ping`` tool, the SDK
  imported as usual;
- ``kivgraph``: ``python -m kivgraph_cli serve`` on a published generation of the fixture corpus, answering
  ``find_symbol``;
- ``kivgraph_whole_sdk``: the same with ``KIVGRAPH_SERVE_WHOLE_SDK=1`` (server/lean_sdk.py off), to show what
  loading only the stdio server saves.

The budget: kivgraph's median start to first answer at most 300 ms above the bare SDK server's. It also
writes where serve's start goes: the slowest imports of ``python -X importtime -m kivgraph_cli serve``.

    python -m benchmarks.bench_startup [--runs N]

Writes benchmarks/results/startup.json and startup.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results"
BUDGET_MS = 300.0
TIMEOUT = 60.0
_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench-startup", "version": "0"},
    },
}
_IMPORT = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)$")


def one_start(argv: list[str], env: dict[str, str], tool: str, arguments: dict[str, Any]) -> tuple[float, float]:
    """(ms to the initialize response, ms to the first tool answer), both from the spawn."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=REPO_ROOT
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(_INIT) + "\n").encode())
        proc.stdin.flush()
        if json.loads(proc.stdout.readline()).get("id") != 1:
            raise RuntimeError(f"{argv}: no initialize response")
        initialized = time.perf_counter()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        proc.stdin.write(
            (
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n" + json.dumps(call) + "\n"
            ).encode()
        )
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv}: closed before answering")
            message = json.loads(line)
            if message.get("id") == 2:
                if "error" in message or message["result"].get("isError"):
                    raise RuntimeError(f"{argv}: {tool} failed: {message}")
                break
        answered = time.perf_counter()
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return (initialized - started) * 1000, (answered - started) * 1000


def measure(
    servers: list[tuple[str, list[str], dict[str, str], str, dict[str, Any]]], runs: int
) -> list[dict[str, Any]]:
    """Each server started ``runs`` times, interleaved (one start of each per round, the order rotating), so
    that the load of a shared machine falls on all of them alike; one warm-up start each is not counted."""
    samples: dict[str, list[tuple[float, float]]] = {s[0]: [] for s in servers}
    for _name, argv, env, tool, arguments in servers:
        one_start(argv, env, tool, arguments)
    for round_ in range(runs):
        for i in range(len(servers)):
            name, argv, env, tool, arguments = servers[(round_ + i) % len(servers)]
            samples[name].append(one_start(argv, env, tool, arguments))
    out = []
    for name, got in samples.items():
        first = [s[1] for s in got]
        out.append(
            {
                "server": name,
                "runs": runs,
                "initialize_ms_median": round(statistics.median(s[0] for s in got), 1),
                "first_answer_ms_median": round(statistics.median(first), 1),
                "first_answer_ms_min": round(min(first), 1),
                "first_answer_ms_max": round(max(first), 1),
            }
        )
    return out


def slowest_imports(env: dict[str, str], n: int = 12) -> list[dict[str, Any]]:
    """The top-level imports of serve with the most cumulative time (one -X importtime run, stdin closed)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kivgraph_cli", "serve"],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    rows = []
    for line in proc.stderr.splitlines():
        m = _IMPORT.match(line)
        if m:
            rows.append(
                {"module": m.group(4), "cumulative_ms": round(int(m.group(2)) / 1000, 1), "depth": len(m.group(3)) // 2}
            )
    modules = len(rows)
    top = sorted((r for r in rows if r["depth"] <= 2), key=lambda r: -r["cumulative_ms"])[:n]
    return [{"modules_imported": modules}, *top]


def fixture_home(tmp: Path) -> Path:
    """A KIVGRAPH_HOME with the fixture corpus indexed by the real CLI (on the fallback: no analyzer needed)."""
    home = tmp / "home"
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    roots = []
    for name in ("pyrepo_a", "ts_monorepo"):
        dest = tmp / name
        shutil.copytree(REPO_ROOT / "tests" / "fixtures" / name, dest)
        roots.append(str(dest))
    subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "init", *roots],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "index"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return home


def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kivgraph-startup-") as tmp:
        home = fixture_home(Path(tmp))
        base = {**os.environ, "KIVGRAPH_HOME": str(home)}
        base.pop("KIVGRAPH_SERVE_WHOLE_SDK", None)
        serve = [sys.executable, "-m", "kivgraph_cli", "serve", "--no-verify-digest"]
        question = ("find_symbol", {"name": "Shape"})
        results = measure(
            [
                ("bare_sdk", [sys.executable, "-m", "benchmarks.bare_sdk_server"], base, "ping", {}),
                ("kivgraph", serve, base, *question),
                ("kivgraph_whole_sdk", serve, {**base, "KIVGRAPH_SERVE_WHOLE_SDK": "1"}, *question),
            ],
            runs,
        )
        imports = slowest_imports(base)
    by = {r["server"]: r for r in results}
    over = round(by["kivgraph"]["first_answer_ms_median"] - by["bare_sdk"]["first_answer_ms_median"], 1)
    return {
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "budget_ms_over_bare_sdk": BUDGET_MS,
        "kivgraph_over_bare_sdk_ms": over,
        "within_budget": over <= BUDGET_MS,
        "servers": results,
        "serve_imports": imports,
    }


def report(data: dict[str, Any]) -> str:
    lines = [
        "# Start to first answer",
        "",
        "`python -m benchmarks.bench_startup` (a spawn, `initialize`, one `tools/call`, timed from the spawn on "
        f"raw JSON-RPC pipes; median of {data['servers'][0]['runs']} starts each, interleaved, after one warm-up; Python "
        f"{data['python']}, {data['cores']} cores, a machine shared with other work).",
        "",
        "| server | initialize (ms) | first answer (ms) | min–max (ms) |",
        "| --- | ---: | ---: | --- |",
    ]
    for r in data["servers"]:
        lines.append(
            f"| {r['server']} | {r['initialize_ms_median']} | {r['first_answer_ms_median']} | "
            f"{r['first_answer_ms_min']}–{r['first_answer_ms_max']} |"
        )
    verdict = "within" if data["within_budget"] else "NOT within"
    lines += [
        "",
        f"kivgraph answers its first call {abs(data['kivgraph_over_bare_sdk_ms'])} ms "
        f"{'after' if data['kivgraph_over_bare_sdk_ms'] >= 0 else 'sooner than'} the bare SDK server: "
        f"**{verdict}** the budget of {data['budget_ms_over_bare_sdk']:g} ms over the SDK's own start "
        "(docs/budgets.md §1.3). `kivgraph_whole_sdk` is serve with the whole SDK imported (server/lean_sdk.py off).",
        "",
        f"Where serve's start goes (`python -X importtime -m kivgraph_cli serve`, "
        f"{data['serve_imports'][0]['modules_imported']} modules; cumulative ms of the slowest top imports):",
        "",
    ]
    lines += [f"- `{r['module']}` {r['cumulative_ms']}" for r in data["serve_imports"][1:]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--report-only", action="store_true", help="rewrite startup.md from startup.json")
    args = parser.parse_args()
    data = json.loads((RESULTS / "startup.json").read_text()) if args.report_only else run(args.runs)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "startup.md").write_text(report(data))
    print(report(data))


if __name__ == "__main__":
    main()
