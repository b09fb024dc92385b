"""Analyzers shipped as pinned npm packages (scip-python, scip-typescript): install, locate, identify.

Each is installed by `make setup` into ``$KIVGRAPH_CACHE/analyzers/<name>-<version>`` (outside every
repository), can be pointed elsewhere by an environment variable (tests use it to simulate a missing
analyzer), and is identified for the fact cache by its resolved path, size and mtime.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from indexer.languages.spec import AnalyzerCrashed, AnalyzerFailed

__all__ = ["AnalyzerCrashed", "AnalyzerFailed", "NpmTool", "cache_root", "cause", "tail"]


_CAUSE_WORDS = ("error", "failure", "exception", "fatal", "panic", "cannot", "unexpected")


def cause(text: str, n: int = 300) -> str:
    """The line of a crash's output that says why (the first naming an error), else the output's tail.

    A Node stack trace ends in frames (``at Foo (file.js:1:2)``): the reason is the line above them.
    """
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("at ") and any(w in stripped.lower() for w in _CAUSE_WORDS):
            return stripped[:n]
    return tail(text, n)


def cache_root() -> Path:
    return Path(os.environ.get("KIVGRAPH_CACHE") or Path.home() / ".cache" / "kivgraph")


def tail(text: str, n: int = 300) -> str:
    """The last ``n`` characters of a process's output, whitespace folded, for an error message."""
    text = " ".join(text.split())
    return text[-n:] if text else "no output"


@dataclass(frozen=True)
class NpmTool:
    """One pinned npm analyzer and the command-line tool it puts in ``node_modules/.bin``."""

    analyzer: str  # display name, e.g. "scip-python"
    package: str  # npm package, e.g. "@sourcegraph/scip-python"
    version: str
    executable_env: str  # environment variable overriding the executable
    fallback_note: str  # what happens without it, for the setup line
    companions: tuple[str, ...] = ()  # other pinned npm packages installed next to it

    def install_dir(self) -> Path:
        return cache_root() / "analyzers" / f"{self.analyzer}-{self.version}"

    def installed_executable(self) -> Path:
        return self.install_dir() / "node_modules" / ".bin" / self.analyzer

    def executable(self) -> Path:
        """The executable to run: the environment override, else the pinned install."""
        override = os.environ.get(self.executable_env)
        return Path(override) if override else self.installed_executable()

    def install(self, timeout: float = 600) -> str:
        """Install the pinned package with npm unless present; a one-line status."""
        label = f"{self.analyzer} {self.version}"
        if self.companions:
            label += " with " + ", ".join(self.companions)
        exe = self.installed_executable()
        if exe.exists():
            return f"{label}: already installed in {self.install_dir()}"
        npm = shutil.which("npm")
        if npm is None:
            return f"{label}: NOT installed (npm not found; {self.fallback_note})"
        self.install_dir().mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(self.install_dir()),
                "--no-audit",
                "--no-fund",
                "--no-save",
                f"{self.package}@{self.version}",
                *self.companions,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not exe.exists():
            return f"{label}: install FAILED ({tail(proc.stderr or proc.stdout, 200)})"
        return f"{label}: installed in {self.install_dir()}"

    def identity(self, exe: Path | None = None) -> str:
        """What the cache key knows of the analyzer: path, size and mtime (cheap, no process)."""
        exe = exe or self.executable()
        try:
            real = exe.resolve(strict=True)
            st = real.stat()
        except OSError as exc:
            raise AnalyzerFailed(
                f"{self.analyzer} not found at {exe} ({exc.strerror or exc}); run `make setup`"
            ) from None
        return f"{self.analyzer}|{real}|{st.st_size}|{st.st_mtime_ns}"

    def run_version(self, exe: Path | None = None, timeout: float = 60) -> str:
        """``<analyzer> --version``; AnalyzerFailed when it does not run."""
        exe = exe or self.executable()
        self.identity(exe)
        try:
            proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AnalyzerFailed(f"{self.analyzer} --version failed: {exc}") from None
        if proc.returncode != 0:
            raise AnalyzerFailed(f"{self.analyzer} --version exited {proc.returncode}: {tail(proc.stderr)}")
        return proc.stdout.strip()
