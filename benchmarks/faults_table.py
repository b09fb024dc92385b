"""Render the fault campaigns' counts (benchmarks/results/faults.jsonl, written by `make faults`) as a table.

Writes benchmarks/results/faults.md and replaces the table between the ``faults-table`` markers in the README.
Run: python -m benchmarks.faults_table
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benchmarks" / "results" / "faults.jsonl"
REPORT = ROOT / "benchmarks" / "results" / "faults.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- faults-table:begin -->", "<!-- faults-table:end -->"
COMMAND = "make faults"


def rows(entries: list[dict[str, object]]) -> list[tuple[str, str, str]]:
    """(what was injected, how many, how many survived / were detected / went unanswered)."""
    by: dict[str, dict[str, object]] = {str(e["campaign"]): e for e in entries}
    out: list[tuple[str, str, str]] = []
    if "sigkill" in by:
        e = by["sigkill"]
        out.append(
            (
                "SIGKILL of `kivgraph index` at a random point (discovery, each file's extraction, analysis, "
                "cache write, each publish step) while a server answers",
                f"{e['injected']} injected",
                f"{e['survived']} survived (previous generation served, no half generation visible)",
            )
        )
    if "race" in by:
        e = by["race"]
        out.append(
            (
                "two indexers started together over an edit",
                f"{e['races']} races",
                f"0 stale publications; the second refused with exit 3 in {e['second_refused']}, "
                "serialized after the first in the others",
            )
        )
    if "corruption" in by:
        e = by["corruption"]
        kinds = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in sorted(e.items()) if k.startswith("kind."))
        out.append(
            (
                f"random corruption of the newest generation or CURRENT ({kinds})",
                f"{e['tried']} tried",
                f"{e['detected']} detected and left for an intact generation, {e['harmless']} harmless "
                "(bytes that hold no content); 0 crashes of status, doctor or serve",
            )
        )
    if "protocol" in by:
        e = by["protocol"]
        out.append(
            (
                "random protocol input on stdio (garbage bytes, cut JSON, bad params, deep nesting, lone "
                "surrogates, batches, odd ids)",
                f"{e['tried']} lines",
                f"{e['unanswered']} unanswered",
            )
        )
    if "analyzer_kill" in by:
        e = by["analyzer_kill"]
        out.append(
            (
                "SIGKILL of `kivgraph index` at a random point of its analyzer's run (an analyzer whose own "
                "workers start workers)",
                f"{e['kills']} kills",
                f"{e['left']} analyzer processes left running (the watchdog ends the group; the next run ends "
                "what a killed watchdog left)",
            )
        )
    if "analyzer_kill_scip_python" in by:
        e = by["analyzer_kill_scip_python"]
        out.append(
            (
                "SIGKILL of `kivgraph index` at a random point of a real scip-python run (node and what it starts)",
                f"{e['kills']} kills",
                f"{e['left']} processes of the analyzer's session left running",
            )
        )
    if "fact_cache_damage" in by:
        e = by["fact_cache_damage"]
        out.append(
            (
                "damage to the fact cache (a flipped page or bytes, truncation, not LMDB, a FIFO, a directory or "
                "a dangling link in place of its files or of the cache itself), then `kivgraph index`",
                f"{e['tried']} tried",
                f"{e['detected']} detected by the next index, {e.get('later', 0)} by the one after (damage only a "
                f"write reached), each moved aside and rebuilt; {e['harmless']} harmless (bytes nothing reads); every "
                "index published what the sources say",
            )
        )
    if "state_files" in by:
        e = by["state_files"]
        out.append(
            (
                "a FIFO, a directory or a dangling link in place of each file of the state directory and the "
                "configuration; `status`, `doctor`, `serve` and `index` each run",
                f"{e['cases']} cases, {e['commands']} commands",
                f"0 hung, 0 tracebacks; the index healed {e['healed']} and named the file with the fix in {e['named']}",
            )
        )
    arguments = [e for name, e in by.items() if name.startswith("arguments.")]
    if arguments:
        tried = sum(int(e["tried"]) for e in arguments)  # type: ignore[call-overload]
        refused = sum(int(e["refused_by_name"]) for e in arguments)  # type: ignore[call-overload]
        out.append(
            (
                f"property-based tool arguments (hypothesis, {len(arguments)} tools)",
                f"{tried} calls",
                f"0 crashes; {refused} refused with a known error code naming the field, the rest answered",
            )
        )
    return out


def render(entries: list[dict[str, object]]) -> str:
    lines = ["| fault | tried | outcome |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows(entries)]
    seeds = sorted({str(e.get("seed", "")) for e in entries if e.get("seed") is not None})
    rounds = sorted({str(e.get("rounds", "")) for e in entries if e.get("rounds") is not None})
    lines.append("")
    lines.append(
        f"Produced by `{COMMAND}` (rounds per campaign: {', '.join(rounds) or '?'}; seed "
        f"{', '.join(seeds) or '?'}; counts in `benchmarks/results/faults.jsonl`). `make test` runs "
        "the same campaigns for a few rounds."
    )
    return "\n".join(lines)


def main() -> int:
    if not SOURCE.exists():
        print(f"{SOURCE} is missing: run `{COMMAND}` first", file=sys.stderr)
        return 1
    latest: dict[str, dict[str, object]] = defaultdict(dict)
    for line in SOURCE.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            latest[entry["campaign"]] = entry
    table = render(list(latest.values()))
    REPORT.write_text("# Fault campaigns\n\n" + table + "\n")
    text = README.read_text()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _old, tail = rest.split(END, 1)
        README.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
