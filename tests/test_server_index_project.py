"""index_project: validation before anything is written, consent, the indexer child, progress and failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest

from server.app import KivgraphApp, ServeOptions
from server.errors import INVALID_ARGUMENT, ToolError
from server.indexing import consent_message, parse_index_request
from snapshot_format.layout import StateLayout
from tests.server_fixtures import FAKE_ARGV_ENV, FAKE_MODE_ENV, fake_indexer_command
from tests.test_server_mcp import READ_TOOLS, connect, fails, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def layout(tmp_path: Path) -> StateLayout:
    return StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def make_app(layout: StateLayout, cwd: Path | None = None) -> KivgraphApp:
    return KivgraphApp(
        layout, ServeOptions(poll_interval=3600, indexer=fake_indexer_command(), cwd=cwd, index_timeout=120)
    )


# --- validation (no child process is started) --------------------------------------------------------------------


def invalid(arguments: dict[str, Any], cwd: Path) -> str:
    with pytest.raises(ToolError) as caught:
        parse_index_request(arguments, cwd)
    assert caught.value.code == INVALID_ARGUMENT
    return caught.value.message


def test_exactly_one_of_the_batch_and_the_single_form_is_accepted(project: Path) -> None:
    single = {"name": "p", "path": str(project), "languages": ["python"]}
    assert invalid({**single, "projects": [single]}, project).startswith("pass either projects or name")
    assert invalid({"confirmed": True}, project).startswith("pass projects")
    assert invalid({"projects": []}, project).startswith("projects must hold at least one")
    missing = invalid({"projects": [{"name": "p", "path": str(project)}]}, project)
    assert missing == "projects[0] needs name, path and languages; languages is missing"
    extra = invalid({"projects": [{**single, "exclude": []}]}, project)
    assert extra.startswith("unknown argument projects[0].exclude")


@pytest.mark.parametrize("name", [".", "..", "a/b", "a\\b", "rust:std", " p"])
def test_a_bad_project_name_is_rejected(project: Path, name: str) -> None:
    message = invalid({"name": name, "path": str(project), "languages": ["python"]}, project)
    assert message.startswith("name")


def test_a_path_must_be_an_existing_directory_and_resolves_against_the_working_directory(project: Path) -> None:
    assert "is not an existing directory" in invalid({"name": "p", "path": "missing", "languages": ["go"]}, project)
    request = parse_index_request({"name": "p", "path": ".", "languages": [" Python", "GO"]}, project)
    assert request.projects[0].path == str(project)
    assert request.projects[0].languages == ("python", "go")
    home = parse_index_request({"name": "p", "path": "~", "languages": ["go"]}, project)
    assert home.projects[0].path == str(Path.home())


@pytest.mark.parametrize(
    ("languages", "fragment"),
    [
        ([], "non-empty array"),
        ("python", "non-empty array"),
        (["cobol"], "is not supported"),
        (["python", "Python"], "listed twice"),
        ([3], "must be a string"),
    ],
)
def test_languages_are_validated(project: Path, languages: object, fragment: str) -> None:
    assert fragment in invalid({"name": "p", "path": str(project), "languages": languages}, project)


def test_a_batch_cannot_name_a_project_twice(project: Path) -> None:
    entry = {"name": "p", "path": str(project), "languages": ["python"]}
    assert invalid({"projects": [entry, entry]}, project) == "project 'p' is listed twice"


def test_the_consent_message_names_every_project_of_a_batch(project: Path) -> None:
    entries = [{"name": n, "path": str(project), "languages": ["python"]} for n in ("one", "two", "three")]
    message = consent_message(parse_index_request({"projects": entries}, project))
    assert "3 projects" in message and all(repr(n) in message for n in ("one", "two", "three"))
    single = consent_message(parse_index_request(entries[0], project))
    assert "'one'" in single and str(project) in single


# --- consent --------------------------------------------------------------------------------------------------------------


async def test_without_elicitation_the_call_needs_confirmed_true(layout: StateLayout, project: Path) -> None:
    async with connect(make_app(layout)) as (client, _inbox):
        message = await fails(
            client, "index_project", "PERMISSION_REQUIRED", name="p", path=str(project), languages=["python"]
        )
        assert message == "user approval is required; confirm the operation before setting confirmed=true"
        await fails(
            client,
            "index_project",
            "PERMISSION_REQUIRED",
            name="p",
            path=str(project),
            languages=["python"],
            confirmed=False,
        )
    assert not layout.state_dir.exists()  # nothing ran, nothing was written


def _elicitation(action: str, confirmed: object = True, asked: list[str] | None = None) -> Any:
    async def answer(_ctx: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        content = None if action != "accept" else {"confirmed": confirmed}
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


@pytest.mark.parametrize(("action", "confirmed"), [("decline", True), ("cancel", True), ("accept", False)])
async def test_an_elicitation_not_accepted_with_confirmed_true_is_permission_denied(
    layout: StateLayout, project: Path, action: str, confirmed: bool
) -> None:
    async with connect(make_app(layout), elicitation_callback=_elicitation(action, confirmed)) as (client, _inbox):
        message = await fails(
            client,
            "index_project",
            "PERMISSION_DENIED",
            name="p",
            path=str(project),
            languages=["python"],
            confirmed=True,
        )
        assert message == "project indexing was not approved"


async def test_an_elicitation_that_errors_is_permission_required(layout: StateLayout, project: Path) -> None:
    async def broken(_ctx: object, _params: object) -> types.ErrorData:
        return types.ErrorData(code=-32603, message="the client cannot show forms")

    async with connect(make_app(layout), elicitation_callback=broken) as (client, _inbox):
        message = await fails(
            client, "index_project", "PERMISSION_REQUIRED", name="p", path=str(project), languages=["python"]
        )
        assert "consent request to the user failed" in message


# --- the indexer child ------------------------------------------------------------------------------------------------------


async def test_an_accepted_index_publishes_announces_the_tools_and_reports_progress(
    layout: StateLayout, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = tmp_path / "argv.json"
    monkeypatch.setenv(FAKE_MODE_ENV, "publish")
    monkeypatch.setenv(FAKE_ARGV_ENV, str(argv_file))
    asked: list[str] = []
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, _total: float | None, message: str | None) -> None:
        progress.append((value, message))

    app = make_app(layout)
    async with connect(app, elicitation_callback=_elicitation("accept", True, asked)) as (client, inbox):
        assert [t.name for t in (await client.list_tools()).tools] == ["index_project"]
        result = await client.call_tool(
            "index_project",
            {"name": "alpha", "path": str(project), "languages": ["python"]},
            progress_callback=on_progress,
        )
        payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert not result.is_error, payload
        assert payload["generation_id"] == payload["snapshot_id"] == 1
        assert payload["project"] == {"name": "alpha", "path": str(project), "languages": ["python"]}
        assert payload["projects"] == [payload["project"]]
        await inbox.wait_for("notifications/tools/list_changed")
        assert [t.name for t in (await client.list_tools()).tools] == [*READ_TOOLS, "index_project"]
        assert (await ok(client, "find_symbol", name="area"))["total"] == 3
    assert len(asked) == 1 and "'alpha'" in asked[0]
    assert [value for value, _ in progress] == [1.0, 2.0]
    assert progress[0][1] == "discover alpha 3 files" and progress[1][1] == "publish alpha"
    argv = json.loads(argv_file.read_text())
    assert argv[:3] == ["--json", "--register", json.dumps([payload["project"]])]
    assert argv[3:] == ["--config", str(layout.config_path), "--state-dir", str(layout.state_dir)]


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("fail", "alpha: analyzer crashed"),
        ("stderr-only", "exit code 1: Traceback (most recent call last): | RuntimeError: the analyzer exploded"),
        ("locked", "another kivgraph index is publishing into the state directory"),
    ],
)
async def test_a_failed_index_is_indexing_failed_with_the_observed_cause(
    layout: StateLayout, project: Path, monkeypatch: pytest.MonkeyPatch, mode: str, cause: str
) -> None:
    monkeypatch.setenv(FAKE_MODE_ENV, mode)
    app = make_app(layout)
    async with connect(app) as (client, _inbox):
        message = await fails(
            client,
            "index_project",
            "INDEXING_FAILED",
            name="p",
            path=str(project),
            languages=["python"],
            confirmed=True,
        )
        assert message == f"project indexing failed: {cause}"
        assert [t.name for t in (await client.list_tools()).tools] == ["index_project"]
    assert app.holder.current_id is None


async def test_a_relative_path_resolves_against_the_server_working_directory(
    layout: StateLayout, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = tmp_path / "argv.json"
    monkeypatch.setenv(FAKE_MODE_ENV, "publish")
    monkeypatch.setenv(FAKE_ARGV_ENV, str(argv_file))
    async with connect(make_app(layout, cwd=project.parent)) as (client, _inbox):
        await ok(
            client,
            "index_project",
            projects=[{"name": "p", "path": "project", "languages": ["python"]}],
            confirmed=True,
        )
    registered = json.loads(json.loads(argv_file.read_text())[2])
    assert registered == [{"name": "p", "path": str(project), "languages": ["python"]}]


@pytest.mark.parametrize(("action", "outcome"), [("accept", "OK"), ("decline", "PERMISSION_DENIED")])
async def test_on_the_modern_protocol_consent_travels_as_an_input_request(
    layout: StateLayout, project: Path, monkeypatch: pytest.MonkeyPatch, action: str, outcome: str
) -> None:
    monkeypatch.setenv(FAKE_MODE_ENV, "publish")
    asked: list[str] = []
    app = make_app(layout)
    async with mcp.Client(app.server, elicitation_callback=_elicitation(action, True, asked)) as client:
        assert client.protocol_version >= "2026"
        result = await client.call_tool(
            "index_project", {"name": "alpha", "path": str(project), "languages": ["python"]}
        )
        text = result.content[0].text  # type: ignore[union-attr]
        if outcome == "OK":
            assert not result.is_error, text
            assert json.loads(text)["snapshot_id"] == 1
        else:
            assert result.is_error and text == "PERMISSION_DENIED: project indexing was not approved"
    assert len(asked) == 1 and "'alpha'" in asked[0]


async def test_on_the_modern_protocol_a_client_that_cannot_elicit_must_confirm(
    layout: StateLayout, project: Path
) -> None:
    async with mcp.Client(make_app(layout).server) as client:
        result = await client.call_tool(
            "index_project", {"name": "alpha", "path": str(project), "languages": ["python"]}
        )
        assert result.is_error
        assert result.content[0].text.startswith("PERMISSION_REQUIRED: ")  # type: ignore[union-attr]


async def test_a_published_generation_this_server_cannot_open_is_indexing_failed(
    layout: StateLayout, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAKE_MODE_ENV, "publish")
    app = make_app(layout)
    real_refresh = app.holder.refresh

    def refresh_after_breaking_it() -> object:
        name = layout.current_pointer.read_text().strip()
        (layout.generations_dir / name / "manifest").write_text("{ truncated")
        return real_refresh()

    monkeypatch.setattr(app.holder, "refresh", refresh_after_breaking_it)
    async with connect(app) as (client, _inbox):
        message = await fails(
            client,
            "index_project",
            "INDEXING_FAILED",
            name="p",
            path=str(project),
            languages=["python"],
            confirmed=True,
        )
        assert message.startswith("project indexing failed: generation 1 was published but this server cannot open")
        assert "malformed manifest" in message
        assert [t.name for t in (await client.list_tools()).tools] == ["index_project"]
