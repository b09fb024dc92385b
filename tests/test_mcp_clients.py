"""`kivgraph mcp install|status|remove` edits only kivgraph's entry, atomically and with a backup."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from kivgraph_cli.mcp_clients import mcp


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_install_keeps_other_servers_makes_a_backup_and_status_reports_managed(home: Path) -> None:
    cfg = home / ".cursor" / "mcp.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    runner = CliRunner()
    assert runner.invoke(mcp, ["install", "--target", "cursor", "--dry-run"]).output.startswith("cursor: would-install")
    assert "kivgraph" not in json.loads(cfg.read_text())["mcpServers"]
    result = runner.invoke(mcp, ["install", "--target", "cursor"])
    assert result.exit_code == 0, result.output
    data = json.loads(cfg.read_text())
    assert data["mcpServers"]["other"] == {"command": "x"}
    assert data["mcpServers"]["kivgraph"]["args"] == ["serve"]
    assert Path(data["mcpServers"]["kivgraph"]["command"]).is_absolute()
    assert (cfg.parent / "mcp.json.kivgraph.bak").exists()
    assert cfg.stat().st_mode & 0o777 == 0o600
    assert "managed" in runner.invoke(mcp, ["status", "--target", "cursor"]).output
    assert runner.invoke(mcp, ["remove", "--target", "cursor"]).exit_code == 0
    assert json.loads(cfg.read_text())["mcpServers"] == {"other": {"command": "x"}}


def test_codex_gets_a_toml_table_and_loses_only_it_on_remove(home: Path) -> None:
    cfg = home / ".codex" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text('model = "m"\n\n[mcp_servers.other]\ncommand = "y"\n')
    runner = CliRunner()
    assert runner.invoke(mcp, ["install", "--target", "codex"]).exit_code == 0
    parsed = tomllib.loads(cfg.read_text())
    assert parsed["mcp_servers"]["kivgraph"]["args"] == ["serve"] and parsed["model"] == "m"
    assert runner.invoke(mcp, ["remove", "--target", "codex"]).exit_code == 0
    parsed = tomllib.loads(cfg.read_text())
    assert "kivgraph" not in parsed["mcp_servers"] and parsed["mcp_servers"]["other"]["command"] == "y"


def test_a_different_entry_needs_force_and_symlinks_are_refused(home: Path) -> None:
    cfg = home / ".claude.json"
    cfg.write_text(json.dumps({"mcpServers": {"kivgraph": {"command": "/old/kivgraph", "args": ["serve"]}}}))
    runner = CliRunner()
    result = runner.invoke(mcp, ["install", "--target", "claude-code"])
    assert result.exit_code != 0 and "--force" in result.output
    assert "incompatible" in runner.invoke(mcp, ["status", "--target", "claude-code"]).output
    assert runner.invoke(mcp, ["install", "--target", "claude-code", "--force"]).exit_code == 0
    real = home / "real.json"
    real.write_text("{}")
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    result = runner.invoke(mcp, ["install", "--target", "cursor"])
    assert result.exit_code != 0 and "symlink" in result.output


URL = "https://kivgraph.example.com/mcp"


def test_the_http_form_names_the_token_variable_never_the_token(home: Path) -> None:
    runner = CliRunner()
    for target, path in (("claude-code", home / ".claude.json"), ("cursor", home / ".cursor" / "mcp.json")):
        result = runner.invoke(mcp, ["install", "--target", target, "--url", URL, "--token-env", "KIVGRAPH_TOKEN"])
        assert result.exit_code == 0, result.output
        entry = json.loads(path.read_text())["mcpServers"]["kivgraph"]
        assert entry["url"] == URL and "command" not in entry
        wanted = "Bearer ${KIVGRAPH_TOKEN}" if target == "claude-code" else "Bearer ${env:KIVGRAPH_TOKEN}"
        assert entry["headers"] == {"Authorization": wanted}
        assert entry.get("type") == ("http" if target == "claude-code" else None)
        status = runner.invoke(mcp, ["status", "--target", target, "--url", URL, "--token-env", "KIVGRAPH_TOKEN"])
        assert "managed" in status.output
        assert "incompatible" in runner.invoke(mcp, ["status", "--target", target]).output  # not the stdio form
    result = runner.invoke(mcp, ["install", "--target", "codex", "--url", URL, "--token-env", "KIVGRAPH_TOKEN"])
    assert result.exit_code == 0, result.output
    parsed = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["kivgraph"]
    assert parsed == {"url": URL, "bearer_token_env_var": "KIVGRAPH_TOKEN"}
    assert runner.invoke(mcp, ["remove", "--target", "codex"]).exit_code == 0
    assert "kivgraph" not in tomllib.loads((home / ".codex" / "config.toml").read_text()).get("mcp_servers", {})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "claude-desktop", "--url", URL, "--token-env", "T"], "Connectors"),
        (["--target", "cursor", "--url", URL], "go together"),
        (["--target", "cursor", "--url", "ftp://x", "--token-env", "T"], "--url"),
        (["--target", "cursor", "--url", URL, "--token-env", "NOT-A-NAME"], "--token-env"),
    ],
)
def test_the_http_form_refuses_what_a_client_cannot_use(home: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(mcp, ["install", *args])
    assert result.exit_code == 2 and message in result.output
    assert not (home / ".cursor").exists() and not (home / "Library").exists()
