"""index_project without MCP types: argument validation, the consent text, and the indexer child process.

Serve never indexes in-process: it runs ``kivgraph index --json --register
<projects>`` as a child and reads its NDJSON stdout (progress events, then one
result). The child upserts the projects into the registry, publishes a
generation, and restores the previous registry itself when indexing fails.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from server.args import Args, check_string
from server.declarations import IndexProject, accepted
from server.declarations import Project as ProjectEntry
from server.errors import INDEXING_FAILED, ToolError, invalid
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.layout import StateLayout
from snapshot_format.names import repository_name_problem

PROJECT_FIELDS = accepted(ProjectEntry)
STDERR_TAIL_BYTES = 8192
MAX_LINE_BYTES = 4 << 20
EXIT_LOCKED = 3
DEFAULT_TIMEOUT_SECONDS = 3600.0
TERMINATE_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class Project:
    """A repository to register and index: name, absolute path, languages."""

    name: str
    path: str
    languages: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "languages": list(self.languages)}


@dataclass(frozen=True)
class IndexRequest:
    projects: tuple[Project, ...]
    confirmed: bool | None


def names_asked(arguments: object) -> list[str]:
    """The project names an index_project call asked for, read leniently (for the audit of a refused call)."""
    if not isinstance(arguments, dict):
        return []
    listed = arguments.get("projects")
    entries: list[object] = listed if isinstance(listed, list) else [arguments]
    names = [e.get("name") for e in entries if isinstance(e, dict)]
    return [n[:200] for n in names if isinstance(n, str)][:50]


# Trees that are never a project: the kernel's virtual filesystems (reading /proc/*/mem or a device can
# hang or never end).
_SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))


def _path_problem(path: Path, state_dir: Path | None) -> str:
    """Why ``path`` can never be indexed, or ""."""
    real = path.resolve()
    if real == Path(real.anchor):
        return "is the filesystem root"
    for tree in _SYSTEM_TREES:
        if real == tree or tree in real.parents:
            return f"is inside {tree}, a virtual filesystem"
    if state_dir is not None:
        state = state_dir.resolve()
        if real == state or state in real.parents:
            return f"is kivgraph's own state directory ({state})"
    return ""


def _project(args: Args, cwd: Path, state_dir: Path | None) -> Project:
    name = args.string("name", required=True) or ""
    problem = repository_name_problem(name)
    if problem:  # the indexer's own rule, checked before the user is asked anything
        raise invalid(f"{args.name('name')}: {problem}")
    raw_path = args.string("path", required=True) or ""
    path = Path(raw_path).expanduser()
    if not path.is_absolute():
        path = cwd / path
    path = Path(os.path.normpath(path))
    if not path.is_dir():
        raise invalid(f"{args.name('path')} {raw_path!r} is not an existing directory (resolved to {path})")
    problem = _path_problem(path, state_dir)
    if problem:
        raise invalid(f"{args.name('path')} {raw_path!r} {problem}: it cannot be indexed")
    raw_languages = args.raw("languages")
    if not isinstance(raw_languages, list) or not raw_languages:
        raise invalid(f"{args.name('languages')} must be a non-empty array of language names")
    languages: list[str] = []
    for i, item in enumerate(raw_languages):
        field_name = f"{args.name('languages')}[{i}]"
        if not isinstance(item, str):
            raise invalid(f"{field_name} must be a string")
        language = item.strip().lower()
        check_string(language, field_name, allow_empty=False)
        if language not in LANGUAGES:
            raise invalid(f"{field_name} {item!r} is not supported; accepted: {', '.join(LANGUAGES)}")
        if language in languages:
            raise invalid(f"{field_name} {item!r} is listed twice")
        languages.append(language)
    return Project(name=name, path=str(path), languages=tuple(languages))


def parse_index_request(arguments: object, cwd: Path, state_dir: Path | None = None) -> IndexRequest:
    """Validate index_project's arguments before anything is written (docs/surface.md §9.1)."""
    args = Args(arguments, IndexProject)
    batch = args.raw("projects")
    single = [f for f in PROJECT_FIELDS if args.raw(f) is not None]
    confirmed = args.optional_boolean("confirmed")
    if batch is not None and single:
        raise invalid(f"pass either projects or name, path and languages, not both (got projects and {single[0]})")
    if batch is None and not single:
        raise invalid("pass projects (a batch of {name, path, languages}) or name, path and languages")
    if batch is not None:
        entries = args.object_list("projects") or []
        if not entries:
            raise invalid("projects must hold at least one {name, path, languages}")
        projects = []
        for i, entry in enumerate(entries):
            nested = Args(entry, ProjectEntry, where=f"projects[{i}]")
            missing = [f for f in PROJECT_FIELDS if nested.raw(f) is None]
            if missing:
                raise invalid(f"projects[{i}] needs name, path and languages; {missing[0]} is missing")
            projects.append(_project(nested, cwd, state_dir))
    else:
        projects = [_project(args, cwd, state_dir)]
    seen: set[str] = set()
    for p in projects:
        if p.name in seen:
            raise invalid(f"project {p.name!r} is listed twice")
        seen.add(p.name)
    return IndexRequest(projects=tuple(projects), confirmed=confirmed)


def consent_message(request: IndexRequest) -> str:
    """What the user is asked to allow: every project named, and what will be written."""
    effects = "kivgraph will add it to its registry and publish a new graph generation; the source files are only read"
    if len(request.projects) == 1:
        p = request.projects[0]
        return f"Allow kivgraph to register and index the project {p.name!r} at {p.path}? {effects}."
    names = ", ".join(repr(p.name) for p in request.projects)
    return (
        f"Allow kivgraph to register and index {len(request.projects)} projects: {names}? "
        f"{effects.replace('it', 'them', 1)}."
    )


CONSENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirmed": {"type": "boolean", "title": "Allow indexing"}},
    "required": ["confirmed"],
}


def index_argv(base: list[str], layout: StateLayout, projects: tuple[Project, ...]) -> list[str]:
    """The child's command line: ``index --json --register`` plus this server's config and state."""
    return [
        *base,
        "--json",
        "--register",
        json.dumps([p.as_json() for p in projects]),
        "--config",
        str(layout.config_path),
        "--state-dir",
        str(layout.state_dir),
    ]


def default_indexer() -> list[str]:
    """``kivgraph index`` run by this interpreter."""
    return [sys.executable, "-m", "kivgraph_cli", "index"]


@dataclass
class IndexOutcome:
    """What the child reported: its result payload, or why it failed."""

    returncode: int
    result: dict[str, Any] | None = None
    stderr_tail: str = ""
    progress_events: int = 0
    unknown_events: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and self.result is not None and self.result.get("passed") is True

    def cause(self) -> str:
        """The observed cause of a failure, for ``INDEXING_FAILED: project indexing failed: <cause>``."""
        error = (self.result or {}).get("error")
        if isinstance(error, str) and error.strip():
            return error.strip()
        tail = self.stderr_tail.strip()
        if tail:
            lines = tail.splitlines()[-12:]
            return f"exit code {self.returncode}: " + " | ".join(line.strip() for line in lines if line.strip())
        if self.returncode == EXIT_LOCKED:
            return "another kivgraph index holds the publication lock; retry when it finishes"
        if self.returncode == 0:
            return "the indexer exited without reporting a result"
        return f"the indexer exited with code {self.returncode} and no message"


ProgressFn = Callable[[dict[str, Any]], Awaitable[None]]


async def run_indexer(
    argv: list[str], *, on_progress: ProgressFn, timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> IndexOutcome:
    """Run the indexer child to completion (bounded by ``timeout``), forwarding its progress events."""
    outcome = IndexOutcome(returncode=-1)
    stderr_tail = bytearray()
    process = await anyio.open_process(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain_stderr, process, stderr_tail)
                await _read_events(process, outcome, on_progress)
            outcome.returncode = await process.wait()
    except TimeoutError:
        outcome.stderr_tail = bytes(stderr_tail).decode("utf-8", "replace")
        raise ToolError(
            INDEXING_FAILED,
            f"project indexing failed: the indexer ran longer than {timeout:.0f} seconds and was stopped",
        ) from None
    finally:
        if process.returncode is None:
            with anyio.CancelScope(shield=True):
                await _stop(process)
    outcome.stderr_tail = bytes(stderr_tail).decode("utf-8", "replace")
    return outcome


async def _drain_stderr(process: anyio.abc.Process, tail: bytearray) -> None:
    assert process.stderr is not None
    async for chunk in process.stderr:
        tail.extend(chunk)
        if len(tail) > STDERR_TAIL_BYTES:
            del tail[: len(tail) - STDERR_TAIL_BYTES]


async def _read_events(process: anyio.abc.Process, outcome: IndexOutcome, on_progress: ProgressFn) -> None:
    assert process.stdout is not None
    pending = bytearray()
    async for chunk in process.stdout:
        pending.extend(chunk)
        while True:
            newline = pending.find(b"\n")
            if newline < 0:
                if len(pending) > MAX_LINE_BYTES:
                    pending.clear()  # a runaway line: drop it rather than grow without bound
                break
            line = bytes(pending[:newline])
            del pending[: newline + 1]
            await _event(line, outcome, on_progress)
    if pending.strip():
        await _event(bytes(pending), outcome, on_progress)


async def _event(line: bytes, outcome: IndexOutcome, on_progress: ProgressFn) -> None:
    try:
        event = json.loads(line)
    except ValueError:
        outcome.unknown_events.append(line[:200].decode("utf-8", "replace"))
        return
    if not isinstance(event, dict):
        return
    kind = event.get("event")
    if kind == "progress" and isinstance(event.get("progress"), dict):
        outcome.progress_events += 1
        await on_progress(event["progress"])
    elif kind == "published" and isinstance(event.get("published"), dict):
        # a generation published on the way (the CANDIDATE one before the exact pass): progress too
        published = event["published"]
        outcome.progress_events += 1
        await on_progress(
            {
                "phase": "published",
                "repository": "*",
                "detail": f"{published.get('stage', '')} generation {published.get('generation', '')}",
            }
        )
    elif kind == "result" and isinstance(event.get("result"), dict):
        outcome.result = event["result"]
    # unknown event kinds are ignored by contract


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM the child's process group, then SIGKILL after a grace period."""
    for sig, grace in ((signal.SIGTERM, TERMINATE_GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            process.send_signal(sig)
        with anyio.move_on_after(grace):
            await process.wait()
            return
