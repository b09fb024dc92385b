"""rust-analyzer for the exact Rust pass: built once from the crate registry into the cache, in the background.

No prebuilt rust-analyzer can be downloaded on these machines and rustup's is a
stub, so ``make setup`` builds the pinned ``ra_ap_rust-analyzer`` with
``cargo install --locked`` (about an hour on two busy cores). ``install()``
never waits for it:

- already built (and it runs): nothing to do;
- building: a detached builder process holds ``<name>.lock`` (an flock inherited
  from the setup that started it, so two setups never build twice) and writes
  ``<name>.building`` (its pid and start time) and ``<name>.log``;
- otherwise a builder is started at the lowest priority; it installs into
  ``<name>.partial`` and renames that to ``<name>`` when the binary it built runs.

Until the binary is there, ``identity()`` fails with the sentence users see in
status, graph_status and doctor, and Rust answers stay on the CANDIDATE
fallback. A build that failed leaves ``<name>.failed`` (with the log); setup
does not start another until that file is removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from indexer.languages.npm_tool import cache_root, tail
from indexer.languages.spec import AnalyzerFailed

ANALYZER = "rust-analyzer"
CRATE = "ra_ap_rust-analyzer"
# 0.0.349, the newest when this was pinned, does not build with rustc 1.95 (it uses std::assert_matches).
PINNED_VERSION = "0.0.320"
EXECUTABLE_ENV = "KIVGRAPH_RUST_ANALYZER"  # points at another rust-analyzer (tests: a missing one)
CARGO_ENV = "KIVGRAPH_CARGO"  # the cargo that builds it and that the index runs (default: cargo on PATH)
NAME = f"{ANALYZER}-{PINNED_VERSION}"
CANDIDATE_UNTIL_BUILT = "Rust answers are CANDIDATE until rust-analyzer is built"


@dataclass(frozen=True)
class Layout:
    """Where the build lives under ``<cache>/analyzers``."""

    root: Path

    @property
    def final(self) -> Path:
        return self.root / NAME

    @property
    def executable(self) -> Path:
        return self.final / "bin" / ANALYZER

    @property
    def partial(self) -> Path:
        return self.root / f"{NAME}.partial"

    @property
    def target(self) -> Path:
        return self.root / f"{NAME}.target"

    @property
    def lock(self) -> Path:
        return self.root / f"{NAME}.lock"

    @property
    def log(self) -> Path:
        return self.root / f"{NAME}.log"

    @property
    def building(self) -> Path:
        return self.root / f"{NAME}.building"

    @property
    def failed(self) -> Path:
        return self.root / f"{NAME}.failed"


def layout() -> Layout:
    return Layout(cache_root() / "analyzers")


def cargo() -> Path | None:
    """The real cargo: ``$KIVGRAPH_CARGO``, else ``cargo`` on PATH."""
    found = os.environ.get(CARGO_ENV) or shutil.which("cargo")
    return Path(found) if found and Path(found).is_file() else None


def executable() -> Path:
    """The rust-analyzer to run: the environment override, else the pinned build."""
    override = os.environ.get(EXECUTABLE_ENV)
    return Path(override) if override else layout().executable


@dataclass(frozen=True)
class Building:
    pid: int
    since: str


def building(lay: Layout | None = None) -> Building | None:
    """The build in progress (its builder holds the lock), or None."""
    lay = lay or layout()
    if not lay.lock.exists():
        return None
    with open(lay.lock, "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass
        else:
            fcntl.flock(fh, fcntl.LOCK_UN)
            return None
    try:
        state = json.loads(lay.building.read_text())
        return Building(int(state.get("pid", 0)), str(state.get("since", "?")))
    except (OSError, ValueError):
        return Building(0, "?")


def unavailable_reason() -> str:
    """Why there is no rust-analyzer to run, as users read it (status, graph_status, doctor)."""
    override = os.environ.get(EXECUTABLE_ENV)
    if override:
        return f"rust-analyzer not found at {override} ({EXECUTABLE_ENV}): {CANDIDATE_UNTIL_BUILT}"
    lay = layout()
    running = building(lay)
    if running is not None:
        return f"{CANDIDATE_UNTIL_BUILT} (building since {running.since}, log {lay.log})"
    if lay.failed.exists():
        return (
            f"{CANDIDATE_UNTIL_BUILT}: its build failed (log {lay.log}); remove {lay.failed} and run "
            "`make setup` to build it again"
        )
    return f"{CANDIDATE_UNTIL_BUILT}: it is not built yet (`make setup` builds it in the background)"


def identity() -> str:
    """What the fact cache knows of the analyzer: path, size and mtime (no process); AnalyzerFailed when absent."""
    exe = executable()
    try:
        real = exe.resolve(strict=True)
        st = real.stat()
    except OSError:
        raise AnalyzerFailed(unavailable_reason()) from None
    return f"{ANALYZER}|{PINNED_VERSION}|{real}|{st.st_size}|{st.st_mtime_ns}"


def run_version(exe: Path | None = None, timeout: float = 60) -> str:
    """What the binary says of itself (the ra_ap build says 0.0.0), with the pinned crate version."""
    exe = exe or executable()
    if not exe.is_file():
        raise AnalyzerFailed(unavailable_reason())
    try:
        proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerFailed(f"{ANALYZER} --version failed: {exc}") from None
    if proc.returncode != 0:
        raise AnalyzerFailed(f"{ANALYZER} --version exited {proc.returncode}: {tail(proc.stderr)}")
    said = proc.stdout.strip()
    if os.environ.get(EXECUTABLE_ENV):
        return said
    return f"{PINNED_VERSION} ({CRATE}; the binary says {said!r})"


def _runs(exe: Path) -> bool:
    try:
        return subprocess.run([str(exe), "--version"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def install() -> str:
    """Return at once (``_install``), with what became of the standard library's dependencies on every line:
    a fetch that failed leaves std's methods unresolved, so setup names it (``FAILED``) and fails."""
    sysroot = fetch_sysroot_dependencies()
    return f"{_install()}; {sysroot}"


def _install() -> str:
    """Return at once: already built, a build started in the background, or one still building (setup's line).

    ``install`` also puts the standard library's own dependencies in the local cargo cache
    (``fetch_sysroot_dependencies``).
    """
    lay = layout()
    label = f"{ANALYZER} {PINNED_VERSION} ({CRATE})"
    lay.root.mkdir(parents=True, exist_ok=True)
    if lay.partial.is_symlink():  # a hand-made layout from before the installer owned it
        lay.partial.unlink()
    if lay.executable.exists() and _runs(lay.executable):
        return f"{label}: already built in {lay.final}"
    running = building(lay)
    if running is not None:
        return (
            f"{label}: still building (pid {running.pid}, since {running.since}, log {lay.log}); "
            f"{CANDIDATE_UNTIL_BUILT}"
        )
    if lay.failed.exists():
        return (
            f"{label}: not built, its background build failed (log {lay.log}; remove {lay.failed} to retry); "
            f"{CANDIDATE_UNTIL_BUILT}"
        )
    cargo_exe = cargo()
    if cargo_exe is None:
        return f"{label}: not built (no cargo on PATH); {CANDIDATE_UNTIL_BUILT}"
    pid = start_build(lay, cargo_exe)
    if pid is None:
        running = building(lay)
        return (
            f"{label}: still building (pid {running.pid if running else '?'}, log {lay.log}); {CANDIDATE_UNTIL_BUILT}"
        )
    return (
        f"{label}: building in the background at low priority (pid {pid}, log {lay.log}; about an hour on "
        f"two cores); {CANDIDATE_UNTIL_BUILT}"
    )


def sysroot_library() -> Path | None:
    """The toolchain's ``library/Cargo.toml`` (rust-src), which rust-analyzer loads as the standard library."""
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    try:
        proc = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    manifest = Path(proc.stdout.strip(), "lib", "rustlib", "src", "rust", "library", "Cargo.toml")
    return manifest if proc.returncode == 0 and manifest.is_file() else None


def fetch_sysroot_dependencies(timeout: float = 600) -> str:
    """Put the standard library's registry dependencies in the local cargo cache, once (network: setup only).

    rust-analyzer resolves the standard library's crate graph with ``cargo metadata`` on rust-src's own
    workspace; offline, that fails while one of its dependencies (``rand_xorshift``, a test dependency of
    std) is not in the cargo cache, and rust-analyzer then loads std, alloc and core without their links:
    methods of ``Vec``, ``Box`` or iterators go unresolved. ``cargo fetch --locked`` reads rust-src's
    lockfile and writes nothing next to it.
    """
    manifest = sysroot_library()
    added = ""
    if manifest is None:
        refused = add_rust_src(timeout)
        if refused:
            return refused
        manifest, added = sysroot_library(), "added rust-src; "
    cargo_exe = cargo()
    if manifest is None or cargo_exe is None:
        return "no rust-src to check (no rustc or rustup here: the standard library is then not analysed)"
    base = [str(cargo_exe), "--quiet"]
    env = {**os.environ, "RUSTC_BOOTSTRAP": "1"}
    try:
        offline = subprocess.run(
            [
                *base,
                "metadata",
                "--format-version",
                "1",
                "--locked",
                "--offline",
                "--manifest-path",
                str(manifest),
                "--filter-platform",
                host(),
            ],
            capture_output=True,
            env=env,
            timeout=timeout,
        )
        if offline.returncode == 0:
            return f"{added}the standard library's dependencies are in the cargo cache"
        fetched = subprocess.run(
            [*base, "fetch", "--locked", "--manifest-path", str(manifest), "--target", host()],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the standard library's dependencies: FAILED to fetch ({exc}); std is analysed without them"
    if fetched.returncode != 0:
        return (
            f"the standard library's dependencies: FAILED to fetch ({tail(fetched.stderr, 200)}); "
            "std is analysed without them"
        )
    return f"{added}fetched the standard library's dependencies into the cargo cache"


def add_rust_src(timeout: float = 600) -> str:
    """Install the toolchain's rust-src with rustup when it is missing; the reason it could not, or "".

    rust-analyzer loads the standard library from rust-src and, finding none, adds it itself on its first
    run: after setup, so the standard library's dependencies were never fetched (SYSROOT_NOT_LOADED on a new
    machine). Setup adds it first. Without rustup (a distribution's rustc) there is nothing to add here.
    """
    rustup = shutil.which("rustup")
    if rustup is None or shutil.which("rustc") is None:
        return ""
    try:
        added = subprocess.run(
            [rustup, "component", "add", "rust-src"], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"rust-src: FAILED to add with rustup ({exc}); the standard library is not analysed"
    if added.returncode != 0:
        return f"rust-src: FAILED to add with rustup ({tail(added.stderr, 200)}); the standard library is not analysed"
    return ""


@functools.cache
def host() -> str:
    """The host's target triple (``rustc -vV``): the platform rust-analyzer filters a crate graph by."""
    rustc = shutil.which("rustc")
    try:
        out = subprocess.run([rustc or "rustc", "-vV"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "x86_64-unknown-linux-gnu"
    return next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("host:")),
        "x86_64-unknown-linux-gnu",
    )


def start_build(lay: Layout, cargo_exe: Path) -> int | None:
    """Take the build lock and hand it to a detached builder process; its pid, or None when one holds the lock."""
    fd = os.open(lay.lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        since = _now()
        lay.building.write_text(json.dumps({"pid": 0, "since": since}))
        with open(lay.log, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "indexer.languages.rust.toolchain", "build", str(fd), str(cargo_exe)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(fd,),
                start_new_session=True,
                cwd=lay.root,
            )
        lay.building.write_text(json.dumps({"pid": proc.pid, "since": since}))
        return proc.pid
    finally:
        os.close(fd)  # the builder's copy of the descriptor keeps the lock


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def build(lay: Layout, cargo_exe: Path) -> int:
    """The builder process: ``cargo install`` into ``.partial``, checked, renamed into place (runs with the lock)."""
    with contextlib.suppress(OSError):
        os.nice(19)
    started = time.monotonic()
    shutil.rmtree(lay.partial, ignore_errors=True)
    cmd = [
        str(cargo_exe),
        "install",
        CRATE,
        "--version",
        PINNED_VERSION,
        "--locked",
        "--root",
        str(lay.partial),
        "--target-dir",
        str(lay.target),
    ]
    print(f"[{_now()}] {' '.join(cmd)}", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "CARGO_NET_OFFLINE")}
    code = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, check=False).returncode
    built = lay.partial / "bin" / ANALYZER
    try:
        if code != 0 or not _runs(built):
            lay.failed.write_text(f"cargo install exited {code} at {_now()}; see {lay.log}\n")
            print(f"[{_now()}] FAILED: cargo install exited {code}", flush=True)
            return 1
        old = lay.root / f"{NAME}.old"
        shutil.rmtree(old, ignore_errors=True)
        if lay.final.exists():
            lay.final.rename(old)
        lay.partial.rename(lay.final)
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(lay.target, ignore_errors=True)
        print(f"[{_now()}] built {lay.executable} in {time.monotonic() - started:.0f}s", flush=True)
        return 0
    finally:
        with contextlib.suppress(OSError):
            lay.building.unlink()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        _lock_fd = int(sys.argv[2])  # held open (inherited) until this process exits
        raise SystemExit(build(layout(), Path(sys.argv[3])))
    raise SystemExit("usage: python -m indexer.languages.rust.toolchain build LOCK_FD CARGO")
