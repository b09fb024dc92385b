"""The ``cargo`` rust-analyzer runs during an index: standard library only, run as a script (never imported by it).

rust-analyzer looks for cargo in ``$CARGO_HOME/bin`` before ``$CARGO`` and
``PATH``, so the adapter gives it a cargo home of kivgraph's own (in the state
directory) whose ``bin/cargo`` runs this file. It changes three things and runs
the real cargo (``KIVGRAPH_CARGO_REAL``) in the cargo home the workspace's
crate graph was resolved in (``KIVGRAPH_CARGO_WORKSPACE_HOME``: the user's, or
kivgraph's own when the dependencies were fetched there, see
``dependencies.py``); the standard library's own workspace is always resolved
in ``KIVGRAPH_CARGO_SYSROOT_HOME`` (the user's cargo home, where setup put its
dependencies, unless they had to be fetched into kivgraph's):

- rust-analyzer 0.0.320 asks for a private copy of the lockfile with
  ``--lockfile-path P -Zunstable-options`` on toolchains since 1.82; cargo 1.95
  has no such flag any more and takes ``-Zlockfile-path`` with the
  ``resolver.lockfile-path`` setting instead. Without the rewrite the metadata
  call fails and no dependency is loaded. The lockfile then lives in
  rust-analyzer's temporary directory, never in the repository; the run's own
  lockfile (``KIVGRAPH_CARGO_LOCK``: the graph settled before rust-analyzer
  ran, patches honoured) is copied there first, so every call sees that graph.
- ``KIVGRAPH_CARGO_PATCH`` (a TOML file) is passed as ``--config``: its
  ``[patch.crates-io]`` points dependencies at registered checkouts, so a
  consumer is analysed against the provider's own source.
- each call's arguments, exit code and last lines of stderr are appended to
  ``KIVGRAPH_CARGO_LOG`` (JSON lines), so the adapter can tell when the
  dependencies could not be loaded offline.

cargo drops ``-Z`` and ``--config`` given before a subcommand that has options
of its own, so what is added goes right after the subcommand's name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

# Options of cargo itself that take a value (``-Z unstable-options``) before the subcommand.
_VALUED = frozenset({"-Z", "--config", "-C", "--color", "--explain"})
# The tail of the standard library's workspace manifest (rust-src), which rust-analyzer loads too.
SYSROOT_LIBRARY = ("lib", "rustlib", "src", "rust", "library", "Cargo.toml")


def manifest_of(args: list[str]) -> str:
    """The ``--manifest-path`` of a cargo call ("" when it has none)."""
    for i, a in enumerate(args):
        if a == "--manifest-path" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--manifest-path="):
            return a.split("=", 1)[1]
    return ""


def is_sysroot(manifest: str) -> bool:
    return tuple(manifest.replace("\\", "/").split("/")[-len(SYSROOT_LIBRARY) :]) == SYSROOT_LIBRARY


def subcommand_at(args: list[str]) -> int | None:
    """Index of the subcommand's name in cargo's arguments (None for ``cargo --version``)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED:
            i += 2
            continue
        if arg.startswith("-") or arg.startswith("+"):
            i += 1
            continue
        return i
    return None


def rewrite(args: list[str], patch: str = "") -> tuple[list[str], str]:
    """(the arguments for cargo 1.95, the lockfile path rust-analyzer asked for or "")."""
    kept: list[str] = []
    lockfile = ""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--lockfile-path" and i + 1 < len(args):
            lockfile = args[i + 1]
            i += 2
            continue
        if arg.startswith("--lockfile-path="):
            lockfile = arg.split("=", 1)[1]
            i += 1
            continue
        kept.append(arg)
        i += 1
    at = subcommand_at(kept)
    if at is None:
        return kept, lockfile
    added: list[str] = []
    if lockfile:
        # a TOML basic string: JSON's escapes are valid in it
        added += ["-Zlockfile-path", "--config", f"resolver.lockfile-path={json.dumps(lockfile)}"]
    if patch:
        added += ["--config", patch]
    return kept[: at + 1] + added + kept[at + 1 :], lockfile


def main() -> int:
    real = os.environ.get("KIVGRAPH_CARGO_REAL", "")
    if not real:
        sys.stderr.write("kivgraph cargo shim: KIVGRAPH_CARGO_REAL is not set\n")
        return 101
    args, lockfile = rewrite(sys.argv[1:], os.environ.get("KIVGRAPH_CARGO_PATCH", ""))
    env = dict(os.environ)
    sysroot = is_sysroot(manifest_of(args))
    home = env.get("KIVGRAPH_CARGO_SYSROOT_HOME" if sysroot else "KIVGRAPH_CARGO_WORKSPACE_HOME", "")
    home = home or env.get("KIVGRAPH_CARGO_REAL_HOME", "")
    ours = env.get("KIVGRAPH_CARGO_LOCK", "")
    if lockfile and ours and not sysroot and os.path.isfile(ours):
        shutil.copyfile(ours, lockfile)
    if home:
        env["CARGO_HOME"] = home
    else:
        env.pop("CARGO_HOME", None)
    env["CARGO_NET_OFFLINE"] = "true"
    proc = subprocess.run([real, *args], env=env, stderr=subprocess.PIPE, check=False)
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    log = env.get("KIVGRAPH_CARGO_LOG", "")
    if log:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        record = {"args": args, "code": proc.returncode, "stderr": lines[-12:]}
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
