"""Setup never waits for rust-analyzer: the build runs in the background, once, and lands in place when it works.

A stand-in for ``cargo install`` (the real build takes about an hour) installs a
rust-analyzer that runs, after a gate file appears, so the test can see the
build in progress; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from indexer.languages.rust import toolchain
from indexer.languages.spec import AnalyzerFailed

FAKE_CARGO = """#!/bin/sh
# stands in for `cargo install ra_ap_rust-analyzer ... --root R`: waits for the gate, then installs a binary
[ "$1" = "install" ] || exit 1
root=""
while [ $# -gt 0 ]; do [ "$1" = "--root" ] && root="$2"; shift; done
i=0
while [ ! -e "{gate}" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
[ -e "{fail}" ] && {{ echo "error: could not compile" >&2; exit 101; }}
mkdir -p "$root/bin"
printf '#!/bin/sh\\necho rust-analyzer 0.0.0\\n' > "$root/bin/rust-analyzer"
chmod +x "$root/bin/rust-analyzer"
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    gate, fail = tmp_path / "gate", tmp_path / "fail"
    cargo = tmp_path / "cargo"
    cargo.write_text(FAKE_CARGO.format(gate=gate, fail=fail))
    cargo.chmod(0o755)
    monkeypatch.setenv("KIVGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(toolchain.CARGO_ENV, str(cargo))
    monkeypatch.delenv(toolchain.EXECUTABLE_ENV, raising=False)
    # the fake cargo only installs: the standard library's dependencies are test_setup_truth's to check
    monkeypatch.setattr(toolchain, "fetch_sysroot_dependencies", lambda: "the standard library's dependencies are here")
    return tmp_path


def _pid(line: str) -> int:
    return int(line.split("(pid ", 1)[1].split(",", 1)[0])


def _wait_for_the_builder(pid: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"the builder {pid} did not finish in {seconds}s")


def test_setup_starts_the_build_in_the_background_once_and_it_lands_in_place(cache: Path) -> None:
    lay = toolchain.layout()
    started = toolchain.install()
    assert "building in the background" in started and "FAILED" not in started
    pid = _pid(started)
    try:
        with pytest.raises(AnalyzerFailed) as why:
            toolchain.identity()
        assert str(why.value).startswith("Rust answers are CANDIDATE until rust-analyzer is built (building since ")
        assert str(lay.log) in str(why.value)
        again = toolchain.install()  # a second setup: no second build
        assert "still building" in again and _pid(again) == pid
        (cache / "gate").touch()
    finally:
        (cache / "gate").touch()
        _wait_for_the_builder(pid)
    assert lay.executable.is_file() and not lay.partial.exists() and not lay.building.exists()
    assert "built" in lay.log.read_text()
    assert toolchain.identity().startswith("rust-analyzer|0.0.320|")
    assert "already built" in toolchain.install()
    assert "the binary says 'rust-analyzer 0.0.0'" in toolchain.run_version()


def test_a_failed_build_is_reported_and_not_restarted_by_every_setup(cache: Path) -> None:
    (cache / "fail").touch()
    (cache / "gate").touch()
    started = toolchain.install()
    _wait_for_the_builder(_pid(started))
    lay = toolchain.layout()
    assert lay.failed.exists() and not lay.executable.exists()
    line = toolchain.install()
    assert "its background build failed" in line and "FAILED" not in line  # setup itself does not fail
    with pytest.raises(AnalyzerFailed, match="its build failed"):
        toolchain.identity()


def test_a_hand_made_partial_link_is_replaced_by_the_installers_layout(cache: Path) -> None:
    lay = toolchain.layout()
    lay.executable.parent.mkdir(parents=True)
    lay.executable.write_text("#!/bin/sh\necho rust-analyzer 0.0.0\n")
    lay.executable.chmod(0o755)
    lay.partial.symlink_to(lay.final.name)
    assert "already built" in toolchain.install()
    assert not lay.partial.exists() and not lay.partial.is_symlink()


def test_without_cargo_setup_says_rust_stays_candidate(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(toolchain.CARGO_ENV, str(cache / "no-such-cargo"))
    monkeypatch.setenv("PATH", str(cache))
    line = toolchain.install()
    assert "not built (no cargo on PATH)" in line and toolchain.CANDIDATE_UNTIL_BUILT in line
    with pytest.raises(AnalyzerFailed, match="it is not built yet"):
        toolchain.identity()
