"""Answer tokens: kivgraph's MCP answers against grep + read, on click 8.1.7 and typer 0.12.3.

What it measures. For each question of benchmarks/questions/click_typer.json
(who calls a common name and a rare one, blast radius, which files use X,
where X is declared, a large and a small file outline, the code of two
methods, a cross-repository consumer question, an absence, and a search by
intent), the tokens and bytes an agent receives:

- kivgraph: the text of the tool results returned by a real `kivgraph serve`
  spawned over stdio and driven by the MCP Python SDK client, exactly as a
  client receives them (the concatenated text blocks of each result);
- baseline: what an agent without kivgraph runs, as the host's tools would
  show it: the verbatim output of real `grep` (run from a directory holding
  the two trees as `click` and `typer`, restricted to ``*.py``, lines sorted
  by path then line number) and the file reads the question's rule calls for,
  rendered as a host's read tool renders them (``cat -n``: line number
  right-aligned in six columns, a tab, the text).

Both sides are checked against the hand-written expected answer of each
question: kivgraph must name every expected file and symbol (and text); the
baseline's output must contain every expected file (and text) and, for a
caller or impact question, show every expected caller ``file:function``
through its reads: the baseline pays for reading, around each grep match it
cannot dismiss on sight, the enclosing function from its first line down to
the match (``enclosing_reads``), since the answer is the calling
declarations, not the matching lines. The ratio is
baseline tokens / kivgraph tokens. The budget is the median ratio over the
questions where both are correct (≥ 6×, docs/budgets.md §1.6); the
whole-session view is the sum over all questions. Questions where grep is
cheaper stay in the set.

Tokens are counted with OpenAI's o200k_base encoding (tiktoken with the ranks that ``make setup`` installs,
offline: benchmarks/tokenizer.py); bytes are reported beside them. Every question belongs to a family
(find_references, cross_repo, blast_radius, declared, outline, source, intent): the report gives the median
per family, the median over all, and names the questions where grep + read is cheaper.

Compact answers write labels relative to the module their file group implies (``Context.invoke@714`` in
``src/click/core.py``); the correctness check reads a label in a file group as the qualified name it stands
for (``_named_symbols``), as an agent does.

Both corpora are registered in a temporary KIVGRAPH_HOME and indexed by the
real CLI (`python -m kivgraph_cli init ... / index`).

    python -m benchmarks.bench_tokens [--questions PATH]

Writes benchmarks/results/tokens.json and tokens.md.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import tokenizer
from benchmarks.corpora import PYPI_CORPORA, fetch_pypi_sdist

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results"
QUESTIONS = REPO_ROOT / "benchmarks" / "questions" / "click_typer.json"
BUDGET = 6.0
INDEX_TIMEOUT = 1800.0
CALL_TIMEOUT = 60.0
SERVE_TIMEOUT = 300.0
GREP_TIMEOUT = 60.0


def tokens(text: str) -> int:
    """o200k_base tokens of ``text`` (benchmarks/tokenizer.py)."""
    return tokenizer.count(text)


FAMILIES = ("find_references", "cross_repo", "blast_radius", "declared", "outline", "source", "intent")
GREP_CHEAPER_AT_MOST = 0.10  # the share of questions where grep + read may be cheaper


# -- the baseline: real grep and host-style reads ------------------------------------------------------------


def _sorted_grep(out: str, list_only: bool) -> str:
    lines = [line for line in out.splitlines() if line]
    if list_only:
        return "".join(f"{line}\n" for line in sorted(lines))

    def key(line: str) -> tuple[str, int]:
        parts = line.split(":", 2)
        if parts[0].isdigit():  # grep over one file prints no path
            return "", int(parts[0])
        if len(parts) >= 2 and parts[1].isdigit():
            return parts[0], int(parts[1])
        return line, 0

    return "".join(f"{line}\n" for line in sorted(lines, key=key))


def run_grep(workdir: Path, args: list[str]) -> str:
    """Verbatim output of ``grep --include=*.py ARGS`` from ``workdir``, sorted by path and line.

    Without a path among ``ARGS`` (the first one is the pattern or an option), both trees are searched.
    """
    has_path = any(a.split("/")[0] in ("click", "typer") for a in args[1:])
    argv = ["grep", "--include=*.py", *args, *([] if has_path else ["click", "typer"])]
    proc = subprocess.run(
        argv, cwd=workdir, capture_output=True, text=True, timeout=GREP_TIMEOUT, env={**os.environ, "LC_ALL": "C"}
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{argv} failed: {proc.stderr}")
    list_only = any(a.startswith("-") and not a.startswith("--") and "l" in a for a in args)
    return _sorted_grep(proc.stdout, list_only)


def host_read(workdir: Path, rel: str, lines: list[int] | None = None) -> str:
    """A file (or a line range) as a host's read tool shows it: ``cat -n`` numbering."""
    text = (workdir / rel).read_text(encoding="utf-8", errors="replace").splitlines()
    start, end = (lines[0], lines[1]) if lines else (1, len(text))
    return "".join(f"{n:>6}\t{text[n - 1]}\n" for n in range(start, min(end, len(text)) + 1))


SHORT_FILE = 80  # lines: a file this short is read whole rather than function by function
_DECLARATION = re.compile(r"^\s*(async\s+)?def\s|^\s*class\s")


def enclosing_spans(workdir: Path, rel: str, lines: list[int]) -> list[tuple[int, int]]:
    """From the innermost function around each line (its first decorator) down to the last such line, merged.

    The least a read can show to name the enclosing function of a match (a host's read tool takes an offset
    and a limit); module-level lines need no read.
    """
    import ast

    tree = ast.parse((workdir / rel).read_text(encoding="utf-8", errors="replace"))
    functions = [
        (min([n.lineno, *(d.lineno for d in n.decorator_list)]), n.end_lineno or n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    reach: dict[tuple[int, int], int] = {}  # innermost function -> the last match inside it
    for line in lines:
        around = [f for f in functions if f[0] <= line <= f[1]]
        if around:
            inner = min(around, key=lambda f: f[1] - f[0])
            reach[inner] = max(line, reach.get(inner, 0))
    spans = [(start, last) for (start, _end), last in reach.items()]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def enclosing_reads(
    workdir: Path, grep_text: str, skip: str | None, one_file: str | None = None
) -> list[dict[str, Any]]:
    """What an agent reads to name the declaration around each grep match, as a host's read tool shows it.

    Rule: for every match line (``path:line:text``) that is not itself a declaration (``def``/``class``) and
    not dismissed on sight (``skip``, a regex over the line), read from the innermost enclosing function's first
    line (decorators included) down to the last match inside it: the least that shows which function holds the
    use. A match at module level needs no read (the line says it). A file of at
    most SHORT_FILE lines is read whole instead, once. Spans of one file are merged and each read once.
    """
    by_file: dict[str, list[int]] = {}
    for line in grep_text.splitlines():
        parts = [one_file, *line.split(":", 1)] if one_file else line.split(":", 2)
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        path, number, text = parts[0], int(parts[1]), parts[2]
        if _DECLARATION.match(text) or (skip and re.search(skip, text)):
            continue
        by_file.setdefault(path, []).append(number)
    out = []
    for path, numbers in by_file.items():
        length = len((workdir / path).read_text(encoding="utf-8", errors="replace").splitlines())
        if length <= SHORT_FILE:
            out.append({"step": f"read {path}", "text": host_read(workdir, path)})
            continue
        for start, end in enclosing_spans(workdir, path, numbers):
            out.append({"step": f"read {path}:{start}-{end}", "text": host_read(workdir, path, [start, end])})
    return out


def run_baseline(workdir: Path, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    greps: dict[int, tuple[str, str | None]] = {}  # step position -> the grep output the agent saw
    for position, step in enumerate(steps):
        if "grep" in step:
            text = run_grep(workdir, step["grep"])
            label = "grep " + " ".join(step["grep"])
            if step.get("drop"):  # the agent's own `| grep -vE DROP`: it never sees those lines
                text = "".join(line + "\n" for line in text.splitlines() if not re.search(step["drop"], line))
                label += f" | grep -vE {step['drop']}"
            files = [a for a in step["grep"][1:] if a.endswith(".py")]
            greps[position] = (text, files[0] if len(files) == 1 else None)
            out.append({"step": label, "text": text})
        elif "enclosing" in step:
            text, one_file = greps[step["enclosing"]]
            out.extend(enclosing_reads(workdir, text, step.get("skip"), one_file))
        else:
            text = host_read(workdir, step["read"], step.get("lines"))
            label = f"read {step['read']}" + (f":{step['lines'][0]}-{step['lines'][1]}" if step.get("lines") else "")
            out.append({"step": label, "text": text})
    return out


# -- kivgraph: a real serve over stdio ------------------------------------------------------------------------


async def _ask(home: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kivgraph_cli", "serve"],
        cwd=str(REPO_ROOT),
        env={"KIVGRAPH_HOME": str(home), "PATH": os.environ.get("PATH", "")},
    )
    answers = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            info = {"server": init.server_info.name, "version": init.server_info.version}
            for tool, arguments in calls:
                result = await session.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT)
                text = "".join(getattr(block, "text", "") for block in result.content)
                answers.append({"tool": tool, "arguments": arguments, "is_error": bool(result.is_error), "text": text})
    return answers, info


def ask_server(home: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    async def bounded() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        return await asyncio.wait_for(_ask(home, calls), SERVE_TIMEOUT)

    return asyncio.run(bounded())


def index_corpora(home: Path, roots: dict[str, Path]) -> dict[str, Any]:
    env = {**os.environ, "KIVGRAPH_HOME": str(home)}
    repos = [arg for name, root in roots.items() for arg in ("--repository", f"{name}={root}")]
    if not (home / "kivgraph.toml").exists():
        subprocess.run(
            [sys.executable, "-m", "kivgraph_cli", "init", *repos, "--languages", "python"],
            cwd=REPO_ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", "index", "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=INDEX_TIMEOUT,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"kivgraph index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.splitlines()[-1])["result"]
    counts = {"generation": result.get("generation"), **result.get("counts", {})}
    return {"seconds": round(time.perf_counter() - started, 1), **counts}


# -- correctness ----------------------------------------------------------------------------------------------


def _names_file(text: str, repo_path: str) -> bool:
    """Whether ``text`` names ``repo/path``: spelled whole, or repository-relative next to its repository name."""
    if repo_path in text:
        return True
    repo, _, rel = repo_path.partition("/")
    return rel in text and re.search(rf"\b{re.escape(repo)}\b", text) is not None


def _names_caller(steps: list[dict[str, Any]], caller: str) -> bool:
    """``repo/path:function``: a read of that file, or a grep line of that file, shows the ``def`` line."""
    path, _, function = caller.rpartition(":")
    declared = re.compile(rf"\bdef {re.escape(function)}\(")
    for st in steps:
        label = st["step"]
        if label.split(":")[0] == f"read {path}" or (label.startswith("grep ") and label.endswith(f" {path}")):
            if declared.search(st["text"]):
                return True
        elif label.startswith("grep ") and any(
            line.startswith(f"{path}:") and declared.search(line) for line in st["text"].splitlines()
        ):
            return True
    return False


def _is_label(entry: Any) -> bool:
    head = entry[0] if isinstance(entry, list) and entry else entry
    return isinstance(head, str) and "@" in head


def _labels_in(node: Any, path: str | None, out: list[tuple[str, str]]) -> None:
    """(file path, label tail) of every compact label in a file group (``{path: [label, …]}``, a key
    ``repo:path`` for another repository's file, or ``at`` under a one-file outline's ``path``), and of a blind
    spot's holder (``in`` beside ``at: repo:path:line``)."""
    if isinstance(node, dict):
        here = node.get("path") if isinstance(node.get("path"), str) else path
        at, holder = node.get("at"), node.get("in")
        if isinstance(at, str) and isinstance(holder, str) and at.count(":") >= 2:  # a blind spot: repo:path:line
            out.append((at.split(":")[1], holder))
        for key, value in node.items():
            if isinstance(value, list) and value and all(_is_label(e) for e in value):
                file = here if key == "at" else key.split(":", 1)[-1]
                if isinstance(file, str):
                    for entry in value:
                        label = entry[0] if isinstance(entry, list) else entry
                        out.append((file, label.split("@", 1)[0]))
            else:
                _labels_in(value, here, out)
    elif isinstance(node, list):
        for item in node:
            _labels_in(item, path, out)


def _answers(text: str) -> list[Any]:
    out = []
    for chunk in text.split("\n"):
        try:
            out.append(json.loads(chunk))
        except ValueError:
            continue
    return out


def _named_symbols(text: str) -> set[str]:
    """Qualified names a compact answer spells through module-relative labels in file groups."""
    names: set[str] = set()
    for answer in _answers(text):
        pairs: list[tuple[str, str]] = []
        _labels_in(answer, None, pairs)
        for path, tail in pairs:
            parts = path.rsplit(".", 1)[0].split("/")
            for i in range(len(parts)):  # the module: the dotted path, or any tail of it (src/ layouts)
                names.add(".".join([*parts[i:], tail]))
            names.add(tail)
    return names


def _tree(node: dict[str, Any], prefix: str) -> list[str]:
    """A directory tree read back: a key ending in ``/`` holds its own tree."""
    out = []
    for key, value in node.items():
        if key.endswith("/") and isinstance(value, dict):
            out.extend(_tree(value, prefix + key))
        else:
            out.append(prefix + key)
    return out


def _named_files(text: str) -> str:
    """The files an answer names in its groups and trees, spelled ``repo/path`` (as an agent reads them: a key
    without ``repo:`` is in the header's ``repository``, else in the subject's or root's)."""
    paths: list[str] = []

    def walk(node: Any, repository: str | None) -> None:
        if isinstance(node, dict):
            subject = node.get("subject", node.get("root"))
            if isinstance(subject, str) and subject.count(":") >= 2:  # repo:path:line: the rows' default repository
                repository = subject.split(":", 1)[0]
            repository = node.get("repository") if isinstance(node.get("repository"), str) else repository
            for key, value in node.items():
                if key == "files" and isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
                    for repo, tree in value.items():  # the files view: {repository: tree}
                        paths.extend(f"{repo}/{p}" for p in _tree(tree, ""))
                elif isinstance(value, list) and value and all(_is_label(e) for e in value) and key != "at":
                    repo, _, rel = key.partition(":") if ":" in key else ("", "", key)
                    paths.append(f"{repo or repository}/{rel}")
                else:
                    walk(value, repository)
        elif isinstance(node, list):
            for item in node:
                walk(item, repository)

    for answer in _answers(text):
        walk(answer, None)
    return "\n".join(paths)


def check(expected: dict[str, Any], text: str, side: str, steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    named = f"{text}\n{_named_files(text)}" if side == "kivgraph" else text
    missing = [f for f in expected.get("files", []) if not _names_file(named, f)]
    missing += [t for t in expected.get("text", []) if t not in text]
    if side == "kivgraph":
        spelled = _named_symbols(text)
        missing += [s for s in expected.get("symbols", []) if s not in text and s not in spelled]
    else:  # the same declarations, as file:function, each shown by a read
        missing += [c for c in expected.get("callers", []) if not _names_caller(steps or [], c)]
    missing += [t for t in expected.get(f"{side}_text", []) if t not in text]
    return {"correct": not missing, "missing": missing}


# -- the run --------------------------------------------------------------------------------------------------


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def run(questions_path: Path, keep_home: Path | None = None) -> dict[str, Any]:
    """Index the corpora (in a temporary home, or in ``keep_home`` when given: re-indexed there, which
    publishes nothing when nothing changed) and put every question to both sides."""
    spec = json.loads(questions_path.read_text())
    roots = {name: fetch_pypi_sdist(name, version) for name, version in spec["corpora"].items()}
    with tempfile.TemporaryDirectory(prefix="kivgraph-tokens-") as tmp:
        home, workdir = keep_home or Path(tmp) / "home", Path(tmp) / "grep"
        home.mkdir(parents=True, exist_ok=True)
        workdir.mkdir()
        for name, root in roots.items():
            (workdir / name).symlink_to(root, target_is_directory=True)
        index = index_corpora(home, roots)
        calls = [(tool, args) for q in spec["questions"] for tool, args in q["kivgraph"]]
        answers, server = ask_server(home, calls)
        rows = []
        cursor = 0
        for q in spec["questions"]:
            mine = answers[cursor : cursor + len(q["kivgraph"])]
            cursor += len(q["kivgraph"])
            theirs = run_baseline(workdir, q["baseline"])
            k_text = "\n".join(a["text"] for a in mine)
            b_text = "".join(f"{s['step']}\n{s['text']}" for s in theirs)  # a read names the file it reads
            k_tokens = sum(tokens(a["text"]) for a in mine)
            b_tokens = sum(tokens(s["text"]) for s in theirs)
            k_bytes = sum(len(a["text"].encode()) for a in mine)
            b_bytes = sum(len(s["text"].encode()) for s in theirs)
            k_check, b_check = (
                check(q["expected"], k_text, "kivgraph"),
                check(q["expected"], b_text, "baseline", theirs),
            )
            rows.append(
                {
                    "id": q["id"],
                    "question": q["question"],
                    "class": q["class"],
                    "family": q["family"],
                    "kivgraph": {
                        "calls": [
                            {
                                "tool": a["tool"],
                                "arguments": a["arguments"],
                                "is_error": a["is_error"],
                                "bytes": len(a["text"].encode()),
                                "tokens": tokens(a["text"]),
                                "text": a["text"],
                            }
                            for a in mine
                        ],
                        "tokens": k_tokens,
                        "bytes": k_bytes,
                        **k_check,
                    },
                    "baseline": {
                        "rule": q["baseline_rule"],
                        "steps": [
                            {
                                "step": s["step"],
                                "lines": s["text"].count("\n"),
                                "bytes": len(s["text"].encode()),
                                "tokens": tokens(s["text"]),
                                "sha256": hashlib.sha256(s["text"].encode()).hexdigest()[:16],
                            }
                            for s in theirs
                        ],
                        "tokens": b_tokens,
                        "bytes": b_bytes,
                        **b_check,
                    },
                    "ratio_tokens": _ratio(b_tokens, k_tokens),
                    "ratio_bytes": _ratio(b_bytes, k_bytes),
                    "both_correct": k_check["correct"] and b_check["correct"],
                    "cheaper": "kivgraph" if k_tokens < b_tokens else "grep",
                }
            )
    both = [r for r in rows if r["both_correct"]]
    families = {}
    for family in FAMILIES:
        members = [r for r in both if r["family"] == family]
        families[family] = {
            "questions": sum(1 for r in rows if r["family"] == family),
            "both_correct": len(members),
            "median_ratio_tokens": round(statistics.median(r["ratio_tokens"] for r in members), 2) if members else None,
            "grep_cheaper": [r["id"] for r in rows if r["family"] == family and r["cheaper"] == "grep"],
        }
    grep_cheaper = [r["id"] for r in rows if r["cheaper"] == "grep"]
    median_tokens = round(statistics.median(r["ratio_tokens"] for r in both), 2) if both else None
    median_bytes = round(statistics.median(r["ratio_bytes"] for r in both), 2) if both else None
    k_sum, b_sum = sum(r["kivgraph"]["tokens"] for r in rows), sum(r["baseline"]["tokens"] for r in rows)
    kb_sum, bb_sum = sum(r["kivgraph"]["bytes"] for r in rows), sum(r["baseline"]["bytes"] for r in rows)
    return {
        "benchmark": "tokens",
        "corpora": spec["corpora"],
        "questions_file": str(questions_path.relative_to(REPO_ROOT)),
        "questions_version": spec.get("version"),
        "server": server,
        "index": index,
        "tokenizer": f"o200k_base via tiktoken ({tokenizer.JS_TIKTOKEN} ranks, offline)",
        "budget": {"median_ratio_at_least": BUDGET, "grep_cheaper_share_at_most": GREP_CHEAPER_AT_MOST},
        "summary": {
            "questions": len(rows),
            "both_correct": len(both),
            "kivgraph_incorrect": [r["id"] for r in rows if not r["kivgraph"]["correct"]],
            "baseline_incorrect": [r["id"] for r in rows if not r["baseline"]["correct"]],
            "grep_cheaper": grep_cheaper,
            "grep_cheaper_share": round(len(grep_cheaper) / len(rows), 3),
            "median_ratio_tokens": median_tokens,
            "median_ratio_bytes": median_bytes,
            "meets_budget": median_tokens is not None and median_tokens >= BUDGET,
            "meets_grep_share": len(grep_cheaper) / len(rows) <= GREP_CHEAPER_AT_MOST,
            "families": families,
            "session": {
                "baseline_tokens": b_sum,
                "kivgraph_tokens": k_sum,
                "ratio_tokens": _ratio(b_sum, k_sum),
                "baseline_bytes": bb_sum,
                "kivgraph_bytes": kb_sum,
                "ratio_bytes": _ratio(bb_sum, kb_sum),
            },
            "bytes_per_token": {"baseline": _ratio(bb_sum, b_sum), "kivgraph": _ratio(kb_sum, k_sum)},
        },
        "questions": rows,
    }


def report(data: dict[str, Any]) -> str:
    s = data["summary"]
    out = [
        "# Answer tokens: kivgraph vs grep + read",
        "",
        f"Corpora: click {data['corpora']['click']} + typer {data['corpora']['typer']}, indexed by `kivgraph index` "
        f"in {data['index'].get('seconds')} s; answers from a real `kivgraph serve` over stdio "
        f"({data['server'].get('server')} {data['server'].get('version')}). Questions: `{data['questions_file']}` "
        f"(version {data['questions_version']}). Command: `python -m benchmarks.bench_tokens`.",
        "",
        f"Tokens: {data['tokenizer']}; bytes are exact. Ratio = baseline / kivgraph (above 1: kivgraph is cheaper).",
        "",
        "## Per family",
        "",
        "| family | questions | both correct | median ratio (tokens) | grep cheaper on |",
        "| --- | ---: | ---: | ---: | --- |",
        *[
            f"| {name} | {f['questions']} | {f['both_correct']} | "
            f"{str(f['median_ratio_tokens']) + '×' if f['median_ratio_tokens'] is not None else '—'} | "
            f"{', '.join(f['grep_cheaper']) or 'none'} |"
            for name, f in s["families"].items()
        ],
        "",
        "## Per question",
        "",
        "| question | family | baseline tokens | kivgraph tokens | ratio (tokens) | ratio (bytes) | kivgraph correct "
        "| baseline correct | cheaper |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for r in data["questions"]:
        out.append(
            f"| {r['id']}: {r['question']} | {r['family']} | {r['baseline']['tokens']:,} "
            f"| {r['kivgraph']['tokens']:,} | {r['ratio_tokens']}× | {r['ratio_bytes']}× "
            f"| {'yes' if r['kivgraph']['correct'] else 'NO: missing ' + ', '.join(r['kivgraph']['missing'])} "
            f"| {'yes' if r['baseline']['correct'] else 'NO: missing ' + ', '.join(r['baseline']['missing'])} "
            f"| {r['cheaper']} |"
        )
    sess = s["session"]
    verdict = "meets" if s["meets_budget"] else "does NOT meet"
    out += [
        "",
        f"**Median ratio over the {s['both_correct']} of {s['questions']} questions where both sides are correct: "
        f"{s['median_ratio_tokens']}× in tokens ({s['median_ratio_bytes']}× in bytes); this {verdict} the "
        f"≥ {data['budget']['median_ratio_at_least']:g}× budget (docs/budgets.md §1.6).**",
        "",
        f"Whole session (every question, summed): baseline {sess['baseline_tokens']:,} tokens "
        f"({sess['baseline_bytes']:,} bytes), kivgraph {sess['kivgraph_tokens']:,} tokens "
        f"({sess['kivgraph_bytes']:,} bytes): {sess['ratio_tokens']}× in tokens, {sess['ratio_bytes']}× in bytes. "
        "The median over both-correct questions is the budget's measure; the session sum also counts the "
        "questions where one side is wrong.",
        "",
        f"Grep is cheaper on {len(s['grep_cheaper'])} of {s['questions']} questions "
        f"({round(100 * s['grep_cheaper_share'])}%; the target is at most "
        f"{round(100 * data['budget']['grep_cheaper_share_at_most'])}%): {', '.join(s['grep_cheaper']) or 'none'}.",
        "",
        f"Bytes per o200k token: baseline {s['bytes_per_token']['baseline']}, kivgraph "
        f"{s['bytes_per_token']['kivgraph']}.",
        "",
        "## Per question: calls and baseline steps",
        "",
    ]
    for r in data["questions"]:
        calls = "; ".join(
            f"`{c['tool']} {json.dumps(c['arguments'])}` ({c['tokens']:,} tokens)" for c in r["kivgraph"]["calls"]
        )
        steps = "; ".join(
            f"`{st['step']}` ({st['lines']:,} lines, {st['tokens']:,} tokens)" for st in r["baseline"]["steps"]
        )
        out += [f"- **{r['id']}**: kivgraph {calls}. Baseline ({r['baseline']['rule']}): {steps}."]
    out += [
        "",
        "## Method",
        "",
        "- Baseline: real `grep` from a directory holding the two trees as `click/` and `typer/`, always "
        "`--include=*.py`, output sorted by path then line; reads rendered `cat -n` style as a host's read tool "
        "shows them. The rule for each question is in the question file and above.",
        "- Caller and impact questions (equal correctness): the answer is the set of calling declarations. "
        "kivgraph must name each by qualified name; the baseline pays for the reads that name the enclosing "
        "function of every grep match it cannot dismiss on sight (from the function's first line down to the "
        "last match inside it, the least a read with an offset shows; a file of at most 80 lines is read whole; "
        "a module-level match needs no read), and is judged on `file:function` (a read of that file shows "
        "`def function(`). Greps use the pattern a careful agent types (e.g. `\\.invoke\\(` piped through "
        "`grep -vE runner`), not the bare word. File-list, declaration, outline and absence questions take no "
        "reads beyond their rule.",
        "- Correctness: kivgraph's answer must name every expected file (whole, or repository-relative next to the "
        "repository's name, as a file group's key `[repository:]path` or a path of the files view's directory tree, "
        "read back as an agent reads it), every expected symbol (a label in a file group stands for its module's "
        "qualified name) and text; the baseline's output must name every expected file, "
        "caller and text. Expected sets were written by hand from the sources (comments in the question file); "
        "where kivgraph misses a true caller the question counts as kivgraph-incorrect and leaves the median.",
        "- Not measured: the resident tool surface (descriptions and schemas) and the agent's own reasoning.",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument(
        "--home", type=Path, help="keep the index in this KIVGRAPH_HOME (a second run re-indexes nothing)"
    )
    args = parser.parse_args(argv)
    assert set(PYPI_CORPORA) >= {"click", "typer"}
    data = run(args.questions.resolve(), args.home.resolve() if args.home else None)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tokens.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / "tokens.md").write_text(report(data))
    s = data["summary"]
    for r in data["questions"]:
        print(
            f"{r['id']:16} baseline {r['baseline']['tokens']:>7,}  kivgraph {r['kivgraph']['tokens']:>6,}  "
            f"{r['ratio_tokens']:>7}x  kivgraph {'ok' if r['kivgraph']['correct'] else 'WRONG'}  "
            f"baseline {'ok' if r['baseline']['correct'] else 'WRONG'}"
        )
    print(
        f"median ratio (both correct, {s['both_correct']}/{s['questions']}): {s['median_ratio_tokens']}x tokens, "
        f"{s['median_ratio_bytes']}x bytes; budget {BUDGET:g}x {'met' if s['meets_budget'] else 'NOT met'}; "
        f"session {s['session']['ratio_tokens']}x"
    )
    print(f"wrote {RESULTS / 'tokens.json'} and {RESULTS / 'tokens.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
