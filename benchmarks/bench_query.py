"""Query latency, stdio round trip, serve start-up and memory, on a small and a large generation.

- Backend: p50/p95/p99 of the pure tool functions (server/tools, server/queries) on
  a synthetic generation of 100k symbols and 1M edges (benchmarks/synthetic.py), warm.
- Stdio: the round trip of real `kivgraph serve` next to the MCP SDK's own
  low-level server answering an empty tool, both spawned and measured in this run
  by the same raw JSON-RPC client.
- Start-up: spawn to first answer (initialize + one tool call) for both servers,
  on the small (click) and the large generation.
- Memory: RSS and PSS (/proc/<pid>/smaps_rollup) of the serve process after the
  calls, small vs large generation.

    python -m benchmarks.bench_query [--symbols 100000 --edges 1000000] [--calls 2000]

Writes benchmarks/results/query.json and query.md. Compare with docs/budgets.md §1.1-§1.4.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpora import cache_root, fetch_pypi_sdist
from benchmarks.synthetic import build
from server.tools.references import find_references
from server.tools.status import graph_status
from server.tools.symbols import find_symbol, get_symbol
from server.tools.traversal import get_blast_radius, trace_dependencies
from snapshot_format import keys
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import Generation, open_current

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
BUDGET_MS = {"get_symbol": 2, "find_symbol": 5, "find_references": 10, "blast_radius_depth3": 40}

EMPTY_SERVER = """
import anyio, mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="empty", input_schema={"type": "object"})])
async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])
server = Server("empty", on_list_tools=list_tools, on_call_tool=call_tool)
async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())
anyio.run(main)
"""


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000, 4)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "calls": len(ordered)}


def timed(fn: Any, args_list: list[Any]) -> dict[str, float]:
    for args in args_list[:50]:
        fn(args)  # warm-up
    samples = []
    for args in args_list:
        t = time.perf_counter()
        fn(args)
        samples.append(time.perf_counter() - t)
    return percentiles(samples)


def backend(gen: Generation, calls: int) -> dict[str, Any]:
    rng = random.Random(7)
    all_keys = sorted(k for repo in gen.repositories() for k in gen.declaration_keys(repo.name))
    sample = [keys.key_from_bytes(rng.choice(all_keys)) for _ in range(calls)]
    symbols = [gen.symbol(k) for k in sample[:2000]]
    names = [s.name for s in symbols if s]
    small_refs = []
    for k in sample:
        n = sum(1 for _ in gen.neighbours_raw(keys.key_to_bytes(k), outgoing=False))
        if 0 < n <= 100:
            small_refs.append(k)
    out: dict[str, Any] = {
        "get_symbol": timed(lambda k: get_symbol(gen, {"stable_key": k}), sample),
        "find_symbol": timed(lambda n: find_symbol(gen, {"name": n}), [rng.choice(names) for _ in range(calls)]),
        "find_references": timed(lambda k: find_references(gen, {"stable_key": k}), small_refs[:calls]),
        "graph_status": timed(lambda _x: graph_status(gen, {}), list(range(min(calls, 500)))),
    }
    for depth in (3, 5):
        out[f"blast_radius_depth{depth}"] = timed(
            lambda k, d=depth: get_blast_radius(gen, {"stable_key": k, "depth": d}), sample[: min(calls, 500)]
        )
        out[f"trace_dependencies_depth{depth}"] = timed(
            lambda k, d=depth: trace_dependencies(gen, {"stable_key": k, "depth": d}), sample[: min(calls, 500)]
        )
    out["find_references_subjects_with_1_to_100_refs"] = len(small_refs)
    return out


class RawClient:
    """A minimal newline-delimited JSON-RPC MCP client over a child's stdio (no SDK on the client side)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=REPO_ROOT,
            text=True,
            bufsize=1,
        )
        self._id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited during {method}")
            msg = json.loads(line)
            if msg.get("id") == self._id:
                return msg

    def notify(self, method: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        self.notify("notifications/initialized")

    def memory(self) -> dict[str, float]:
        rollup = Path(f"/proc/{self.proc.pid}/smaps_rollup").read_text()
        fields = {
            line.split(":")[0]: int(line.split()[1]) for line in rollup.splitlines()[1:] if line.split()[1].isdigit()
        }
        return {
            "rss_mb": round(fields.get("Rss", 0) / 1024, 1),
            "pss_mb": round(fields.get("Pss", 0) / 1024, 1),
            "private_dirty_mb": round(fields.get("Private_Dirty", 0) / 1024, 1),
        }

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def stdio_run(argv: list[str], env: dict[str, str], tool: str, arguments: dict[str, Any], calls: int) -> dict[str, Any]:
    client = RawClient(argv, env)
    try:
        client.initialize()
        first = client.request("tools/call", {"name": tool, "arguments": arguments})
        start_to_first = time.perf_counter() - client.started
        if "error" in first or first["result"].get("isError"):
            raise RuntimeError(f"{tool} failed: {first}")
        samples = []
        for _ in range(calls):
            t = time.perf_counter()
            client.request("tools/call", {"name": tool, "arguments": arguments})
            samples.append(time.perf_counter() - t)
        return {
            "start_to_first_answer_ms": round(start_to_first * 1000, 1),
            "round_trip": percentiles(samples),
            "memory": client.memory(),
        }
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symbols", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)

    large_dir = cache_root() / "bench" / f"synthetic-{args.symbols}-{args.edges}"
    large = build(large_dir, args.symbols, args.edges)
    with open_current(large) as gen:
        counts = gen.counts()
        backend_large = backend(gen, args.calls)

    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-small-") as small_home:
        env_small = {**os.environ, "KIVGRAPH_HOME": small_home}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kivgraph_cli",
                "init",
                "--repository",
                f"click={fetch_pypi_sdist('click')}",
                "--languages",
                "python",
            ],
            cwd=REPO_ROOT,
            env=env_small,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [sys.executable, "-m", "kivgraph_cli", "index"],
            cwd=REPO_ROOT,
            env=env_small,
            check=True,
            capture_output=True,
        )
        serve = [sys.executable, "-m", "kivgraph_cli", "serve"]
        env_large = {k: v for k, v in os.environ.items() if k != "KIVGRAPH_HOME"}
        serve_large = [*serve, "--config", str(large.config_path), "--state-dir", str(large.state_dir)]
        n = min(args.calls, 1000)
        sdk = stdio_run([sys.executable, "-c", EMPTY_SERVER], dict(os.environ), "empty", {}, n)
        with open_current(resolve_layout(environ={"KIVGRAPH_HOME": small_home})) as small_gen:
            small_key = small_gen.symbols_by_qualified_name("click.utils.echo")[0].key
        small = stdio_run(serve, env_small, "get_symbol", {"stable_key": small_key}, n)
        small_status = stdio_run(serve, env_small, "graph_status", {}, min(n, 300))
        with open_current(large) as gen:
            any_key = keys.key_from_bytes(min(k for r in gen.repositories() for k in gen.declaration_keys(r.name)))
        big = stdio_run(serve_large, env_large, "get_symbol", {"stable_key": any_key}, n)

    ratio = round(small["round_trip"]["p50_ms"] / sdk["round_trip"]["p50_ms"], 2)
    data = {
        "benchmark": "query",
        "large_generation": {"symbols": counts.symbols, "edges": counts.edges},
        "backend_large": backend_large,
        "stdio": {
            "sdk_empty_tool": sdk,
            "kivgraph_small_get_symbol": small,
            "kivgraph_small_graph_status": small_status,
            "kivgraph_large_get_symbol": big,
            "p50_ratio_vs_sdk": ratio,
        },
        "budgets_ms_p99": BUDGET_MS,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "query.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "query.md").write_text(report(data))
    print(report(data))
    return 0


def report(data: dict[str, Any]) -> str:
    b = data["backend_large"]
    s = data["stdio"]
    lines = [
        "# Query benchmark",
        "",
        f"Large generation: {data['large_generation']['symbols']} symbols, {data['large_generation']['edges']} edges "
        "(synthetic, benchmarks/synthetic.py).",
        "",
        "| operation | p50 ms | p95 ms | p99 ms | budget p99 ms (docs/budgets.md §1.1) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for op, stats in b.items():
        if isinstance(stats, dict) and "p50_ms" in stats:
            budget = data["budgets_ms_p99"].get(op, "")
            lines.append(f"| {op} | {stats['p50_ms']} | {stats['p95_ms']} | {stats['p99_ms']} | {budget} |")
    lines += [
        "",
        "| stdio server | start to first answer ms | round trip p50 ms | p99 ms | RSS MB | PSS MB |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    runs = (
        ("MCP SDK empty tool", s["sdk_empty_tool"]),
        ("kivgraph serve, click, get_symbol", s["kivgraph_small_get_symbol"]),
        ("kivgraph serve, click, graph_status", s["kivgraph_small_graph_status"]),
        ("kivgraph serve, large, get_symbol", s["kivgraph_large_get_symbol"]),
    )
    for name, run in runs:
        lines.append(
            f"| {name} | {run['start_to_first_answer_ms']} | {run['round_trip']['p50_ms']} | "
            f"{run['round_trip']['p99_ms']} | {run['memory']['rss_mb']} | {run['memory']['pss_mb']} |"
        )
    lines += [
        "",
        f"Round-trip p50 ratio kivgraph get_symbol / SDK empty tool: {s['p50_ratio_vs_sdk']} (budget ≤ 1.5).",
        "graph_status reads every repository's live HEAD on each call, so it is slower by design.",
        "Start to first answer includes `import mcp` (about 1 s here) for both servers.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
