"""Setup and diagnostics tell the truth: a missing analyzer fails setup, doctor's checks can fail, status adds up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import doctor
from indexer.languages import registry
from indexer.languages.spec import Probe
from indexer.setup_analyzers import failed
from tests.helpers import REPO_ROOT, copy_fixture, run_kivgraph


def test_a_line_that_did_not_install_counts_as_a_failure_and_dart_skipped_does_not() -> None:
    assert failed("kivgraph-gotypes (go/types): NOT built (go toolchain not found (PATH))")
    assert failed("scip-python 0.6.6: NOT installed (npm not found)")
    assert failed("scip-typescript 0.4.0: install FAILED (network)")
    assert not failed("scip-dart: skipped (no dart executable on PATH: Dart answers are CANDIDATE)")
    assert not failed("scip-python 0.6.6: already installed in /cache")


def test_the_rust_line_says_when_the_standard_librarys_dependencies_could_not_be_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without std's own dependencies rust-analyzer leaves Vec's and iterators' methods unresolved: every rust
    setup line says what became of them, and a fetch that failed fails setup."""
    from indexer.languages.rust import toolchain

    manifest = tmp_path / "library" / "Cargo.toml"
    manifest.parent.mkdir()
    manifest.write_text("[workspace]\n")
    calls: list[list[str]] = []

    def refused(argv: list[str], **_kw: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 101, "", "error: failed to download `rand_xorshift`")

    monkeypatch.setattr(toolchain, "sysroot_library", lambda: manifest)
    monkeypatch.setattr(toolchain, "cargo", lambda: Path("/usr/bin/cargo"))
    monkeypatch.setattr(toolchain.subprocess, "run", refused)
    monkeypatch.setattr(toolchain, "_install", lambda: "rust-analyzer 0.0.0: already built in /cache")
    line = toolchain.install()
    cargo_calls = [argv[2] for argv in calls if argv[0] == "/usr/bin/cargo"]
    assert cargo_calls == ["metadata", "fetch"]  # offline check first, then the fetch
    assert "rand_xorshift" in line and failed(line)
    monkeypatch.setattr(
        toolchain, "fetch_sysroot_dependencies", lambda: "the standard library's dependencies are in the cargo cache"
    )
    assert not failed(toolchain.install())


@pytest.mark.analyzers
def test_setup_exits_non_zero_naming_the_analyzer_and_the_missing_toolchain(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("node", "npm"):  # Node stays; Go is what this machine "lacks"
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (bare / tool).symlink_to(found)
    path = [str(bare), *(p for p in os.environ.get("PATH", "").split(":") if p and not (Path(p) / "go").exists())]
    env = {**os.environ, "PATH": ":".join(path)}
    proc = subprocess.run(
        [sys.executable, "-m", "indexer.setup_analyzers"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout
    assert "prerequisite missing: go" in proc.stdout
    assert "make setup FAILED" in proc.stderr and "install first: go" in proc.stderr
    assert "scip-dart" not in proc.stderr  # Dart's absence is expected here


def test_doctor_fails_when_a_grammar_does_not_extract_its_probe() -> None:
    (python,) = [s for s in registry.LANGUAGES if s.name == "python"]
    original = python.probe
    object.__setattr__(python, "probe", Probe("doctor_probe.py", b"def probe(:\n", "doctor_probe.probe"))
    try:  # a frozen dataclass, restored below
        check = doctor._grammar_check(python, "python")
    finally:
        object.__setattr__(python, "probe", original)
    assert check.status == "FAIL" and "did not extract doctor_probe.probe" in check.detail


@pytest.mark.parametrize("spec", [s for s in registry.LANGUAGES if s.probe is not None], ids=lambda s: s.name)
def test_each_grammar_extracts_its_own_probe(spec: registry.LanguageSpec) -> None:
    check = doctor._grammar_check(spec, spec.name)
    assert check.status == "PASS", check.detail


@pytest.mark.analyzers
def test_doctor_warns_of_no_fallback_when_every_configured_analyzer_passes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = copy_fixture("pyrepo_a", tmp_path)
    assert run_kivgraph(home, "init", str(repo)).returncode == 0
    result = run_kivgraph(home, "doctor", "--json")
    assert result.returncode == 0, result.stdout
    checks = json.loads(result.stdout)["checks"]
    assert [c["name"] for c in checks if c["status"] != "PASS"] == []
    assert not any("falls back" in c["detail"] or "fallback" in c["detail"] for c in checks)
    missing = run_kivgraph(home, "doctor", "--json", KIVGRAPH_SCIP_PYTHON="/nonexistent")
    warned = [c for c in json.loads(missing.stdout)["checks"] if c["status"] == "WARN"]
    assert [c["name"] for c in warned] == ["analyzer.python.exact"] and "falls back" in warned[0]["detail"]


@pytest.mark.e2e
def test_status_totals_are_the_sums_of_what_the_graph_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("pyrepo_a", "ts_monorepo"):
        assert run_kivgraph(home, "init", str(copy_fixture(name, tmp_path))).returncode == 0
    assert (
        run_kivgraph(
            home, "index", KIVGRAPH_SCIP_PYTHON="/nonexistent", KIVGRAPH_SCIP_TYPESCRIPT="/nonexistent"
        ).returncode
        == 0
    )
    payload = json.loads(run_kivgraph(home, "status", "--json").stdout)
    counts = payload["counts"]
    per_language = [st for repo in payload["repositories"] for st in repo["languages"].values()]
    assert counts["files"] == sum(st.get("indexed", 0) + st.get("partial", 0) for st in per_language)
    assert counts["partial_files"] == sum(st.get("partial", 0) for st in per_language)
    assert counts["skipped_files"] == sum(st.get("skipped", 0) for st in per_language)
    assert counts["symbols"] == sum(st.get("symbols", 0) for st in per_language)
    assert counts["symbols"] == sum(repo["symbols"] for repo in payload["repositories"])
    assert payload["test_files"] == sum(st.get("test", 0) for st in per_language) == 1  # math.test.ts
    text = run_kivgraph(home, "status").stdout
    assert f"files {counts['files']}" in text and f"partial files {counts['partial_files']}" in text
    assert "test files 1" in text


def test_setup_adds_a_missing_rust_src_before_fetching_the_standard_librarys_dependencies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rust-analyzer adds a missing rust-src itself on its first run, after setup: setup adds it first, so the
    dependencies of the standard library it then finds are fetched too (else SYSROOT_NOT_LOADED on a new
    machine)."""
    from indexer.languages.rust import toolchain

    manifest = tmp_path / "library" / "Cargo.toml"
    ran: list[list[str]] = []
    answers = {"component": 0, "metadata": 0}

    def run(argv: list[str], **_kw: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        if argv[1] == "component":
            manifest.parent.mkdir(exist_ok=True)
            manifest.write_text("[workspace]\n")
        verb = "component" if argv[1] == "component" else argv[2] if len(argv) > 2 else ""
        return subprocess.CompletedProcess(argv, answers.get(verb, 0), "", "error: no network")

    monkeypatch.setattr(toolchain, "sysroot_library", lambda: manifest if manifest.is_file() else None)
    monkeypatch.setattr(toolchain, "cargo", lambda: Path("/usr/bin/cargo"))
    monkeypatch.setattr(toolchain.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(toolchain.subprocess, "run", run)
    line = toolchain.fetch_sysroot_dependencies()
    assert ran[0] == ["/usr/bin/rustup", "component", "add", "rust-src"]
    assert line == "added rust-src; the standard library's dependencies are in the cargo cache"
    manifest.unlink()
    answers["component"] = 1
    refused = toolchain.fetch_sysroot_dependencies()
    assert "rust-src: FAILED to add with rustup (error: no network)" in refused and failed(refused)
