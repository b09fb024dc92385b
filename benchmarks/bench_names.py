"""Names that miss: did-you-mean latency and recall on a large name index (docs/budgets.md §1.1, docs/surface.md §4.7).

A synthetic generation of 100k declarations under as many distinct identifier-like names (camelCase,
PascalCase and snake_case compounds of programming words, deterministic) is published through the real
writer. Declared names are then typed with one typo each (a character dropped, one added, one replaced,
two neighbours swapped, or the case changed) and asked of get_symbol (``name``) and find_symbol, warm, in
process. Reported: p50/p95/p99 of the miss, and how often the intended name is among the declarations the
answer offers (recall), per kind of typo. The same is measured on the query benchmark's homonym-heavy
graph (benchmarks/synthetic.py), whose dense numbered names make the search work hardest.

    python -m benchmarks.bench_names [--symbols 100000] [--calls 1000]

Writes benchmarks/results/names.json and names.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.bench_query import percentiles
from benchmarks.corpora import cache_root
from benchmarks.synthetic import build as build_homonyms
from indexer.publish import GenerationContent, publish
from server.errors import ToolError
from server.queries.close_names import SEEK_BUDGET
from server.tools.symbols import find_symbol, get_symbol
from snapshot_format import records
from snapshot_format.layout import StateLayout, resolve_layout
from snapshot_format.reader import Generation, NameTrie, open_current
from snapshot_format.stable_key import stable_key

RESULTS = Path(__file__).resolve().parent / "results"
BUDGET_MS = 20  # p99 of a miss with its did-you-mean (docs/budgets.md §1.1)
WORDS = [
    "access",
    "add",
    "address",
    "adapter",
    "alias",
    "alloc",
    "apply",
    "arg",
    "array",
    "async",
    "attr",
    "auth",
    "backend",
    "batch",
    "bind",
    "block",
    "body",
    "bound",
    "buffer",
    "build",
    "bundle",
    "byte",
    "cache",
    "call",
    "cancel",
    "channel",
    "check",
    "child",
    "chunk",
    "class",
    "clean",
    "clear",
    "client",
    "clone",
    "close",
    "code",
    "codec",
    "column",
    "commit",
    "compare",
    "config",
    "conn",
    "context",
    "copy",
    "count",
    "create",
    "cursor",
    "data",
    "decode",
    "default",
    "delete",
    "depth",
    "diff",
    "digest",
    "dir",
    "dispatch",
    "doc",
    "done",
    "edge",
    "emit",
    "encode",
    "entry",
    "env",
    "error",
    "event",
    "exec",
    "export",
    "field",
    "file",
    "filter",
    "find",
    "flag",
    "flush",
    "format",
    "frame",
    "func",
    "gen",
    "get",
    "graph",
    "group",
    "guard",
    "handle",
    "hash",
    "head",
    "header",
    "heap",
    "hook",
    "host",
    "id",
    "index",
    "info",
    "init",
    "input",
    "insert",
    "item",
    "iter",
    "job",
    "join",
    "key",
    "kind",
    "label",
    "layout",
    "lease",
    "length",
    "level",
    "limit",
    "line",
    "link",
    "list",
    "load",
    "lock",
    "log",
    "lookup",
    "loop",
    "map",
    "mark",
    "match",
    "merge",
    "meta",
    "method",
    "mode",
    "module",
    "mount",
    "name",
    "next",
    "node",
    "open",
    "option",
    "order",
    "output",
    "owner",
    "pack",
    "page",
    "parse",
    "part",
    "path",
    "peer",
    "pending",
    "pick",
    "pipe",
    "plan",
    "point",
    "pool",
    "port",
    "post",
    "prefix",
    "print",
    "proc",
    "queue",
    "range",
    "read",
    "record",
    "ref",
    "region",
    "remove",
    "render",
    "repo",
    "request",
    "reset",
    "resolve",
    "result",
    "retry",
    "root",
    "route",
    "row",
    "rule",
    "run",
    "scan",
    "schema",
    "scope",
    "seek",
    "select",
    "send",
    "server",
    "session",
    "set",
    "shard",
    "size",
    "skip",
    "slot",
    "snapshot",
    "sort",
    "source",
    "span",
    "split",
    "stack",
    "start",
    "state",
    "status",
    "step",
    "store",
    "stream",
    "string",
    "sub",
    "swap",
    "symbol",
    "sync",
    "table",
    "tag",
    "task",
    "term",
    "text",
    "token",
    "trace",
    "tree",
    "trim",
    "type",
    "unit",
    "update",
    "upload",
    "user",
    "value",
    "version",
    "view",
    "visit",
    "wait",
    "walk",
    "watch",
    "window",
    "worker",
    "write",
    "yield",
    "zone",
]


def vocabulary(count: int, seed: int = 11) -> list[str]:
    """``count`` distinct identifier-like names."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        parts = [rng.choice(WORDS) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))]
        style = rng.random()
        if style < 0.4:
            name = parts[0] + "".join(p.title() for p in parts[1:])
        elif style < 0.7:
            name = "".join(p.title() for p in parts)
        else:
            name = "_".join(parts)
        out.setdefault(name)
    return list(out)


def generate(count: int) -> GenerationContent:
    names = vocabulary(count)
    repos = [f"repo{r}" for r in range(8)]
    files: list[records.File] = []
    syms: list[records.Symbol] = []
    for i, name in enumerate(names):
        repo = repos[i % len(repos)]
        path = f"pkg{i // 4000:02d}/file{i // 40:05d}.go"
        if i % 40 < len(repos):
            files.append(records.File(repository=repo, path=path, language="go", package=f"example.com/{repo}"))
        kind = "type" if name[:1].isupper() else "func"
        key = stable_key(
            language="go",
            repository=repo,
            package=f"example.com/{repo}",
            module=path,
            qualified_name=name,
            kind=kind,
            discriminator="",
        )
        syms.append(
            records.Symbol(
                key=key,
                name=name,
                qualified_name=name,
                kind=kind,
                language="go",
                repository=repo,
                path=path,
                start_line=1 + i % 40 * 10,
                start_col=0,
                end_line=9 + i % 40 * 10,
                end_col=0,
                exported=name[:1].isupper(),
                package=f"example.com/{repo}",
            )
        )
    repo_records = [records.Repository(name=r, root=f"/synthetic/{r}", languages=("go",)) for r in repos]
    return GenerationContent(repositories=repo_records, files=files, symbols=syms, edges=[], unresolved=[])


def build_vocabulary(out_dir: Path, count: int) -> StateLayout:
    layout = resolve_layout(config=out_dir / "kivgraph.toml", state_dir=out_dir / "state")
    marker = out_dir / f".built-{count}"
    if not marker.exists():
        publish(layout, generate(count), indexer_version="synthetic-names")
        marker.touch()
    return layout


TYPOS = ("drop", "add", "replace", "swap", "case")


def typo(rng: random.Random, name: str, how: str) -> str:
    i = rng.randrange(len(name))
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if how == "drop":
        return name[:i] + name[i + 1 :]
    if how == "add":
        return name[:i] + letter + name[i:]
    if how == "replace":
        return name[:i] + letter + name[i + 1 :]
    if how == "swap":
        i = min(i, len(name) - 2)
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    return name.swapcase() if rng.random() < 0.5 else name.lower()


def offered(gen: Generation, tool: str, word: str) -> str:
    """The text in which the answer offers its candidates ("" when it offers none)."""
    try:
        if tool == "get_symbol":
            get_symbol(gen, {"name": word})
            return ""
        return find_symbol(gen, {"name": word}).get("guidance") or ""
    except ToolError as exc:
        return exc.message


def measure(gen: Generation, calls: int, seed: int = 5) -> dict[str, Any]:
    rng = random.Random(seed)
    declared = [n for n in gen.distinct_names() if len(n) >= 3]
    cases = []
    while len(cases) < calls:
        name = rng.choice(declared)
        how = TYPOS[len(cases) % len(TYPOS)]
        word = typo(rng, name, how)
        if not list(gen.name_keys(word)):  # a typo that is itself declared is no miss
            cases.append((name, how, word))
    out: dict[str, Any] = {"calls": len(cases), "distinct_names": len(declared)}
    for tool in ("get_symbol", "find_symbol"):
        times: list[float] = []
        seeks: list[int] = []
        found = dict.fromkeys(TYPOS, 0)
        for name, how, word in cases:
            with counting_seeks() as counter:
                started = time.perf_counter()
                text = offered(gen, tool, word)
                times.append(time.perf_counter() - started)
            seeks.append(counter[0])
            found[how] += re.search(rf"[ .:]{re.escape(name)} \(", text) is not None
        per = len(cases) // len(TYPOS)
        seeks.sort()
        out[tool] = {
            **percentiles(times),
            "seeks_p50": seeks[len(seeks) // 2],
            "seeks_max": seeks[-1],
            "recall": {how: round(n / per, 3) for how, n in found.items()},
        }
    return out


@contextmanager
def counting_seeks() -> Iterator[list[int]]:
    """Counts the name-index seeks of the did-you-mean search (the work, whatever the machine's load)."""
    counter = [0]
    real = NameTrie.children

    def counted(trie: NameTrie, prefix: bytes) -> list[int]:
        found = real(trie, prefix)
        counter[0] += len(found) + 1
        return found

    NameTrie.children = counted  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        NameTrie.children = real  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symbols", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args(argv)
    data: dict[str, Any] = {"benchmark": "names", "seek_budget": SEEK_BUDGET, "budget_ms_p99": BUDGET_MS}
    vocab = build_vocabulary(cache_root() / "bench" / f"names-{args.symbols}", args.symbols)
    with open_current(vocab) as gen:
        data["vocabulary"] = {"symbols": gen.counts().symbols, **measure(gen, args.calls)}
    homonyms = build_homonyms(cache_root() / "bench" / "synthetic-100000-1000000", 100_000, 1_000_000)
    with open_current(homonyms) as gen:
        data["homonyms"] = {"symbols": gen.counts().symbols, **measure(gen, args.calls)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "names.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "names.md").write_text(report(data))
    print(report(data))
    return 0


def report(data: dict[str, Any]) -> str:
    lines = [
        "# Names that miss: did-you-mean",
        "",
        f"Each call asks a declared name with one typo; the search reads at most {data['seek_budget']} seeks of "
        "the name index. Budget: a miss p99 within "
        f"{data['budget_ms_p99']} ms (docs/budgets.md §1.1).",
        "",
        "| generation | tool | p50 ms | p95 ms | p99 ms | seeks p50 | seeks max | recall drop | add | replace | "
        "swap | case |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, key in (("100k distinct names", "vocabulary"), ("query benchmark graph", "homonyms")):
        run = data[key]
        for tool in ("get_symbol", "find_symbol"):
            t = run[tool]
            recall = " | ".join(str(t["recall"][how]) for how in TYPOS)
            lines.append(
                f"| {label} ({run['distinct_names']} names) | {tool} | {t['p50_ms']} | {t['p95_ms']} | "
                f"{t['p99_ms']} | {t['seeks_p50']} | {t['seeks_max']} | {recall} |"
            )
    worst = max(data[k][t]["p99_ms"] for k in ("vocabulary", "homonyms") for t in ("get_symbol", "find_symbol"))
    lines += ["", f"Budget {'met' if worst <= data['budget_ms_p99'] else 'NOT met'}: worst p99 {worst} ms.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
