"""Indexing throughput, cold and warm (fact cache), on a corpus given by path or by pinned name.

Measures, for one corpus: wall seconds, files/s, symbols/s, peak RSS of the
indexer process, generation bytes per symbol, the pipeline's own phase
timings, and the warm/cold speed-up. Each run is a real `kivgraph index --json`
child process in a private KIVGRAPH_HOME.

    python -m benchmarks.bench_index --corpus click            # pinned PyPI sdist
    python -m benchmarks.bench_index --corpus /path/to/repo --languages python

Writes benchmarks/results/index-<name>.json and index-<name>.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpora import PYPI_CORPORA, fetch_pypi_sdist

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]


def _run_index(home: Path, extra: list[str] | None = None) -> dict[str, Any]:
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json", *(extra or [])],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=3600)
    wall = time.perf_counter() - started
    result = None
    for line in out.splitlines():
        event = json.loads(line)
        if event.get("event") == "result":
            result = event["result"]
    if proc.returncode != 0 or not result or not result.get("passed"):
        raise SystemExit(f"index failed ({proc.returncode}): {err[-2000:]}")
    return {"wall_seconds": round(wall, 3), "result": result}


def _peak_rss_mb(home: Path, extra: list[str] | None = None) -> float:
    """Peak RSS of one index run, measured on its own child through wait4."""
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json", *(extra or [])],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit("index failed while measuring RSS")
    return round(usage.ru_maxrss / 1024, 1)


def bench(corpus: Path, name: str, languages: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-") as tmp:
        home = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "kivgraph_cli", "init", str(corpus), "--languages", languages],
            cwd=REPO_ROOT,
            env={**os.environ, "KIVGRAPH_HOME": str(home)},
            check=True,
            capture_output=True,
        )
        cold = _run_index(home)
        warm = _run_index(home)
        warm2 = _run_index(home)
        shutil.rmtree(home / "state" / "factcache", ignore_errors=True)
        rss_cold = _peak_rss_mb(home)
        rss_warm = _peak_rss_mb(home)
        gen = home / "state" / "generations" / warm2["result"]["generation"]
        data_bytes = (gen / "data.mdb").stat().st_size
    counts = cold["result"]["counts"]
    warm_best = min(warm["wall_seconds"], warm2["wall_seconds"])
    files, symbols = counts["files"], counts["symbols"]
    return {
        "benchmark": "index",
        "corpus": name,
        "path": str(corpus),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "counts": counts,
        "cold": {
            "wall_seconds": cold["wall_seconds"],
            "files_per_second": round(files / cold["wall_seconds"], 1),
            "symbols_per_second": round(symbols / cold["wall_seconds"], 1),
            "peak_rss_mb": rss_cold,
            "phases": cold["result"]["timings"],
            "cache": cold["result"]["cache"],
        },
        "warm": {
            "wall_seconds": warm_best,
            "files_per_second": round(files / warm_best, 1),
            "symbols_per_second": round(symbols / warm_best, 1),
            "peak_rss_mb": rss_warm,
            "phases": warm2["result"]["timings"],
            "cache": warm2["result"]["cache"],
        },
        "warm_speedup": round(cold["wall_seconds"] / warm_best, 2),
        "generation_bytes": data_bytes,
        "generation_bytes_per_symbol": round(data_bytes / max(symbols, 1), 1),
        "index": cold["result"]["index"],
    }


def report(data: dict[str, Any]) -> str:
    c, w = data["cold"], data["warm"]
    lines = [
        f"# Index benchmark: {data['corpus']}",
        "",
        f"{data['counts']['files']} files, {data['counts']['symbols']} symbols, {data['counts']['edges']} edges, "
        f"{data['counts']['unresolved']} unresolved ({data['machine']['cpus']} CPUs, Python {data['machine']['python']}).",
        "",
        "| run | wall s | files/s | symbols/s | peak RSS MB | fact cache hits/misses |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| cold | {c['wall_seconds']} | {c['files_per_second']} | {c['symbols_per_second']} | {c['peak_rss_mb']} | "
        f"{c['cache']['hits']}/{c['cache']['misses']} |",
        f"| warm | {w['wall_seconds']} | {w['files_per_second']} | {w['symbols_per_second']} | {w['peak_rss_mb']} | "
        f"{w['cache']['hits']}/{w['cache']['misses']} |",
        "",
        f"Warm re-index of the unchanged corpus is {data['warm_speedup']}x faster than cold "
        "(budget: ≥ 5x, docs/budgets.md §1.5). "
        "Wall time includes interpreter start-up of the child process.",
        f"Generation: {data['generation_bytes']} bytes, {data['generation_bytes_per_symbol']} bytes per symbol.",
        "",
        "Phases (seconds, cold → warm): "
        + ", ".join(f"{k} {c['phases'].get(k, 0)} → {w['phases'].get(k, 0)}" for k in c["phases"]),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help=f"a path, or one of {', '.join(PYPI_CORPORA)}")
    parser.add_argument("--languages", default="python")
    parser.add_argument("--name", default=None)
    args = parser.parse_args(argv)
    if args.corpus in PYPI_CORPORA:
        path, name = fetch_pypi_sdist(args.corpus), f"{args.corpus}-{PYPI_CORPORA[args.corpus]}"
    else:
        path = Path(args.corpus).resolve()
        name = args.name or path.name
    data = bench(path, name, args.languages)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"index-{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    text = report(data)
    (RESULTS / f"index-{name}.md").write_text(text)
    print(json.dumps(data, indent=2))
    print(text, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
