"""The kivgraph command: help everywhere, init, version, and watch mode fed scripted changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.config import load
from indexer.watch import owned_by, relevant, watch_and_index
from kivgraph_cli.main import COMMANDS, cli
from snapshot_format.layout import resolve_layout
from snapshot_format.reader import open_current
from tests.helpers import REPO_ROOT, kept_signal_handlers, run_kivgraph, write_repo


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_and_is_documented_in_the_readme(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    readme = (REPO_ROOT / "README.md").read_text()
    assert f"kivgraph {command}" in readme


def test_top_level_help_lists_every_command_and_the_exit_codes() -> None:
    out = CliRunner().invoke(cli, ["--help"]).output
    for command in COMMANDS:
        assert command in out
    assert "Exit codes" in out


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["frobnicate"])
    assert result.exit_code == 2


@pytest.mark.e2e
def test_init_detects_languages_names_repositories_and_keeps_existing_entries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    py = write_repo(tmp_path / "my repo", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    other = write_repo(tmp_path / "other", {"m.py": "z = 3\n"})
    first = run_kivgraph(home, "init", str(py))
    assert first.returncode == 0, first.stderr
    assert "config: created" in first.stdout
    second = run_kivgraph(home, "init", "--repository", f"lib={other}", "--languages", "py")
    assert "config: updated" in second.stdout
    loaded = load(resolve_layout(environ={"KIVGRAPH_HOME": str(home)}).config_path)
    assert [(r.name, r.languages) for r in loaded.repositories] == [("my-repo", ("python",)), ("lib", ("python",))]
    bad = run_kivgraph(home, "init", "--repository", "nameonly")
    assert bad.returncode == 2 and "NAME=PATH" in bad.stderr
    unknown = run_kivgraph(home, "init", str(py), "--languages", "cobol")
    assert unknown.returncode == 2 and "cobol" in unknown.stderr


@pytest.mark.e2e
def test_index_without_a_config_says_how_to_register_repositories(tmp_path: Path) -> None:
    result = run_kivgraph(tmp_path / "home", "index", "--json")
    assert result.returncode == 1
    assert "kivgraph init" in json.loads(result.stdout.splitlines()[-1])["result"]["error"]


@pytest.mark.e2e
def test_status_on_an_empty_state_is_not_an_error(tmp_path: Path) -> None:
    result = run_kivgraph(tmp_path / "home", "status")
    assert result.returncode == 0 and "graph: empty" in result.stdout


def test_version_reports_the_formats() -> None:
    info = json.loads(CliRunner().invoke(cli, ["version", "--json"]).output)
    assert info["format_version"] >= 1 and info["feature_version"] >= 1


@pytest.mark.e2e
def test_watch_reindexes_once_per_relevant_batch_of_scripted_changes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    batches = [
        {(1, str(repo / "a.py"))},  # a source file: re-index
        {(2, str(repo / "notes.txt"))},  # not a source file: ignored
        {(1, str(repo / ".git" / "index.py"))},  # git internals: ignored
        {(1, str(repo / ".gitignore")), (2, str(repo / "b.py"))},  # one batch, one re-index
    ]
    calls: list[int] = []
    watch_and_index(layout, lambda: calls.append(1) or 0, changes=batches)
    assert len(calls) == 2


def test_a_real_watch_catches_up_once_its_watcher_is_live_before_the_first_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit saved while the first index read the tree is not lost: one run right after the watcher starts."""
    import watchfiles

    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    layout.config_path.parent.mkdir(parents=True)
    layout.config_path.write_text(
        f'version = 1\n\n[[repository]]\nname = "r"\npath = "{repo}"\nlanguages = ["python"]\n'
    )
    events: list[str] = []

    def fake_watch(*_roots: object, **options: object):
        if "stop_event" in options:  # the listener for edits during a run (indexer.supersede): hears nothing
            return
        assert options["yield_on_timeout"] is True
        events.append("watcher live")
        yield set()  # the first wake-up: nothing changed yet
        yield {(2, str(repo / "a.py"))}

    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    watch_and_index(layout, lambda: events.append("index") or 0, watching=lambda n: events.append(f"watching {n}"))
    assert events == ["watcher live", "watching 1", "index", "index"]


def test_relevance_ignores_caches_and_foreign_extensions() -> None:
    exts = frozenset({".py"})
    assert relevant({(1, "/r/pkg/mod.py")}, exts)
    assert not relevant({(1, "/r/pkg/__pycache__/mod.py")}, exts)
    assert not relevant({(1, "/r/pkg/mod.go")}, exts)


def test_under_repository_only_the_named_repositories_files_are_relevant_and_a_nested_one_owns_its_own() -> None:
    roots = {"outer": "/w/outer", "inner": "/w/outer/vendor/inner", "other": "/w/other"}
    owned = owned_by(roots, frozenset({"outer"}))
    exts = frozenset({".py"})
    assert relevant({(2, "/w/outer/pkg/a.py")}, exts, owned)
    assert relevant({(2, "/w/outer/.gitignore")}, exts, owned)
    assert not relevant({(2, "/w/outer/vendor/inner/b.py")}, exts, owned)  # inner's own file
    assert not relevant({(2, "/w/other/c.py")}, exts, owned)
    assert not relevant({(2, "/w/outer-copy/d.py")}, exts, owned)  # a longer name is no child
    assert relevant({(2, "/w/other/c.py"), (2, "/w/outer/e.py")}, exts, owned)


def _two_repositories(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A KIVGRAPH_HOME registering ``a`` and ``b`` (python), and their roots."""
    home = tmp_path / "home"
    a = write_repo(tmp_path / "a", {"a.py": "def a_old():\n    return 1\n"})
    b = write_repo(tmp_path / "b", {"b.py": "def b_old():\n    return 2\n"})
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    layout.config_path.parent.mkdir(parents=True)
    layout.config_path.write_text(
        "version = 1\n"
        + "".join(f'\n[[repository]]\nname = "{r.name}"\npath = "{r}"\nlanguages = ["python"]\n' for r in (a, b))
    )
    return home, a, b


def test_watch_with_repository_runs_only_for_changes_to_the_named_repositories(tmp_path: Path) -> None:
    home, a, b = _two_repositories(tmp_path)
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    batches = [
        {(2, str(b / "b.py"))},  # b is not watched: no run
        {(2, str(a / "a.py"))},
        {(1, str(b / "new.py")), (1, str(a / "new.py"))},  # one of a's files among them: one run
    ]
    calls: list[int] = []
    watch_and_index(layout, lambda: calls.append(1) or 0, changes=batches, only=frozenset({"a"}))
    assert len(calls) == 2


def test_a_real_watch_with_repository_watches_only_the_named_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    home, a, _b = _two_repositories(tmp_path)
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    watched: list[tuple[object, ...]] = []

    def fake_watch(*roots: object, **options: object):
        watched.append(roots)
        if "stop_event" not in options:
            yield set()

    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    announced: list[int] = []
    watch_and_index(layout, lambda: 0, watching=announced.append, only=frozenset({"a"}))
    assert watched == [(str(a),), (str(a),)]  # the watcher and the listener for edits during a run
    assert announced == [1]


@pytest.mark.e2e
def test_watch_with_an_unknown_repository_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    home, _a, _b = _two_repositories(tmp_path)
    result = run_kivgraph(home, "index", "--watch", "--repository", "a", "--repository", "nope")
    assert result.returncode == 2
    assert "--repository nope: not registered" in result.stderr and "registered: a, b" in result.stderr


def test_watch_with_repository_publishes_the_named_ones_and_keeps_the_others_as_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    home, a, b = _two_repositories(tmp_path)
    monkeypatch.setenv("KIVGRAPH_HOME", str(home))
    monkeypatch.setenv("KIVGRAPH_SCIP_PYTHON", "/nonexistent/scip-python")
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(home)})
    runner = CliRunner()
    with kept_signal_handlers():
        assert runner.invoke(cli, ["index"]).exit_code == 0
    with open_current(layout) as gen:
        served_b = [(f.path, f.content_hash) for f in gen.files("b")]

    def fake_watch(*_roots: object, **options: object):
        if "stop_event" in options:
            return
        yield set()  # live: the catch-up run
        (b / "b.py").write_text("def b_new():\n    return 2\n")
        yield {(2, str(b / "b.py"))}  # b is carried over: no run
        (a / "a.py").write_text("def a_new():\n    return 1\n")
        yield {(2, str(a / "a.py"))}

    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    with kept_signal_handlers():
        watched = runner.invoke(cli, ["index", "--watch", "--repository", "a", "--json"])
    assert watched.exit_code == 0, watched.output
    results = [json.loads(line)["result"] for line in watched.stdout.splitlines() if '"event":"result"' in line]
    assert len(results) == 3  # the first run, the catch-up, a's edit: none for b's
    assert all(r["passed"] for r in results)
    with open_current(layout) as gen:
        assert gen.symbols_by_name("a_new") and not gen.symbols_by_name("a_old")
        assert gen.symbols_by_name("b_old") and not gen.symbols_by_name("b_new")
        assert [(f.path, f.content_hash) for f in gen.files("b")] == served_b


@pytest.mark.e2e
def test_doctor_on_a_fresh_install_warns_that_nothing_is_registered_but_passes(tmp_path: Path) -> None:
    result = run_kivgraph(tmp_path / "home", "doctor")
    assert result.returncode == 0, result.stdout
    assert "config: WARN" in result.stdout and "kivgraph init" in result.stdout
    assert "doctor: PASS" in result.stdout


@pytest.mark.e2e
def test_index_full_reads_nothing_from_the_fact_cache_and_a_later_index_hits_it_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = write_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n", "b.py": "from a import f\n"})
    assert run_kivgraph(home, "init", str(repo), "--languages", "python").returncode == 0

    def cache_of(*args: str) -> dict[str, int]:
        result = run_kivgraph(home, "index", "--json", *args, KIVGRAPH_SCIP_PYTHON="/nonexistent")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])["result"]["cache"]

    assert cache_of()["writes"] > 0
    full = cache_of("--full")
    assert full["mode"] == "refresh" and full["hits"] == 0 and full["writes"] > 0
    assert cache_of()["hits"] == 2
    both = run_kivgraph(home, "index", "--full", "--fact-cache", "off")
    assert both.returncode == 2 and "--full" in both.stderr
