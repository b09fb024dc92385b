"""A workspace's locked crate graph before rust-analyzer runs: in which cargo home, fetched if need be, patched.

rust-analyzer resolves a workspace's dependencies with ``cargo metadata``,
offline; when one is not in the cargo cache it loads none of them. So before
it runs, ``resolve`` settles the graph itself, in a lockfile of the run's own
(``<scratch>/lock/Cargo.lock``, a copy of the workspace's ``Cargo.lock`` if it
has one; the shim hands it to every cargo call rust-analyzer makes on the
workspace, so they all see this graph and nothing is written next to the
manifest):

1. the user's cargo home, offline: the dependencies are in the local cache;
2. else kivgraph's own cargo home (``<state>/rust/cargo-home``), offline:
   fetched there by an earlier run;
3. else, when the config allows the network (``[rust] allow_network``),
   ``cargo fetch`` of the locked graph into kivgraph's cargo home (the user's
   cargo ``config.toml`` copied in first, so a mirror or a proxy still
   applies; nothing is written into the user's cargo home). A registry that
   cannot be reached is said so, with cargo's own words;
4. else the run goes on without them, and says which setting would fetch them.

Then the ``[patch.crates-io]`` of the registered providers: cargo leaves a
patch unused when a locked package needs another version of the patched
crate than the registered checkout (``serde_json 1.0.149`` requires
``serde_core ^1.0.220``), and the workspace is then analysed against the
registry's copy. ``resolve`` finds such a copy in the metadata (a registry
package of a patched name, semver-compatible with the provider's version),
unlocks it together with every locked package that pulls it in, and lets
cargo's resolver choose the versions again: it prefers the patch, so it
downgrades what pulled the other version to a release that accepts the
provider's. What it cannot fix (the workspace itself requires a version the
provider does not have) is returned as an ``UnusedPatch``, which the adapter
reports at every use it affects.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# rust-analyzer sets this for its own ``-Z`` calls (a stable cargo takes ``-Zlockfile-path`` only with it).
_CHANNEL = "__CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS"
_NETWORK = re.compile(r"^\[\d+\] |Could not connect|Could not resolve|Couldn't resolve|failed to download from")
# Files of the user's cargo home that say how to reach a registry (a mirror, a proxy): never credentials.
_CONFIG_FILES = ("config.toml", "config")
_ROUNDS = 4


@dataclass(frozen=True)
class UnusedPatch:
    """A patch to a registered checkout that cargo did not use: the graph holds the registry's copy instead."""

    package: str
    provider: str  # the registered repository
    provider_version: str
    used_version: str  # the registry's version the graph holds
    why: str  # who requires it: "mid 1.1.0 requires base ^1.1"


@dataclass
class Resolved:
    """The cargo home and lockfile of a workspace's runs, and what it took to get there."""

    home: Path
    lock: Path
    missing: str = ""  # why the dependencies could not be resolved ("" = resolved)
    notes: list[str] = field(default_factory=list)  # what was fetched or pinned, for status
    unused: list[UnusedPatch] = field(default_factory=list)


@dataclass(frozen=True)
class Cargo:
    """How ``resolve`` runs the real cargo on one workspace."""

    real: Path
    manifest: Path
    lock: Path
    patch: Path | None
    deadline: float
    host: str = ""

    def run(self, home: Path, args: list[str], *, offline: bool) -> subprocess.CompletedProcess[str]:
        sub, rest = args[0], args[1:]
        cmd = [str(self.real), sub, "-Zunstable-options", "-Zlockfile-path"]
        cmd += ["--config", f"resolver.lockfile-path={json.dumps(str(self.lock))}"]
        if self.patch is not None:
            cmd += ["--config", str(self.patch)]
        cmd += [*rest, "--manifest-path", str(self.manifest)]
        env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "RUSTC_WRAPPER")}
        env.update({"CARGO_HOME": str(home), "CARGO_NET_OFFLINE": "true" if offline else "false", _CHANNEL: "nightly"})
        left = max(self.deadline - time.monotonic(), 1.0)
        try:
            return subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=left, cwd=self.lock.parent, check=False
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, 124, "", f"error: cargo {sub} timed out after {left:.0f}s")
        except OSError as exc:
            return subprocess.CompletedProcess(cmd, 127, "", f"error: cargo could not start: {exc}")

    def metadata(self, home: Path, *, offline: bool = True) -> tuple[dict[str, object] | None, str]:
        platform = ["--filter-platform", self.host] if self.host else []
        proc = self.run(home, ["metadata", "--format-version", "1", *platform], offline=offline)
        if proc.returncode != 0:
            return None, error_line(proc.stderr)
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            return None, "cargo metadata printed no JSON"
        return (data, "") if isinstance(data, dict) else (None, "cargo metadata printed no JSON object")


def error_line(stderr: str) -> str:
    """cargo's error and its last cause (``error: failed to get `x` …: [7] Could not connect …``)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((line for line in lines if line.startswith("error")), lines[-1] if lines else "no output")
    causes = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line == "Caused by:"]
    return f"{first}: {causes[-1]}" if causes and causes[-1] != first else first


def unreachable(error: str) -> bool:
    """Whether cargo's error says the registry could not be reached (a curl error, a host, a download)."""
    return any(_NETWORK.search(part.strip()) for part in error.split(": "))


def index_entries(homes: Iterable[Path], name: str) -> list[dict[str, object]]:
    """The registry index lines cargo cached for a crate in these cargo homes (every registry), by version.

    A cache file is a header (format byte, index version, revision, NUL) then pairs of NUL-ended version and
    JSON line; only the JSON objects are read.
    """
    rel = _index_file(name)
    out: dict[str, dict[str, object]] = {}
    for home in homes:
        for cache in sorted((Path(home) / "registry" / "index").glob("*/.cache")):
            try:
                data = (cache / rel).read_bytes()
            except OSError:
                continue
            for part in data.split(b"\0"):
                if not part.startswith(b"{"):
                    continue
                try:
                    entry = json.loads(part)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("vers"), str):
                    out.setdefault(entry["vers"], entry)
    return list(out.values())


def _index_file(name: str) -> str:
    n = name.lower()
    if len(n) <= 2:
        return f"{len(n)}/{n}"
    if len(n) == 3:
        return f"3/{n[0]}/{n}"
    return f"{n[:2]}/{n[2:4]}/{n}"


def compatible(a: str, b: str) -> bool:
    """Whether two versions are semver-compatible the way cargo unifies them (1.x.y; 0.x.y by x; 0.0.z by z)."""

    def key(v: str) -> tuple[int, ...]:
        parts = []
        for p in v.split("-", 1)[0].split("+", 1)[0].split(".")[:3]:
            parts.append(int(p) if p.isdigit() else -1)
        while len(parts) < 3:
            parts.append(0)
        major, minor, patch = parts
        return (major,) if major else ((0, minor) if minor else (0, 0, patch))

    return key(a) == key(b)


def _copy_config(user: Path, ours: Path) -> None:
    for name in _CONFIG_FILES:
        src, dest = user / name, ours / name
        if src.is_file():
            ours.mkdir(parents=True, exist_ok=True)
            if not dest.is_file() or dest.read_bytes() != src.read_bytes():
                shutil.copyfile(src, dest)
        elif dest.is_file():
            dest.unlink()


def _has_registry(home: Path) -> bool:
    return (home / "registry" / "index").is_dir()


def resolve(
    cargo: Cargo,
    user: Path,
    ours: Path,
    workspace_lock: Path | None,
    patches: Mapping[str, tuple[str, str, Path]],
    *,
    allow_network: bool,
) -> Resolved:
    """Settle a workspace's crate graph (see the module's docstring); ``patches`` maps a package name to
    (registered repository, its version, its checkout directory)."""
    cargo.lock.parent.mkdir(parents=True, exist_ok=True)
    if workspace_lock is not None and workspace_lock.is_file():
        shutil.copyfile(workspace_lock, cargo.lock)
    out = Resolved(home=user, lock=cargo.lock)
    meta, error = cargo.metadata(user)
    if meta is None and _has_registry(ours):
        meta, _ = cargo.metadata(ours)
        out.home = ours if meta is not None else user
    if meta is None:
        if not allow_network:
            out.missing = (
                f"{error}; kivgraph fetched nothing: the network is off for Rust (set `allow_network = true` "
                f"under `[rust]` in kivgraph.toml to fetch the locked dependencies into its own cargo home {ours})"
            )
            return out
        meta, error = _fetch(cargo, user, ours, out)
        if meta is None:
            out.missing = error
            return out
    _repatch(cargo, user, ours, meta, patches, out, allow_network=allow_network)
    return out


def _fetch(cargo: Cargo, user: Path, ours: Path, out: Resolved) -> tuple[dict[str, object] | None, str]:
    """``cargo fetch`` of the locked graph into kivgraph's cargo home, then its metadata offline there."""
    _copy_config(user, ours)
    target = ["--target", cargo.host] if cargo.host else []
    fetched = cargo.run(ours, ["fetch", *target], offline=False)
    if fetched.returncode != 0:
        error = error_line(fetched.stderr)
        if unreachable(error):
            return None, f"the crate registry could not be reached to fetch the missing dependencies ({error})"
        return None, f"cargo fetch of the missing dependencies failed ({error})"
    meta, error = cargo.metadata(ours)
    if meta is None:
        return None, f"fetched into {ours}, yet cargo could not resolve the crate graph offline ({error})"
    out.home = ours
    downloaded = fetched.stderr.count("Downloaded ")
    plural = "" if downloaded == 1 else "s"
    out.notes.append(f"fetched {downloaded} crate{plural} of its crate graph into kivgraph's cargo home {ours}")
    return meta, ""


def _packages(meta: Mapping[str, object]) -> dict[str, dict[str, object]]:
    pkgs = meta.get("packages")
    return {str(p["id"]): p for p in pkgs if isinstance(p, dict)} if isinstance(pkgs, list) else {}


def _nodes(meta: Mapping[str, object]) -> dict[str, list[str]]:
    """Package id -> the ids of its dependencies in the resolved graph."""
    resolve_ = meta.get("resolve")
    nodes = resolve_.get("nodes", []) if isinstance(resolve_, dict) else []
    return {str(n["id"]): [str(d["pkg"]) for d in n.get("deps", [])] for n in nodes if isinstance(n, dict)}


@dataclass(frozen=True)
class _Stray:
    """A registry copy of a patched package in the graph, and the packages that pull it in."""

    package: str
    id: str
    version: str
    pullers: tuple[str, ...]  # ids of the packages that depend on it directly
    unlock: tuple[str, ...]  # ``name@version`` of it and of every locked package above it (no member)
    members: tuple[str, ...]  # workspace members that depend on it directly


def _strays(meta: Mapping[str, object], patches: Mapping[str, tuple[str, str, Path]]) -> list[_Stray]:
    pkgs, nodes = _packages(meta), _nodes(meta)
    listed = meta.get("workspace_members")
    members = {str(m) for m in listed} if isinstance(listed, list) else set()
    up: dict[str, set[str]] = {}
    for source, deps in nodes.items():
        for dep in deps:
            up.setdefault(dep, set()).add(source)
    out: list[_Stray] = []
    for pid, p in sorted(pkgs.items()):
        name, version, source = str(p.get("name")), str(p.get("version")), p.get("source")
        if name not in patches or not source or not compatible(version, patches[name][1]):
            continue
        above: set[str] = set()
        queue = [pid]
        while queue:
            for parent in up.get(queue.pop(), ()):
                if parent not in above and parent not in members:
                    above.add(parent)
                    queue.append(parent)
        above_specs = sorted(
            f"{pkgs[a]['name']}@{pkgs[a]['version']}" for a in above if a in pkgs and pkgs[a].get("source")
        )
        unlock = [f"{name}@{version}", *above_specs]
        direct = sorted(up.get(pid, ()))
        out.append(_Stray(name, pid, version, tuple(direct), tuple(unlock), tuple(d for d in direct if d in members)))
    return out


def _requirement(pkg: Mapping[str, object], name: str) -> str:
    for dep in pkg.get("dependencies", []) or []:  # type: ignore[union-attr]
        if isinstance(dep, dict) and dep.get("name") == name and dep.get("kind") != "dev":
            return str(dep.get("req", "*"))
    return "*"


def _why(meta: Mapping[str, object], stray: _Stray) -> str:
    pkgs = _packages(meta)
    parts = []
    for pid in stray.pullers:
        p = pkgs.get(pid)
        if p is not None:
            parts.append(f"{p['name']} {p['version']} requires {stray.package} {_requirement(p, stray.package)}")
    return "; ".join(parts) or f"the lockfile holds {stray.package} {stray.version}"


def _versions(meta: Mapping[str, object]) -> dict[str, str]:
    """The registry packages of a graph: name -> its versions (", "-joined, sorted)."""
    out: dict[str, set[str]] = {}
    for p in _packages(meta).values():
        if p.get("source"):
            out.setdefault(str(p["name"]), set()).add(str(p["version"]))
    return {name: ", ".join(sorted(vs)) for name, vs in out.items()}


def _repatch(
    cargo: Cargo,
    user: Path,
    ours: Path,
    meta: dict[str, object],
    patches: Mapping[str, tuple[str, str, Path]],
    out: Resolved,
    *,
    allow_network: bool,
) -> None:
    """Unlock each registry copy of a patched crate and what pulls it in, until cargo uses every patch."""
    before, first = _versions(meta), meta
    initial = _strays(meta, patches)
    tried: set[tuple[str, ...]] = set()
    online = False
    for _ in range(_ROUNDS):
        strays = _strays(meta, patches)
        fixable = [s for s in strays if s.unlock not in tried]
        if not fixable:
            break
        unlock = sorted({spec for s in fixable for spec in s.unlock})
        tried.update(s.unlock for s in fixable)
        args = ["update", *(a for spec in unlock for a in ("-p", spec))]
        proc = cargo.run(out.home, args, offline=True)
        if proc.returncode == 0:
            meta2, _ = cargo.metadata(out.home)
            if meta2 is not None and len(_strays(meta2, patches)) < len(strays):
                meta = meta2
                continue
        if not allow_network:
            continue
        # the versions that accept the provider may not be cached: resolve and fetch them in our own cargo home
        _copy_config(user, ours)
        proc = cargo.run(ours, args, offline=False)
        if proc.returncode != 0:
            continue
        fetched = cargo.run(ours, ["fetch", *(["--target", cargo.host] if cargo.host else [])], offline=False)
        meta2, _ = cargo.metadata(ours) if fetched.returncode == 0 else (None, "")
        if meta2 is not None:
            meta, out.home, online = meta2, ours, True
    after = _versions(meta)
    changed = sorted(
        f"{name} {before[name]} → {after[name]}"
        for name in before.keys() & after.keys()
        if before[name] != after[name] and name not in patches
    )
    left = {s.package for s in _strays(meta, patches)}
    for stray in initial:
        if stray.package in left:
            continue
        _repo, version, _dir = patches[stray.package]
        out.notes.append(
            f"cargo would have left the patch to the registered {stray.package} {version} unused (the lockfile "
            f"holds {stray.package} {stray.version}; {_why(first, stray)}): unlocked it in the run's own lockfile"
            + (f", pinning {', '.join(changed)}" if changed else "")
            + ", so that cargo uses the registered one"
            + (" (fetched into kivgraph's cargo home)" if online else "")
        )
    for stray in _strays(meta, patches):
        repo, version, _dir = patches[stray.package]
        why = _why(meta, stray)
        if set(stray.pullers) - set(stray.members) and not allow_network:
            why += (
                "; an older release of what pulls it in may accept the registered one, but the network is off for Rust"
            )
        out.unused.append(UnusedPatch(stray.package, repo, version, stray.version, why))


_SYSROOT_HOMES: dict[tuple[Path, Path, bool], tuple[Path, str]] = {}


def sysroot_home(user: Path, ours: Path, *, allow_network: bool, timeout: float = 600) -> tuple[Path, str]:
    """The cargo home in which the standard library's own crate graph resolves offline, and what it took.

    Setup fetches std's dependencies into the user's cargo home; where it has not (a machine setup never
    ran on), kivgraph's own home is tried, and with the network allowed they are fetched there (rust-src's
    lockfile, ``--locked``). Settled once per process; the note is "" when nothing was fetched.
    """
    key = (user, ours, allow_network)
    if key in _SYSROOT_HOMES:
        return _SYSROOT_HOMES[key]
    from indexer.languages.rust import toolchain

    manifest, real = toolchain.sysroot_library(), toolchain.cargo()
    out: tuple[Path, str] = (user, "")
    if manifest is not None and real is not None:
        host = toolchain.host()
        env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
        env["RUSTC_BOOTSTRAP"] = "1"

        def run(home: Path, args: list[str], offline: bool) -> int:
            try:
                return subprocess.run(
                    [str(real), "--quiet", *args, "--locked", "--manifest-path", str(manifest)],
                    env={**env, "CARGO_HOME": str(home), "CARGO_NET_OFFLINE": "true" if offline else "false"},
                    capture_output=True,
                    timeout=timeout,
                    check=False,
                ).returncode
            except (OSError, subprocess.TimeoutExpired):
                return -1

        check = ["metadata", "--format-version", "1", "--filter-platform", host]
        if run(user, check, True) == 0:
            out = (user, "")
        elif _has_registry(ours) and run(ours, check, True) == 0:
            out = (ours, "")
        elif allow_network:
            _copy_config(user, ours)
            if run(ours, ["fetch", "--target", host], False) == 0 and run(ours, check, True) == 0:
                out = (ours, f"fetched the standard library's dependencies into kivgraph's cargo home {ours}")
    _SYSROOT_HOMES[key] = out
    return out
