"""One server for a team under load: many sessions over streamable HTTP while generations are published.

A real ``kivgraph serve --http`` on a synthetic generation (8 repositories), one token per session (a fifth
of them limited to half the repositories), SESSIONS concurrent sessions of the MCP SDK's own streamable
HTTP client, each making CALLS tool calls in turn over nine read tools. While they run, two more
generations are published. Every answer is checked: no error, a snapshot id that never goes back within a
session, and answers that carry their generation's own content (each generation holds a different number
of ``generation_marker`` declarations: find_symbol must count its own snapshot's, graph_status its own
symbols), so an answer mixing two generations would show. The same client load then runs against the
MCP SDK's own streamable HTTP server answering an empty tool (benchmarks/bare_sdk_http_server.py): the
budget is a p50 per tool at most twice that empty tool's p50 (docs/budgets.md §1.8).

Memory: the server's RSS and unique memory (USS) after one session, after all sessions have opened (the
difference over the extra sessions is the memory per session), and at the end.

    python -m benchmarks.bench_http [--sessions 50] [--calls 200] [--symbols 20000] [--edges 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from benchmarks.synthetic import generate
from indexer.publish import GenerationContent, publish
from snapshot_format import records
from snapshot_format.layout import StateLayout
from snapshot_format.stable_key import stable_key
from snapshot_format.tokens import create_token, tokens_path

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
BUDGET_RATIO = 2.0
MARKER = "generation_marker"
LIMITED_SHARE = 5  # every fifth session's token is limited to half the repositories
TOOLS = (
    "find_symbol",
    "get_symbol",
    "find_references",
    "get_blast_radius",
    "trace_dependencies",
    "find_cross_repo_consumers",
    "get_file_outline",
    "list_repositories",
    "graph_status",
)


def with_markers(base: GenerationContent, count: int) -> GenerationContent:
    """The base content plus ``count`` marker declarations (in repo00), so each generation is recognisable."""
    extra = []
    for i in range(count):
        path = "pkg000/mod0000.py"
        qualified = f"pkg000.mod0000.{MARKER}_{i}"
        extra.append(
            records.Symbol(
                key=stable_key(
                    language="python",
                    repository="repo00",
                    package="pkg000.mod0000",
                    module=path,
                    qualified_name=qualified,
                    kind="function",
                    discriminator=str(i),
                ),
                name=MARKER,
                qualified_name=qualified,
                kind="function",
                language="python",
                repository="repo00",
                path=path,
                start_line=900 + i,
                start_col=0,
                end_line=900 + i,
                end_col=0,
                package="pkg000.mod0000",
            )
        )
    return GenerationContent(
        repositories=base.repositories,
        files=base.files,
        symbols=[*base.symbols, *extra],
        edges=base.edges,
        unresolved=base.unresolved,
        package_dependencies=base.package_dependencies,
    )


def memory(pid: int) -> dict[str, float]:
    """RSS, unique memory (private pages) and anonymous memory (the heap: not the mapped generation), in MiB.

    The generation's pages a process has read count as its private pages while no other process maps them,
    so unique memory grows with the pages the calls touched; anonymous memory is what the server allocated.
    """
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Rss", "Private_Clean", "Private_Dirty", "Anonymous"):
            out[key] = int(value.split()[0]) / 1024
    return {
        "rss_mib": round(out["Rss"], 1),
        "uss_mib": round(out["Private_Clean"] + out["Private_Dirty"], 1),
        "anon_mib": round(out["Anonymous"], 1),
    }


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def spawn(argv: list[str], env: dict[str, str]) -> Server:
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found = threading.Event()
    server = Server(process, "")

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            server.stderr.append(line)
            match = re.search(r"listening on (http://\S+?);", line)
            if match and not server.url:
                server.url = match.group(1)
                found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(120):
        process.kill()
        raise SystemExit("the server did not start listening: " + "".join(server.stderr))
    return server


@dataclass
class Load:
    """What the sessions measured and found."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    limited_latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    mixed: list[str] = field(default_factory=list)
    went_back: int = 0
    snapshots_seen: set[int] = field(default_factory=set)
    calls: int = 0


def calls_for(keys: list[str], files: list[tuple[str, str]], i: int) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of session ``i``: nine tools in turn, on symbols and files of its own share."""
    out: list[tuple[str, dict[str, Any]]] = []
    for n in range(len(TOOLS)):
        key = keys[(i * 7 + n) % len(keys)]
        repository, path = files[(i * 5 + n) % len(files)]
        out += [
            ("find_symbol", {"name": MARKER}),
            ("get_symbol", {"stable_key": key}),
            ("find_references", {"stable_key": key, "limit": 20}),
            ("get_blast_radius", {"stable_key": key, "depth": 2, "limit": 20}),
            ("trace_dependencies", {"stable_key": key, "depth": 2, "limit": 20}),
            ("find_cross_repo_consumers", {"stable_key": key, "limit": 20}),
            ("get_file_outline", {"repository": repository, "path": path}),
            ("list_repositories", {}),
            ("graph_status", {}),
        ]
    return out


async def session_load(
    url: str,
    token: str | None,
    plan: list[tuple[str, dict[str, Any]]],
    calls: int,
    load: Load,
    expected: dict[int, tuple[int, int]],
    limited: bool,
    opened: anyio.Event,
    go: anyio.Event,
    done: list[int],
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        done.append(1)
        opened.set()
        await go.wait()
        last = 0
        for n in range(calls):
            tool, arguments = plan[n % len(plan)] if token else ("ping", {})
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            ms = (time.perf_counter() - started) * 1000
            load.calls += 1
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            (load.limited_latencies if limited else load.latencies)[tool].append(ms)
            if result.is_error:
                load.errors.append(f"{tool}: {text[:200]}")
                continue
            if not token:
                continue
            answer = json.loads(text)
            snapshot = answer["snapshot_id"]
            load.snapshots_seen.add(snapshot)
            if snapshot < last:
                load.went_back += 1
            last = max(last, snapshot)
            markers, symbols = expected.get(snapshot, (-1, -1))
            if tool == "find_symbol" and answer["total"] != markers:
                load.mixed.append(f"snapshot {snapshot}: {answer['total']} markers, its generation holds {markers}")
            if tool == "graph_status" and not limited and answer["results"]["symbols"] != symbols:
                load.mixed.append(f"snapshot {snapshot}: {answer['results']['symbols']} symbols, not {symbols}")


async def sequential_heap(server: Server, token: str | None, plan: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The heap before and after one more session's calls in turn: flat when nothing accumulates per call."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for tool, arguments in plan[: len(TOOLS)]:  # one of each, then measure
            await session.call_tool(tool, arguments)
        before = memory(server.process.pid)["anon_mib"]
        calls = 0
        for tool, arguments in plan[:180]:  # with the warm-up, within the token's burst
            with anyio.fail_after(60):
                await session.call_tool(tool, arguments)
            calls += 1
        after = memory(server.process.pid)["anon_mib"]
    return {"calls": calls, "anon_mib_before": before, "anon_mib_after": after}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


async def drive(
    server: Server,
    tokens: list[str | None],
    plans: list[list[tuple[str, dict[str, Any]]]],
    calls: int,
    expected: dict[int, tuple[int, int]],
    publish_during: Any = None,
) -> tuple[Load, dict[str, Any]]:
    """All sessions: open them, measure memory, run the calls (publishing meanwhile), measure again."""
    load = Load()
    pid = server.process.pid
    marks: dict[str, Any] = {}
    go = anyio.Event()
    done: list[int] = []
    async with anyio.create_task_group() as tg:
        first = anyio.Event()
        tg.start_soon(session_load, server.url, tokens[0], plans[0], calls, load, expected, False, first, go, done)
        with anyio.fail_after(120):
            await first.wait()
        marks["one_session"] = memory(pid)
        for i in range(1, len(tokens)):
            opened = anyio.Event()
            limited = i % LIMITED_SHARE == LIMITED_SHARE - 1
            tg.start_soon(
                session_load, server.url, tokens[i], plans[i], calls, load, expected, limited, opened, go, done
            )
        with anyio.fail_after(300):
            while len(done) < len(tokens):
                await anyio.sleep(0.05)
        marks["all_sessions"] = memory(pid)
        if publish_during is not None:
            publishers_ready = anyio.Event()
            tg.start_soon(publish_during, load, publishers_ready)
            await publishers_ready.wait()
        started = time.perf_counter()
        go.set()
    marks["elapsed_s"] = round(time.perf_counter() - started, 2)
    marks["end"] = memory(pid)
    return load, marks


def summarize(latencies: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {
        tool: {
            "calls": len(v),
            "p50_ms": percentile(v, 0.5),
            "p99_ms": percentile(v, 0.99),
            "mean_ms": round(statistics.fmean(v), 2),
        }
        for tool, v in sorted(latencies.items())
    }


def run(sessions: int, calls: int, symbols: int, edges: int) -> dict[str, Any]:
    load_start = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="kivgraph-http-") as tmp:
        layout = StateLayout(config_path=Path(tmp) / "kivgraph.toml", state_dir=Path(tmp) / "state")
        base = generate(symbols, edges)
        publish(layout, with_markers(base, 1), indexer_version="bench-http")
        expected = {k: (k, len(base.symbols) + k) for k in (1, 2, 3)}
        keys = [s.key for s in base.symbols if s.kind == "method"][: sessions * 20]
        files = [(f.repository, f.path) for f in base.files][: sessions * 10]
        repos = [r.name for r in base.repositories]
        tokens: list[str | None] = []
        for i in range(sessions):
            limited = i % LIMITED_SHARE == LIMITED_SHARE - 1
            chosen = tuple(repos[: len(repos) // 2]) if limited else ()
            tokens.append(create_token(tokens_path(layout), f"bench-{i:03d}", "read", chosen)[1])
        plans = [calls_for(keys, files, i) for i in range(sessions)]
        steady_token = create_token(tokens_path(layout), "bench-steady", "read")[1]
        env = {**os.environ, "KIVGRAPH_HOME": tmp}
        argv = [
            sys.executable, "-m", "kivgraph_cli", "serve", "--http", "127.0.0.1:0", "--state-dir", str(layout.state_dir),
            "--poll-interval", "0.2", "--no-verify-digest",
        ]  # fmt: skip
        published: list[tuple[int, float]] = []

        async def publish_during(load: Load, ready: anyio.Event) -> None:
            # Each publisher is a child process, as an indexer is; both build their content before the calls
            # start, and publish when told (a line on stdin), at a quarter and at half of the calls.
            async with AsyncExitStack() as stack:
                children = []
                for k in (2, 3):
                    command = [sys.executable, "-m", "benchmarks.bench_http", "--publish-marked", str(k)]
                    command += ["--symbols", str(symbols), "--edges", str(edges), "--state-dir", str(layout.state_dir)]
                    children.append(await stack.enter_async_context(await anyio.open_process(command, cwd=REPO_ROOT)))
                with anyio.fail_after(600):
                    for child in children:
                        assert child.stdout is not None
                        await child.stdout.receive()  # "ready"
                ready.set()
                for k, child in zip((2, 3), children, strict=True):
                    assert child.stdin is not None
                    with anyio.fail_after(600):
                        while load.calls < sessions * calls * (k - 1) // 4:
                            await anyio.sleep(0.02)
                    started = time.perf_counter()
                    await child.stdin.send(b"go\n")
                    if await child.wait():
                        raise SystemExit(f"publishing generation {k} failed")
                    published.append((k, round(time.perf_counter() - started, 2)))

        no_tokens_before: list[str | None] = [None] * sessions
        bare_before = spawn([sys.executable, "-m", "benchmarks.bare_sdk_http_server"], env)
        try:
            bare_load_before, _marks = anyio.run(drive, bare_before, no_tokens_before, plans, calls, {}, None)
        finally:
            bare_before.stop()
        load_before = [round(x, 2) for x in os.getloadavg()]
        server = spawn(argv, env)
        try:
            load, marks = anyio.run(drive, server, tokens, plans, calls, expected, publish_during)
            steady = anyio.run(sequential_heap, server, steady_token, plans[0] * 3)
        finally:
            server.stop()
        load_between = [round(x, 2) for x in os.getloadavg()]
        # The SDK's server runs before and after kivgraph's (the machine's load drifts; both runs count).
        bare = spawn([sys.executable, "-m", "benchmarks.bare_sdk_http_server"], env)
        try:
            no_tokens: list[str | None] = [None] * sessions
            bare_load, bare_marks = anyio.run(drive, bare, no_tokens, plans, calls, {}, None)
        finally:
            bare.stop()
    empty_runs = [bare_load_before.latencies["ping"], bare_load.latencies["ping"]]
    empty_p50 = round(statistics.fmean(percentile(v, 0.5) for v in empty_runs), 2)
    tools = summarize(load.latencies)
    for row in tools.values():
        row["p50_over_empty"] = round(row["p50_ms"] / empty_p50, 2)
    per_session = (marks["all_sessions"]["rss_mib"] - marks["one_session"]["rss_mib"]) / max(sessions - 1, 1)
    per_session_uss = (marks["all_sessions"]["uss_mib"] - marks["one_session"]["uss_mib"]) / max(sessions - 1, 1)
    per_session_anon = (marks["all_sessions"]["anon_mib"] - marks["one_session"]["anon_mib"]) / max(sessions - 1, 1)
    return {
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "load_average_at_start": load_start,
        "load_average_between_runs": load_between,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "sessions": sessions,
        "calls_per_session": calls,
        "synthetic": {"symbols": symbols, "edges": edges, "repositories": len(repos)},
        "limited_sessions": sum(1 for i in range(sessions) if i % LIMITED_SHARE == LIMITED_SHARE - 1),
        "calls": load.calls,
        "errors": len(load.errors),
        "error_samples": load.errors[:10],
        "answers_mixing_generations": len(load.mixed),
        "mixing_samples": load.mixed[:10],
        "snapshot_went_back_in_a_session": load.went_back,
        "snapshots_seen": sorted(load.snapshots_seen),
        "server_log": [
            line.rstrip() for line in server.stderr if "WARNING" in line or "ERROR" in line or "serving" in line
        ][:20],
        "publications": [{"generation": k, "seconds": s} for k, s in published],
        "elapsed_s": marks["elapsed_s"],
        "calls_per_second": round(load.calls / marks["elapsed_s"], 1),
        "tools": tools,
        "limited_tools": summarize(load.limited_latencies),
        "empty_tool": {
            "calls": bare_load.calls + bare_load_before.calls,
            "errors": len(bare_load.errors) + len(bare_load_before.errors),
            "p50_ms": empty_p50,
            "p50_ms_before_and_after": [percentile(v, 0.5) for v in empty_runs],
            "p99_ms": percentile([*empty_runs[0], *empty_runs[1]], 0.99),
            "elapsed_s": bare_marks["elapsed_s"],
        },
        "load_average_before_kivgraph": load_before,
        "heap_over_sequential_calls": steady,
        "budget_p50_over_empty": BUDGET_RATIO,
        "within_budget": all(r["p50_over_empty"] <= BUDGET_RATIO for r in tools.values()),
        "memory": {
            "kivgraph": {k: marks[k] for k in ("one_session", "all_sessions", "end")},
            "kivgraph_per_extra_session_mib": {
                "rss": round(per_session, 3),
                "uss": round(per_session_uss, 3),
                "anon": round(per_session_anon, 3),
            },
            "bare_sdk": {k: bare_marks[k] for k in ("one_session", "all_sessions", "end")},
        },
    }


def report(data: dict[str, Any]) -> str:
    mem = data["memory"]
    publications = ", ".join(f"g{p['generation']} in {p['seconds']} s" for p in data["publications"])
    lines = [
        "# One server for a team: streamable HTTP under load",
        "",
        f"`python -m benchmarks.bench_http`: a real `kivgraph serve --http`, {data['sessions']} concurrent sessions of the "
        f"MCP SDK's streamable HTTP client x {data['calls_per_session']} calls each ({data['calls']} calls, one token per "
        f"session, {data['limited_sessions']} of them limited to half the repositories), on a synthetic generation of "
        f"{data['synthetic']['symbols']} symbols and {data['synthetic']['edges']} edges in "
        f"{data['synthetic']['repositories']} repositories, while two more generations were published "
        f"({publications}). Client and server share "
        f"the machine's {data['cores']} cores, with other work: load average (1 min) {data['load_average_at_start'][0]} at the "
        f"start, {data['load_average_between_runs'][0]} between the two servers' runs, "
        f"{data['load_average_at_end'][0]} at the end. "
        f"Python {data['python']}.",
        "",
        f"- errors: **{data['errors']}**; answers mixing two generations: **{data['answers_mixing_generations']}**; "
        f"a session seeing an older snapshot after a newer one: **{data['snapshot_went_back_in_a_session']}**; "
        f"snapshots answered from: {data['snapshots_seen']}",
        f"- {data['calls_per_second']} calls/s over {data['elapsed_s']} s; the SDK's own server answered its empty tool "
        f"{data['empty_tool']['calls']} times, in a run before kivgraph's and one after "
        f"(p50 {' and '.join(str(x) for x in data['empty_tool']['p50_ms_before_and_after'])} ms, their mean "
        f"{data['empty_tool']['p50_ms']} ms is the reference; p99 {data['empty_tool']['p99_ms']} ms; "
        f"{data['empty_tool']['errors']} errors)",
        "",
        "| tool | calls | p50 (ms) | p99 (ms) | p50 / empty tool's p50 | limited token p50 (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool, row in data["tools"].items():
        limited = data["limited_tools"].get(tool, {}).get("p50_ms", "")
        lines.append(
            f"| {tool} | {row['calls']} | {row['p50_ms']} | {row['p99_ms']} | {row['p50_over_empty']} | {limited} |"
        )
    verdict = "within" if data["within_budget"] else "NOT within"
    lines += [
        "",
        f"Every tool's p50 is **{verdict}** the budget of {data['budget_p50_over_empty']:g}x the empty tool's p50 on the "
        "SDK's own streamable HTTP server under the same load (docs/budgets.md §1.8).",
        "",
        "| server memory (MiB) | after one session | after all sessions opened | at the end |",
        "| --- | ---: | ---: | ---: |",
        f"| kivgraph RSS | {mem['kivgraph']['one_session']['rss_mib']} | {mem['kivgraph']['all_sessions']['rss_mib']} | "
        f"{mem['kivgraph']['end']['rss_mib']} |",
        f"| kivgraph unique (USS) | {mem['kivgraph']['one_session']['uss_mib']} | "
        f"{mem['kivgraph']['all_sessions']['uss_mib']} | {mem['kivgraph']['end']['uss_mib']} |",
        f"| kivgraph anonymous (heap) | {mem['kivgraph']['one_session']['anon_mib']} | "
        f"{mem['kivgraph']['all_sessions']['anon_mib']} | {mem['kivgraph']['end']['anon_mib']} |",
        f"| SDK server RSS | {mem['bare_sdk']['one_session']['rss_mib']} | {mem['bare_sdk']['all_sessions']['rss_mib']} | "
        f"{mem['bare_sdk']['end']['rss_mib']} |",
        f"| SDK server anonymous (heap) | {mem['bare_sdk']['one_session']['anon_mib']} | "
        f"{mem['bare_sdk']['all_sessions']['anon_mib']} | {mem['bare_sdk']['end']['anon_mib']} |",
        "",
        f"Memory per extra session: {mem['kivgraph_per_extra_session_mib']['rss']} MiB RSS "
        f"({mem['kivgraph_per_extra_session_mib']['anon']} MiB of heap). Unique memory counts the pages of the "
        "mapped generation the calls read (no other process maps them here), so it grows with the graph "
        "read; the heap is what the server allocated. At the end all sessions have closed. The heap's growth under "
        "load is its high-water mark with every session's call in flight, not a cost per call: "
        f"{data['heap_over_sequential_calls']['calls']} more calls in one session, after the load, took it from "
        f"{data['heap_over_sequential_calls']['anon_mib_before']} to {data['heap_over_sequential_calls']['anon_mib_after']} MiB.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--symbols", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--out", default="http", help="results file stem in benchmarks/results/")
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md from the .json")
    parser.add_argument("--publish-marked", type=int, default=0, help=argparse.SUPPRESS)  # the publisher child
    parser.add_argument("--state-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish_marked:
        layout = StateLayout(config_path=args.state_dir.parent / "kivgraph.toml", state_dir=args.state_dir)
        content = with_markers(generate(args.symbols, args.edges), args.publish_marked)
        print("ready", flush=True)
        sys.stdin.readline()
        publish(layout, content, indexer_version="bench-http")
        return
    path = RESULTS / f"{args.out}.json"
    data = (
        json.loads(path.read_text()) if args.report_only else run(args.sessions, args.calls, args.symbols, args.edges)
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / f"{args.out}.md").write_text(report(data))
    print(report(data))


if __name__ == "__main__":
    main()
