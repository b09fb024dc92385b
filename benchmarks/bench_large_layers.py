"""Layered at scale (issue 24 item 6): django 5.1.4 plus ten small real repositories registered as layers.

Run through ``python -m benchmarks.bench_large --layers`` (``--help`` lists the options). In a private
KIVGRAPH_HOME, over private copies of the pinned corpora (benchmarks/corpora.py, cached under
~/.cache/kivgraph/corpora), with real ``kivgraph index --json`` runs and a real ``kivgraph serve``:

1. a cold ``kivgraph index`` of the eleven repositories, then an unchanged one;
2. for each edited repository in turn (one with no cross-repository links, then the providers of the
   linked pairs click → typer, pflag → cobra, query-core → react-query): a one-line edit (a new top-level
   declaration), ``kivgraph index --json``; recorded: spawn → first generation published (and → exact),
   which layers were written and which carried (the same inode in both generations), the rebuilt part's
   cross-repository edges and the run's ``link`` and ``publish`` phase timings;
3. ``kivgraph index --full`` (every repository rebuilt from scratch), for comparison;
4. the RSS of a real ``kivgraph serve`` after a fixed set of queries, on the layered generation and on a
   one-environment generation of the same content (``indexer.publish.publish(layered=False)``).

django runs on its CANDIDATE fallback unless ``--exact-python``: scip-python is pointed at a missing path
(KIVGRAPH_SCIP_PYTHON), which makes the two small Python repositories CANDIDATE too; Go and TypeScript
repositories run their analyzers. Writes benchmarks/results/large-layers.json and large-layers.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpora import (
    GO_CORPORA,
    NPM_CORPORA,
    PYPI_CORPORA,
    fetch_go_module,
    fetch_npm_package,
    fetch_pypi_sdist,
    go_env,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from snapshot_format import records

RESULTS = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parents[1]
MISSING_SCIP_PYTHON = "/nonexistent/scip-python"


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    kind: str  # pypi, go, npm
    edit_glob: str = ""  # the file a one-line edit goes to: the first match, sorted
    exclude: tuple[str, ...] = ()


LARGE = Repo("django", "python", "pypi")
SMALL = (
    Repo("click", "python", "pypi", "src/click/utils.py"),
    Repo("typer", "python", "pypi", "typer/utils.py", exclude=("tests", "docs_src", "scripts", "pdm_build.py")),
    Repo("pflag", "go", "go", "flag.go"),
    Repo("cobra", "go", "go", "cobra.go"),
    Repo("zap", "go", "go", "level.go"),
    Repo("golang-lru", "go", "go", "lru.go"),
    Repo("gods", "go", "go", "utils/utils.go"),
    Repo("query-core", "typescript", "npm", "src/utils.ts", exclude=("build",)),
    Repo("react-query", "typescript", "npm", "src/utils.ts", exclude=("build",)),
    Repo("types-prop-types", "typescript", "npm"),
)
# edited in turn: a repository nothing links to, then the providers of the three linked pairs
TARGETS = ("gods", "pflag", "click", "query-core")


def _version(repo: Repo) -> str:
    if repo.kind == "pypi":
        return PYPI_CORPORA[repo.name]
    if repo.kind == "go":
        return GO_CORPORA[repo.name][1]
    return NPM_CORPORA[repo.name][1]


def _fetch(repo: Repo) -> Path:
    if repo.kind == "pypi":
        return fetch_pypi_sdist(repo.name)
    if repo.kind == "go":
        return fetch_go_module(repo.name)
    return fetch_npm_package(repo.name)


def _register(home: Path, roots: list[tuple[Repo, Path]]) -> None:
    text = "version = 1\n"
    for repo, root in roots:
        exclude = f"exclude = {json.dumps(list(repo.exclude))}\n" if repo.exclude else ""
        text += f'\n[[repository]]\nname = "{repo.name}"\npath = "{root}"\nlanguages = ["{repo.language}"]\n{exclude}'
    (home / "kivgraph.toml").write_text(text)


def _edit(repo: Repo, root: Path, n: int) -> str:
    """Append one line declaring a new top-level name to the repository's edit file; returns its path."""
    (path,) = sorted(root.glob(repo.edit_glob))[:1]
    line = {
        "python": f"KIVGRAPH_BENCH_EDIT_{n} = {n}\n",
        "go": f"var KivgraphBenchEdit{n} = {n}\n",
        "typescript": f"export const kivgraphBenchEdit{n} = {n}\n",
    }[repo.language]
    text = path.read_text()
    path.write_text(text + ("" if text.endswith("\n") else "\n") + line)
    return str(path.relative_to(root))


def _index(home: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """One ``kivgraph index --json``: wall time, spawn → each published generation, the result."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json", *args],
        cwd=REPO_ROOT,
        env={**env, "KIVGRAPH_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    published: list[dict[str, Any]] = []
    scope: list[str] = []
    result = None
    for line in proc.stdout:
        event = json.loads(line)
        at = round(time.perf_counter() - started, 3)
        kind = event.get("event")
        if kind == "published":
            published.append({"at_s": at, **event["published"]})
        elif kind == "progress" and event["progress"].get("phase") == "scope":
            scope.append(event["progress"].get("detail", ""))
        elif kind == "result":
            result = event["result"]
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.wait()
    wall = round(time.perf_counter() - started, 3)
    if proc.returncode != 0 or result is None or not result.get("passed"):
        raise SystemExit(f"kivgraph index {' '.join(args)} failed ({proc.returncode}): {stderr[-3000:]}")
    return {"wall_s": wall, "published": published, "scope": scope, "result": result}


def _current(home: Path) -> Path:
    name = (home / "state" / "CURRENT").read_text().strip()
    return home / "state" / "generations" / name


def _layers(generation: Path) -> dict[str, tuple[int, int]]:
    """repository -> (device, inode) of its layer's data.mdb."""
    manifest = json.loads((generation / "manifest").read_text())
    out = {}
    for entry in manifest.get("layers") or []:
        st = (generation / entry["directory"] / "data.mdb").stat()
        out[entry["repository"]] = (st.st_dev, st.st_ino)
    return out


def _layer_entries(generation: Path) -> dict[str, dict[str, Any]]:
    return {e["repository"]: e for e in json.loads((generation / "manifest").read_text()).get("layers") or []}


def _cross_edges(generation: Path) -> dict[str, int]:
    """Edges between two repositories, per ``source repository -> target repository``."""
    from snapshot_format.reader import Generation, link_edges

    counts: dict[str, int] = {}
    with Generation(generation) as gen:
        for _edge, src, dst in link_edges(gen):
            counts[f"{src}->{dst}"] = counts.get(f"{src}->{dst}", 0) + 1
    return dict(sorted(counts.items()))


def _phase(run: dict[str, Any], name: str) -> float:
    return round(float(run["result"]["timings"].get(name, 0.0)), 3)


def _layer_edges(generation: Path) -> dict[str, int]:
    manifest = json.loads((generation / "manifest").read_text())
    edges = list(records.Counts.__struct_fields__).index("edges")  # counts are an array in the manifest
    return {e["repository"]: int(e["counts"][edges]) for e in manifest.get("layers") or []}


def _run_row(
    label: str, run: dict[str, Any], before: dict[str, tuple[int, int]], after: Path, previous: Path | None = None
) -> dict[str, Any]:
    layers = _layers(after)
    was = _layer_entries(previous) if previous else {}
    now = _layer_entries(after)
    own_edges = _layer_edges(after)
    carried = sorted(r for r, ino in layers.items() if before.get(r) == ino)
    written = sorted(r for r in layers if r not in carried)
    cross = _cross_edges(after)
    touching = sum(n for pair, n in cross.items() if set(pair.split("->")) & set(written))
    first = run["published"][0] if run["published"] else None
    rebuilt = sorted(layers)  # a run that is not scoped rebuilds every repository
    for text in run["scope"][-1:]:
        rebuilt = sorted(n.strip() for n in text.removeprefix("rebuilding ").split(";")[0].split(","))
    return {
        "run": label,
        "wall_s": run["wall_s"],
        "first_generation_s": first["at_s"] if first else None,
        "first_stage": first["stage"] if first else None,
        "exact_generation_s": run["published"][-1]["at_s"] if run["published"] else None,
        "stages": [p["stage"] for p in run["published"]],
        "scope": run["scope"],
        "rebuilt": rebuilt,
        "cross_edges_of_rebuilt": sum(n for pair, n in cross.items() if set(pair.split("->")) & set(rebuilt)),
        "edges_within_rebuilt_layers": sum(own_edges[r] for r in rebuilt if r in own_edges),
        "layers_written": written,
        # a written layer whose counts did not change: its digest changed for another reason (see the report)
        "written_counts_changed": {r: was[r]["counts"] != now[r]["counts"] for r in written if r in was},
        "layers_carried": carried,
        "cross_edges_total": sum(cross.values()),
        "cross_edges_of_written": touching,
        "link_s": _phase(run, "link"),
        "publish_s": _phase(run, "publish"),
        "timings": run["result"]["timings"],
        "counts": run["result"]["counts"],
    }


_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench-large", "version": "0"},
    },
}


def query_plan(generation: Path, repositories: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """A fixed set of queries: per repository, its first three files' outlines and, for the first declaration
    of each, get_symbol, find_references, get_blast_radius and find_cross_repo_consumers; then name and intent
    searches and the status tools. Deterministic for the same content."""
    from snapshot_format.reader import Generation

    plan: list[tuple[str, dict[str, Any]]] = [("graph_status", {}), ("list_repositories", {})]
    with Generation(generation) as gen:
        for repo in repositories:
            files = [f.path for f in gen.files(repo) if f.status == "indexed"][:3]
            for path in files:
                plan.append(("get_file_outline", {"repository": repo, "path": path}))
                decl = next((s for s in gen.declarations(repo, path) if s.kind != "module"), None)
                if decl is None:
                    continue
                plan.append(("find_symbol", {"name": decl.name}))
                for tool in ("get_symbol", "find_references", "get_blast_radius", "find_cross_repo_consumers"):
                    plan.append((tool, {"stable_key": decl.key}))
    for words in ("parse command line flags", "cache eviction", "query invalidation", "database migration"):
        plan.append(("find_by_intent", {"query": words}))
    return plan


def _rss(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])  # kB
    return out


def serve_memory(home: Path, env: dict[str, str], plan: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """RSS of a real ``kivgraph serve`` (stdio) after answering ``plan``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kivgraph_cli", "serve", "--no-verify-digest"],
        cwd=REPO_ROOT,
        env={**env, "KIVGRAPH_HOME": str(home)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    errors: list[str] = []
    try:

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()

        def answer(i: int) -> dict[str, Any]:
            assert proc.stdout is not None
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit("kivgraph serve closed before answering")
                message = json.loads(line)
                if message.get("id") == i:
                    return message

        send(_INIT)
        answer(0)
        after_start = _rss(proc.pid)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.perf_counter()
        for i, (tool, arguments) in enumerate(plan, start=1):
            send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            message = answer(i)
            if "error" in message or message.get("result", {}).get("isError"):
                errors.append(f"{tool} {json.dumps(arguments)}: {json.dumps(message)[:300]}")
        seconds = time.perf_counter() - started
        after = _rss(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return {
        "queries": len(plan),
        "errors": len(errors),
        "error_answers": errors,
        "queries_s": round(seconds, 2),
        "after_initialize_kb": after_start,
        "after_queries_kb": after,
    }


def one_environment(home: Path, single: Path, env: dict[str, str]) -> dict[str, Any]:
    """A generation of the same content in one environment (``publish(layered=False)``) in ``single``, built
    in a child process from ``home``'s registry and fact cache; returns its sizes."""
    single.mkdir()
    shutil.copy(home / "kivgraph.toml", single / "kivgraph.toml")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from indexer import config\n"
        "from indexer.fact_cache import FactCache\n"
        "from indexer import pipeline as p\n"
        "from indexer.publish import publish\n"
        "from indexer.scratch import scratch_directory\n"
        "from snapshot_format.layout import StateLayout\n"
        "home, single = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "src = StateLayout(home / 'kivgraph.toml', home / 'state')\n"
        "dst = StateLayout(single / 'kivgraph.toml', single / 'state')\n"
        "loaded = config.load(src.config_path)\n"
        "with scratch_directory(src), FactCache(src.fact_cache_dir, 'on') as cache:\n"
        "    b = p.Build(loaded, cache, lambda _p: None, p.Timer())\n"
        "    for phase in (p.discover_phase, p.extract_phase, p.key_phase, p.resolve_phase, p.link_phase,\n"
        "                  p.records_phase):\n"
        "        phase(b)\n"
        "    content = b.content()\n"
        "result = publish(dst, content, indexer_version='bench-large', layered=False)\n"
        "print(result.name)\n"
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, str(home), str(single)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"one-environment generation failed: {proc.stderr[-3000:]}")
    generation = single / "state" / "generations" / proc.stdout.strip().splitlines()[-1]
    return {"build_s": round(time.perf_counter() - started, 1), "data_bytes": (generation / "data.mdb").stat().st_size}


def _sizes(generation: Path) -> dict[str, int]:
    manifest = json.loads((generation / "manifest").read_text())
    layers = sum(int(e["data_bytes"]) for e in manifest.get("layers") or [])
    return {"link_layer_bytes": (generation / "data.mdb").stat().st_size, "layers_bytes": layers}


def bench(exact_python: bool, one_env: bool, keep: Path | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    repos = [LARGE, *SMALL]
    sources = {r.name: _fetch(r) for r in repos}
    env = go_env()
    if not exact_python:
        env["KIVGRAPH_SCIP_PYTHON"] = MISSING_SCIP_PYTHON
    data: dict[str, Any] = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_start": round(os.getloadavg()[0], 2),
        "python_mode": "exact (scip-python)" if exact_python else "CANDIDATE (KIVGRAPH_SCIP_PYTHON missing)",
        "repositories": {r.name: f"{r.language} {_version(r)}" for r in repos},
    }
    with tempfile.TemporaryDirectory(prefix="kivgraph-bench-layers-") as tmp:
        roots = []
        for r in repos:
            root = Path(tmp) / "src" / r.name
            shutil.copytree(sources[r.name], root, symlinks=True)
            roots.append((r, root))
        by_name = {r.name: (r, root) for r, root in roots}
        home = Path(tmp) / "home"
        home.mkdir()
        _register(home, roots)
        rows = []
        cold = _index(home, env)
        rows.append(_run_row("cold index", cold, {}, _current(home)))
        print(f"cold: {rows[-1]['wall_s']} s", file=sys.stderr)
        unchanged = _index(home, env)
        data["unchanged_index_s"] = unchanged["wall_s"]
        data["unchanged_note"] = unchanged["result"].get("note")
        data["cross_edges"] = _cross_edges(_current(home))
        for n, name in enumerate(TARGETS, start=1):
            previous = _current(home)
            before = _layers(previous)
            repo, root = by_name[name]
            edited = _edit(repo, root, n)
            run = _index(home, env)
            row = _run_row(f"one-line edit in {name}", run, before, _current(home), previous)
            row["edited"] = f"{name}: {edited}"
            rows.append(row)
            print(f"{row['run']}: {row['first_generation_s']} s, written {row['layers_written']}", file=sys.stderr)
        previous = _current(home)
        before = _layers(previous)
        full = _index(home, env, "--full")
        rows.append(_run_row("index --full", full, before, _current(home), previous))
        print(f"full: {rows[-1]['wall_s']} s", file=sys.stderr)
        data["runs"] = rows
        layered = _current(home)
        data["layered_sizes"] = _sizes(layered)
        plan = query_plan(layered, [r.name for r in repos])
        memory = {"layered": serve_memory(home, env, plan)}
        if one_env:
            single = Path(tmp) / "single"
            data["one_environment"] = one_environment(home, single, env)
            memory["one_environment"] = serve_memory(single, env, plan)
        data["serve_memory"] = memory
        if keep is not None:
            shutil.copytree(tmp, keep, symlinks=True)
    data["load_end"] = round(os.getloadavg()[0], 2)
    data["bench_s"] = round(time.perf_counter() - started, 1)
    return data


def _mb(kb: int) -> str:
    return f"{kb / 1024:.0f} MB"


def report(data: dict[str, Any]) -> str:
    runs = data["runs"]
    full = next(r for r in runs if r["run"] == "index --full")
    cold = runs[0]
    lines = [
        "# Layers at scale: django plus ten small repositories (issue 24 item 6)",
        "",
        "Command: `python -m benchmarks.bench_large --layers`"
        + ("" if "CANDIDATE" not in data["python_mode"] else " (Python on its CANDIDATE fallback)")
        + f"; wall time of the whole benchmark {data.get('bench_s', '?')} s",
        "",
        f"{data['cpus']} CPUs (shared with other work), Python {data['python']}, load average at start "
        f"{data['load_start']}, at end {data['load_end']}. Python repositories: **{data['python_mode']}** — "
        "django with scip-python takes about 12 minutes cold on this machine, so scip-python was pointed at a "
        "missing path for the run; Go (go/types helper) and TypeScript (scip-typescript) ran their analyzers.",
        "",
        "Registered: " + ", ".join(f"{k} ({v})" for k, v in data["repositories"].items()) + ".",
        f"Cold index: {cold['wall_s']} s; {cold['counts']['files']} files, {cold['counts']['symbols']} symbols, "
        f"{cold['counts']['edges']} edges, {cold['cross_edges_total']} of them between two repositories "
        f"({', '.join(f'{k} {v}' for k, v in data['cross_edges'].items()) or 'none'}). "
        f"Unchanged re-index: {data['unchanged_index_s']} s ({data['unchanged_note']}).",
        "",
        "## Publication after one small repository changes, against a whole rebuild",
        "",
        "One line added (a new top-level declaration) to one file, then `kivgraph index --json`: it reads the "
        "whole set, finds what changed and rebuilds those repositories and the ones linked to them (`rebuilt`, "
        "the run's scope), carrying every other layer. Times from the spawn of the command. `written`: the "
        "layers that are a new file in the new generation; every other one is the previous generation's file "
        "(same device and inode) — a rebuilt repository whose layer has the same digest is hard-linked by the "
        "writer too, which is why `index --full` (every repository rebuilt from scratch, no fact cache) writes "
        "only what changed.",
        "",
        "| run | rebuilt (scope) | written | same inode | first generation | exact generation | command wall |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in runs[1:]:
        lines.append(
            f"| {r['run']} | {', '.join(r['rebuilt'])} | {', '.join(r['layers_written']) or 'none'} | "
            f"{len(r['layers_carried'])} of {len(r['layers_written']) + len(r['layers_carried'])} | "
            f"{r['first_generation_s']} s ({r['first_stage']}) | {r['exact_generation_s']} s | {r['wall_s']} s |"
        )
    edits = [r for r in runs if r["run"].startswith("one-line edit")]
    if edits:
        worst = max(r["exact_generation_s"] for r in edits)
        first = max(r["first_generation_s"] for r in edits)
        unchanged_carried = all(
            not (set(r["layers_written"]) - set(r["rebuilt"])) and r["run"].split()[-1] in r["layers_written"]
            for r in edits
        )
        lines += [
            "",
            f"Slowest edit: first generation {first} s, exact {worst} s, against {full['wall_s']} s for "
            f"`kivgraph index --full` ({worst / full['wall_s']:.0%}). "
            + (
                "Every repository outside the scope kept its layer file (same inode), and the edited one's was "
                "written anew."
                if unchanged_carried
                else "NOT every repository outside the scope kept its layer file: see the rows."
            ),
        ]
        same_counts = {
            r["run"]: sorted(n for n, changed in r.get("written_counts_changed", {}).items() if not changed)
            for r in edits
        }
        unlinked = [
            r
            for r in edits
            if len(r["rebuilt"]) > 1
            and not any(r["run"].split()[-1] in pair.split("->") for pair in data["cross_edges"])
        ]
        if unlinked:
            lines += [
                "",
                "Rebuilt although nothing links them to the edited repository: "
                + "; ".join(
                    f"{r['run']}: {', '.join(n for n in r['rebuilt'] if n != r['run'].split()[-1])}" for r in unlinked
                )
                + ". `kivgraph index` scopes a whole read to the repositories whose files or analyzer inputs changed "
                "(`indexer.incremental._narrowed`), and the Go analyzer's cache key covers every Go file of the "
                "registered corpus (`indexer/languages/go/analyzer.py` `cache_key`), so one Go edit changes every "
                "Go repository's analyzer input: an edit in a Go repository costs every registered Go repository.",
            ]
        if any(same_counts.values()):
            lines += [
                "",
                "Layers written anew although their counts did not change (a rebuilt repository whose facts did "
                "not change should be hard-linked): "
                + "; ".join(f"{run}: {', '.join(names)}" for run, names in same_counts.items() if names)
                + ". Seen while measuring (a Go-only set plus click, gods edited): the CANDIDATE generation of the "
                "scoped run writes cobra's and zap's layers with the same number of unresolved rows but other "
                "keys (the rows' `seq` and order differ from the exact stage's), so their digest differs from "
                "CURRENT's; the exact generation then has the original digest again, but the writer compares "
                "with CURRENT (the CANDIDATE one) and writes them a second time. The cost of an edit is then that "
                "of every rebuilt repository's layer, twice, not only the changed one's.",
            ]
        lines += [
            "",
            "## The link step against cross-repository edges",
            "",
            "`link` is the run's link phase (folding the edge facts of the rebuilt part into counted edges, "
            "attaching unresolved rows and package dependencies), `publish` writing the rebuilt layers and the "
            "link layer (digest and validation included); both from the `timings` of `kivgraph index --json`'s "
            "result. Cross-repository edges: those of the new generation's link layer with an end in the rebuilt "
            "part.",
            "",
            "| run | cross-repository edges of the rebuilt part | edges within the rebuilt layers | link phase | "
            "publish phase |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in sorted([*edits, full], key=lambda r: (r["cross_edges_of_rebuilt"], r["edges_within_rebuilt_layers"])):
            lines.append(
                f"| {r['run']} | {r['cross_edges_of_rebuilt']} | {r['edges_within_rebuilt_layers']} | "
                f"{r['link_s']} s | {r['publish_s']} s |"
            )
        keys = sorted({k for r in [*edits, full] for k in r["timings"]})
        lines += [
            "",
            "Every phase of the same runs (seconds, from the result's `timings`):",
            "",
            "| run | " + " | ".join(keys) + " |",
            "| --- | " + " | ".join("---" for _ in keys) + " |",
        ]
        for r in [*edits, full]:
            lines.append(f"| {r['run']} | " + " | ".join(f"{r['timings'].get(k, 0):.2f}" for k in keys) + " |")
    mem = data["serve_memory"]
    lines += [
        "",
        "## Server memory across layers",
        "",
        f"A real `kivgraph serve --no-verify-digest` (stdio), RSS read from /proc after `initialize` and after "
        f"{mem['layered']['queries']} fixed queries (per repository: three files' outlines and, for each file's "
        "first declaration, find_symbol, get_symbol, find_references, get_blast_radius, find_cross_repo_consumers; "
        "four find_by_intent; graph_status, list_repositories). RssFile is mostly the mapped LMDB pages.",
        "",
        "| generation | sizes on disk | RSS after initialize | RSS after the queries | of it anonymous / file | peak "
        "(VmHWM) | queries (errors) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    sizes = data["layered_sizes"]
    for label, m in mem.items():
        size = (
            f"{(sizes['layers_bytes'] + sizes['link_layer_bytes']) / 2**20:.0f} MB ({len(data['repositories'])} "
            f"layers + link {sizes['link_layer_bytes'] / 2**20:.1f} MB)"
            if label == "layered"
            else f"{data['one_environment']['data_bytes'] / 2**20:.0f} MB (one data.mdb)"
        )
        a, q = m["after_initialize_kb"], m["after_queries_kb"]
        lines.append(
            f"| {label} | {size} | {_mb(a['VmRSS'])} | {_mb(q['VmRSS'])} | {_mb(q['RssAnon'])} / "
            f"{_mb(q['RssFile'])} | {_mb(q['VmHWM'])} | {m['queries']} in {m['queries_s']} s ({m['errors']}) |"
        )
    return "\n".join(lines) + "\n"


def main(exact_python: bool = False, one_env: bool = True, keep: Path | None = None) -> int:
    data = bench(exact_python, one_env, keep)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "large-layers.json").write_text(json.dumps(data, indent=2) + "\n")
    text = report(data)
    (RESULTS / "large-layers.md").write_text(text)
    print(text)
    return 0
