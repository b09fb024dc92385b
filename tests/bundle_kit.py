"""Bundles in tests: running the CI commands as separate jobs, and comparing two generations answer by answer.

``tool_answers`` asks every read tool of the MCP surface about every symbol, file and name a generation
holds; ``stored_rows`` reads every record through the reader. Two generations of the same repositories at
the same commits must agree on both once what names the generation itself (its name, id, build time, the
seconds an analyzer took) is set aside.
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from server.errors import ToolError
from server.tools import READ_TOOLS
from snapshot_format.reader import Generation
from tests.helpers import REPO_ROOT, kivgraph_env

# Fields that say which generation answered, when, or how long a step took: equal content differs there.
_VOLATILE = frozenset(
    {
        "snapshot_id",
        "built_at",
        "built_at_ns",
        "generation_id",
        "seconds",
        "age_seconds",
        "digest",
        "snapshot_age_ms",
        "snapshot_built_at",
    }
)
_GENERATION = re.compile(r"g\d{6}\.v\d+")
_CACHED = " (cached analyzer run)"


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<volatile>" if k in _VOLATILE else _norm(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, str):
        return _GENERATION.sub("<generation>", value).replace(_CACHED, "")
    return value


def stored_rows(gen: Generation) -> dict[str, Any]:
    """Every record the generation holds, through the reader, with the volatile fields set aside."""
    out: dict[str, Any] = {
        "counts": msgspec.to_builtins(gen.counts()),
        "breakdown": msgspec.to_builtins(gen.breakdown()),
    }
    for repo in gen.repositories():
        r = msgspec.structs.asdict(repo)
        r["analyses"] = [msgspec.structs.asdict(a) for a in repo.analyses]
        out[f"repository {repo.name}"] = _norm(r)
        for f in gen.files(repo.name):
            out[f"file {repo.name}:{f.path}"] = msgspec.to_builtins(f)
            for s in gen.declarations(repo.name, f.path):
                out[f"symbol {s.key}"] = msgspec.to_builtins(s)
                out[f"out {s.key}"] = sorted(msgspec.to_builtins(list(gen.edges_out(s.key))))
                out[f"in {s.key}"] = sorted(msgspec.to_builtins(list(gen.edges_in(s.key))))
        out[f"unresolved {repo.name}"] = _norm(msgspec.to_builtins(list(gen.unresolved_in(repo.name))))
    out["lexicon"] = [msgspec.to_builtins(d) for _i, d in gen.lexicon_documents()]
    return out


def _call(gen: Generation, tool: str, args: dict[str, Any]) -> Any:
    try:
        return _norm(READ_TOOLS[tool](gen, args))
    except ToolError as exc:
        return f"error: {exc}"


def tool_answers(gen: Generation, queries: Iterable[str] = ()) -> dict[str, Any]:
    """Every read tool's answer about every symbol (by stable key), file and bare name of ``gen``."""
    out: dict[str, Any] = {
        "graph_status": _call(gen, "graph_status", {}),
        "list_repositories": _call(gen, "list_repositories", {}),
    }
    names: set[str] = set()
    for repo in gen.repositories():
        for f in gen.files(repo.name):
            out[f"get_file_outline {repo.name}:{f.path}"] = _call(
                gen, "get_file_outline", {"repository": repo.name, "path": f.path, "view": "full"}
            )
            for s in gen.declarations(repo.name, f.path):
                names.add(s.name)
                sel = {"stable_key": s.key}
                for tool in ("get_symbol", "get_blast_radius", "trace_dependencies", "find_cross_repo_consumers"):
                    out[f"{tool} {s.key}"] = _call(gen, tool, {**sel, "view": "full"} if tool != "get_symbol" else sel)
                for direction in ("incoming", "outgoing"):
                    out[f"find_references {direction} {s.key}"] = _call(
                        gen, "find_references", {**sel, "direction": direction, "view": "full"}
                    )
                out[f"get_source {s.key}"] = _call(gen, "get_source", {"symbols": [sel]})
    for name in sorted(names):
        out[f"find_symbol {name}"] = _call(gen, "find_symbol", {"name": name, "view": "full"})
    for query in (*queries, *sorted(names)[:20]):
        out[f"find_by_intent {query}"] = _call(gen, "find_by_intent", {"query": query})
    return out


def differences(a: dict[str, Any], b: dict[str, Any], limit: int = 10) -> list[str]:
    """The first keys whose values differ (or that only one side has), for an assertion message."""
    out = []
    for key in sorted(a.keys() | b.keys()):
        if a.get(key) != b.get(key):
            out.append(f"{key}:\n  index:   {str(a.get(key))[:600]}\n  bundles: {str(b.get(key))[:600]}")
            if len(out) >= limit:
                break
    return out


# --- the jobs -------------------------------------------------------------------------------------------


def git_commit(root: Path) -> str:
    """Make ``root`` a git checkout with one commit of everything in it; returns the commit."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@example.com"
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fixture"]):
        subprocess.run(["git", *cmd], cwd=root, check=True, capture_output=True, env={**_base_env(), **env})
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def kivgraph(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``kivgraph ARGS`` as a child process in its own home, with ``env`` on top of this one's environment."""
    return subprocess.run(
        [sys.executable, "-m", "kivgraph_cli", *args],
        env=kivgraph_env(home, **(env or {})),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO_ROOT,
    )


def bundle_job(
    home: Path, name: str, root: Path, languages: str, out: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """One matrix job: register only ``name`` in a private home, build its bundle at ``out``."""
    init = kivgraph(home, "init", "--repository", f"{name}={root}", "--languages", languages, env=env)
    assert init.returncode == 0, init.stderr
    return kivgraph(home, "index", "--repository", name, "--bundle", str(out), env=env)


def write_wheel(source: Path, name: str, version: str, dest: Path) -> Path:
    """A pure-Python wheel of the packages under ``source`` (each ``*.py`` file at its relative path)."""
    info = f"{name}-{version}.dist-info"
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*.py"))}
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: kivgraph-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    tops = sorted({k.split("/")[0].removesuffix(".py") for k in files if not k.startswith(info)})
    files[f"{info}/top_level.txt"] = ("\n".join(tops) + "\n").encode()
    record = [
        f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}"
        for k, v in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return wheel
