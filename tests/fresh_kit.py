"""In-process index runs over a private state directory, and a generation's answers in comparable form.

``Workspace`` registers repositories in its own kivgraph.toml and indexes them through the real pipeline
(``run_index``) in this process: faster than spawning ``kivgraph index``, and the publications of a run
are seen one by one. ``answers`` reads everything a generation answers with, minus what differs between
two equal builds (timings, "cached" notes), so an incremental generation can be compared with a full
rebuild of the same tree.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest

from indexer.config import load
from indexer.run import IndexReport, Stage, run_index
from snapshot_format.layout import StateLayout, list_generations, resolve_layout
from snapshot_format.reader import Generation, open_current
from tests.helpers import copy_fixture


@dataclass
class Run:
    report: IndexReport
    stages: list[Stage] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]


class Workspace:
    """A kivgraph.toml and a state directory under ``root``, and the repositories registered in it."""

    def __init__(self, root: Path, *, fact_cache: str = "on") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.layout: StateLayout = resolve_layout(str(root / "kivgraph.toml"), str(root / "state"))
        self.fact_cache = fact_cache
        self.repositories: list[tuple[str, Path, tuple[str, ...]]] = []

    def register(self, name: str, path: Path, *languages: str) -> None:
        self.repositories.append((name, path, languages))
        body = [f'version = 1\n\n[indexing]\nfact_cache = "{self.fact_cache}"\n']
        for n, p, langs in self.repositories:
            body.append(
                f'\n[[repository]]\nname = "{n}"\npath = "{p}"\nlanguages = {list(langs)!r}\n'.replace("'", '"')
            )
        self.layout.config_path.write_text("".join(body))

    def index(self, mode: str | None = None) -> Run:
        run = Run(IndexReport(passed=False))
        report, _result = run_index(
            load(self.layout.config_path), self.layout, fact_cache_mode=mode, on_published=run.stages.append
        )
        run.report = report
        return run

    def generations(self) -> list[str]:
        return [path.name for _gid, _fmt, path in list_generations(self.layout)]

    @contextmanager
    def current(self) -> Iterator[Generation]:
        with open_current(self.layout) as gen:
            yield gen

    def generation(self, name: str) -> Generation:
        return Generation(self.layout.generations_dir / name)


def indexed_copy(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, fixture: str, name: str, *languages: str
) -> tuple[Workspace, Path]:
    """A copy of the fixture repository ``fixture`` registered as ``name``, indexed once (a whole exact run)."""
    monkeypatch.setenv("KIVGRAPH_HOME", str(tmp / "home"))
    ws = Workspace(tmp / "home")
    repo = copy_fixture(fixture, tmp)
    ws.register(name, repo, *languages)
    assert ws.index().names == ["exact"]
    return ws, repo


def pending(gen: Generation, repository: str) -> set[str]:
    """The files the generation leaves pending exact analysis."""
    return {f.path for f in gen.files(repository) if f.analysis == "pending"}


def assert_like_a_full_rebuild(ws: Workspace, tmp: Path) -> None:
    """CURRENT has nothing pending and answers as a from-scratch index of the same tree does."""
    with ws.current() as gen:
        got = answers(gen)
        assert not pending(gen, ws.repositories[0][0])
    assert not differences(got, full_rebuild(tmp, ws.repositories))


def full_rebuild(
    tmp: Path, repositories: list[tuple[str, Path, tuple[str, ...]]], *, exclude: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    """The answers of a from-scratch index of the same repositories (own state, no fact cache); ``exclude``:
    repository -> its ``exclude`` patterns."""
    scratch = tmp / "full-rebuild"
    shutil.rmtree(scratch, ignore_errors=True)
    ws = Workspace(scratch, fact_cache="off")
    for name, path, languages in repositories:
        ws.register(name, path, *languages)
    config = ws.layout.config_path.read_text()
    for name, patterns in (exclude or {}).items():
        path = next(p for n, p, _l in repositories if n == name)
        marker = f'path = "{path}"\n'
        config = config.replace(marker, marker + f"exclude = {list(patterns)!r}\n".replace("'", '"'))
    ws.layout.config_path.write_text(config)
    run = ws.index()
    assert run.names == ["exact"], run.names
    with ws.current() as gen:
        return answers(gen)


_CACHED = re.compile(r" \(cached analyzer run\)| \(cached: the inputs have not changed since\)")


def answers(gen: Generation) -> dict[str, Any]:
    """Everything the generation answers with, in sorted comparable form."""
    out: dict[str, Any] = {
        "symbols": [],
        "edges": [],
        "unresolved": [],
        "files": [],
        "repositories": [],
        "package_dependencies": [],
    }
    for repo in gen.repositories():
        analyses = sorted(
            (a.language, a.mode, a.analyzer, a.analyzer_version, a.files, _CACHED.sub("", a.reason))
            for a in repo.analyses
        )
        out["repositories"].append(
            (
                repo.name,
                repo.root,
                repo.languages,
                repo.commit,
                repo.branch,
                repo.dirty,
                repo.files,
                repo.symbols,
                analyses,
            )
        )
        out["files"] += [msgspec.structs.astuple(f) for f in gen.files(repo.name)]
        for sym in gen.declarations(repo.name, "", directory=True):
            out["symbols"].append(msgspec.structs.astuple(sym))
            out["edges"] += [msgspec.structs.astuple(e) for e in gen.edges_out(sym.key)]
        out["unresolved"] += [msgspec.structs.astuple(u) for u in gen.unresolved_in(repo.name)]
        out["package_dependencies"] += [msgspec.structs.astuple(d) for d in gen.package_dependencies(repo.name)]
    counts = gen.counts()
    out["counts"] = msgspec.structs.astuple(counts)
    for key in out:
        if isinstance(out[key], list):
            out[key] = sorted(out[key], key=repr)
    return out


def differences(got: dict[str, Any], want: dict[str, Any], limit: int = 8) -> list[str]:
    """What differs between two ``answers``, readable in an assertion message."""
    lines: list[str] = []
    for key in want:
        a, b = got.get(key), want[key]
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            extra = [x for x in a if x not in b][:limit]
            missing = [x for x in b if x not in a][:limit]
            lines.append(f"{key}: {len(a)} vs {len(b)}; extra {extra}; missing {missing}")
        else:
            lines.append(f"{key}: {a} vs {b}")
    return lines
