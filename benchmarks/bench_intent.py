"""find_by_intent: does the ranked list name the file, and the declaration, a developer would open?

What it measures. For each question of benchmarks/questions/intent.json (a task in a developer's words,
the file they would open for it, and the declarations in that file that answer it), on click 8.1.7
(Python), pflag v1.0.9 (Go) and @tanstack/query-core 5.59.0 (TypeScript), the answer of the real tool
function (``server.tools.intent.find_by_intent``, what an agent receives, default arguments, so test files
apart):

- file top-1 and top-5: the expected file is the first, or among the first five, files listed;
- declaration hit: the expected file is in the top five and one of the declarations it carries is one of
  the expected ones; declaration top-1: the first it carries is;
- the declarations carried per file (the answer's size), and the answer's o200k_base tokens.

Each corpus is indexed once by the real CLI with its language's fallback analyzer (the lexicon, which is
all find_by_intent reads, is built by the extractors either way), in ``<cache>/bench-intent``.

    python -m benchmarks.bench_intent [--label NAME]

The run is stored under ``--label`` (default ``current``) in benchmarks/results/intent.json beside the
runs of other labels (``before`` is the ranking before issue 27's change), and intent.md compares them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import tokenizer
from benchmarks.corpora import cache_root, fetch_go_module, fetch_npm_package, fetch_pypi_sdist

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results"
QUESTIONS = REPO_ROOT / "benchmarks" / "questions" / "intent.json"
TOP = 5
# The fallback of each language: the lexicon does not depend on the exact analyzer, so skip its run.
NO_ANALYZER = {
    "python": {"KIVGRAPH_SCIP_PYTHON": "/nonexistent/scip-python"},
    "go": {"KIVGRAPH_GO": "/nonexistent/go"},
    "typescript": {"KIVGRAPH_SCIP_TYPESCRIPT": "/nonexistent/scip-typescript"},
}
CORPORA = {
    "click": ("python", lambda: fetch_pypi_sdist("click")),
    "pflag": ("go", lambda: fetch_go_module("pflag")),
    "query-core": ("typescript", lambda: fetch_npm_package("query-core")),
}


def _index(name: str) -> Path:
    """A KIVGRAPH_HOME where the corpus ``name`` is indexed (reused when its generation exists)."""
    language, fetch = CORPORA[name]
    source = fetch()
    home = cache_root() / "bench-intent" / name
    if (home / "state" / "CURRENT").exists():
        return home
    env = {**os.environ, "KIVGRAPH_HOME": str(home), **NO_ANALYZER[language]}
    cli = [sys.executable, "-m", "kivgraph_cli"]
    subprocess.run(
        [*cli, "init", "--repository", f"{name}={source}", "--languages", language],
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run([*cli, "index"], env=env, check=True, capture_output=True, timeout=1800)
    return home


def _declarations(row: list[Any]) -> list[str]:
    """The labels' names of one ranked file, a row of ``columns`` file, terms, symbols
    (``Context.invoke@714-783`` → ``Context.invoke``)."""
    out = []
    for item in row[2] if len(row) > 2 else []:
        label = item[0] if isinstance(item, list) else item
        out.append(label.rsplit("@", 1)[0])
    return out


def _matches(name: str, expected: list[str]) -> bool:
    return any(name == e or name.endswith("." + e) or e.endswith("." + name) for e in expected)


def run_questions(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from server.tools.intent import find_by_intent
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import open_current

    out = []
    generations: dict[str, Any] = {}
    try:
        for q in questions:
            if q["corpus"] not in generations:
                home = _index(q["corpus"])
                generations[q["corpus"]] = open_current(StateLayout(home / "kivgraph.toml", home / "state"))
            gen = generations[q["corpus"]]
            started = time.perf_counter()
            answer = find_by_intent(gen, {"query": q["query"], "limit": TOP})
            ms = (time.perf_counter() - started) * 1000
            files = [row[0].split(":", 1)[-1] for row in answer["results"]["files"]]
            rank = files.index(q["file"]) + 1 if q["file"] in files else 0
            carried = _declarations(answer["results"]["files"][rank - 1]) if rank else []
            out.append(
                {
                    "corpus": q["corpus"],
                    "query": q["query"],
                    "file": q["file"],
                    "rank": rank,
                    "declarations": carried,
                    "declaration_hit": any(_matches(d, q["declarations"]) for d in carried),
                    "declaration_top1": bool(carried) and _matches(carried[0], q["declarations"]),
                    "carried_per_file": [len(_declarations(f)) for f in answer["results"]["files"]],
                    "tokens": tokenizer.count(json.dumps(answer, separators=(",", ":"))),
                    "ms": round(ms, 2),
                }
            )
    finally:
        for gen in generations.values():
            gen.close()
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    per_file = [c for r in rows for c in r["carried_per_file"]]
    return {
        "questions": n,
        "file_top1": sum(1 for r in rows if r["rank"] == 1),
        "file_top5": sum(1 for r in rows if r["rank"]),
        "declaration_hit": sum(1 for r in rows if r["declaration_hit"]),
        "declaration_top1": sum(1 for r in rows if r["declaration_top1"]),
        "declarations_per_file": round(statistics.mean(per_file), 2) if per_file else 0,
        "median_tokens": statistics.median(r["tokens"] for r in rows) if rows else 0,
        "median_ms": round(statistics.median(r["ms"] for r in rows), 2) if rows else 0,
    }


def report(data: dict[str, Any]) -> str:
    labels = list(data["runs"])
    lines = [
        "# find_by_intent: the file and the declaration a developer would open",
        "",
        f"{data['runs'][labels[-1]]['summary']['questions']} questions (benchmarks/questions/intent.json) on click "
        "8.1.7, pflag v1.0.9 and @tanstack/query-core 5.59.0; `python -m benchmarks.bench_intent --label NAME`. "
        "A declaration hit: the expected file is in the top five and carries an expected declaration.",
        "",
        "| run | file top-1 | file top-5 | declaration hit | declaration first | declarations per file | "
        "median tokens | median ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label in labels:
        s = data["runs"][label]["summary"]
        n = s["questions"]
        lines.append(
            f"| {label} | {s['file_top1']}/{n} | {s['file_top5']}/{n} | {s['declaration_hit']}/{n} | "
            f"{s['declaration_top1']}/{n} | {s['declarations_per_file']} | {s['median_tokens']} | {s['median_ms']} |"
        )
    last = data["runs"][labels[-1]]["rows"]
    lines += [
        "",
        f"Per question ({labels[-1]}): the rank of the expected file (0: not in the top five), the declarations it",
        "carries, and whether one of them is expected.",
        "",
    ]
    lines += [
        "| corpus | question | file | rank | declarations carried | hit |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in last:
        carried = ", ".join(r["declarations"]) or "-"
        lines.append(
            f"| {r['corpus']} | {r['query']} | {r['file']} | {r['rank']} | {carried} | "
            f"{'yes' if r['declaration_hit'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", default="current", help="the name this run is stored under")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    args = parser.parse_args(argv)
    questions = json.loads(args.questions.read_text())["questions"]
    rows = run_questions(questions)
    target = RESULTS / "intent.json"
    data = json.loads(target.read_text()) if target.exists() else {"runs": {}}
    data["runs"][args.label] = {"summary": summary(rows), "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "intent.md").write_text(report(data))
    print(json.dumps(data["runs"][args.label]["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
