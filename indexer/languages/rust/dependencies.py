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
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from indexer.languages.rust import toolchain

# rust-analyzer sets this for its own ``-Z`` calls (a stable cargo takes ``-Zlockfile-path`` only with it).
_CHANNEL = "__CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS"
# cargo's words when a dependency is not in the cargo cache and it may not go online to get it
_OFFLINE_MISS = re.compile(r"no matching package|failed to download|offline")
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
            error = error_line(proc.stderr)
            if offline and "offline" not in error and "offline mode" in proc.stderr:
                error += " (cargo ran offline)"  # its reminder: resolution only saw what is in the cache
            return None, error
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
    rel = index_file(name)
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


def index_file(name: str) -> str:
    """Where cargo's index keeps a crate's file: ``1/a``, ``2/ab``, ``3/a/abc``, ``ab/cd/abcd…``."""
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
    if meta is None and not _OFFLINE_MISS.search(error):
        out.missing = error  # not a dependency missing from the cache (a broken manifest): nothing to fetch
        return out
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


# -- semver requirements, as cargo reads them -----------------------------------------------------------------

_COMPARATOR = re.compile(
    r"^(\^|~|=|>=|<=|>|<)?\s*(\d+|\*|x|X)(?:\.(\d+|\*|x|X))?(?:\.(\d+|\*|x|X))?(-[0-9A-Za-z.-]+)?(\+.*)?$"
)


def _triple(version: str) -> tuple[int, int, int] | None:
    core = version.split("+", 1)[0]
    if "-" in core:
        return None  # a pre-release: never what a release requirement means
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def req_matches(req: str, version: str) -> bool:
    """Whether a cargo version requirement (``^1.0.220``, ``>=1.0, <2``, ``~0.3``, ``=1.2.3``, ``1.*``) accepts a
    release; an unreadable requirement accepts nothing."""
    v = _triple(version)
    if v is None:
        return False
    for part in (p.strip() for p in req.split(",")):
        if not part or part == "*":
            continue
        m = _COMPARATOR.match(part)
        if m is None or m.group(5):
            return False
        op, fields = m.group(1) or "^", [m.group(2), m.group(3), m.group(4)]
        given = [int(f) for f in fields if f is not None and f.isdigit()]
        if len(given) < len([f for f in fields if f is not None]):  # a wildcard: ``1.*`` is ``=1``
            op = "=" if op in ("^", "~", "=") else op
        if not given:
            continue
        low = (*given, *(0,) * (3 - len(given)))
        if len(given) == 3:
            up = (given[0] + 1, 0, 0) if given[0] else ((0, given[1] + 1, 0) if given[1] else (0, 0, given[2] + 1))
        elif len(given) == 2:
            up = (given[0] + 1, 0, 0) if given[0] else (0, given[1] + 1, 0)
        else:
            up = (given[0] + 1, 0, 0)
        tilde_up = (given[0], given[1] + 1, 0) if len(given) >= 2 else (given[0] + 1, 0, 0)
        exact_up = (given[0], given[1], given[2] + 1) if len(given) == 3 else tilde_up if len(given) == 2 else up
        ok = {
            "^": low <= v < up,
            "~": low <= v < tilde_up,
            "=": low <= v < exact_up,
            ">=": v >= low,
            ">": v >= exact_up,
            "<": v < low,
            "<=": v < exact_up,
        }[op]
        if not ok:
            return False
    return True


def _version_key(version: str) -> tuple[int, int, int]:
    return _triple(version) or (-1, -1, -1)


# -- the lockfile's graph --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Locked:
    name: str
    version: str
    registry: bool
    deps: tuple[str, ...]  # "name", "name version" or "name version (source)"

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"


def _locked(lock: Path) -> list[_Locked]:
    try:
        data = tomllib.loads(lock.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    out = []
    for p in data.get("package", []):
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            out.append(
                _Locked(
                    p["name"],
                    str(p.get("version", "")),
                    bool(p.get("source")),
                    tuple(str(d) for d in p.get("dependencies", [])),
                )
            )
    return out


def _depends_on(pkg: _Locked, target: _Locked, same_name: int) -> bool:
    for dep in pkg.deps:
        parts = dep.split(" ")
        if parts[0] != target.name:
            continue
        if len(parts) == 1 and same_name == 1:
            return True
        if len(parts) >= 2 and parts[1] == target.version:
            return True
    return False


@dataclass(frozen=True)
class _Cause:
    """A package that requires another version of a patched crate than the registered one."""

    package: _Locked
    requirement: str
    member: bool
    pin: str = ""  # the newest older release that accepts the registered version ("" = none)


@dataclass(frozen=True)
class _Stray:
    """A registry copy of a patched package in the locked graph, and what pulls it in."""

    copy: _Locked
    causes: tuple[_Cause, ...]  # pullers whose requirement the registered version does not meet


def _requirements(meta: Mapping[str, object], homes: Iterable[Path], pkg: _Locked, dep: str) -> list[str]:
    """What ``pkg`` requires of ``dep`` (every target; a registry package's dev-dependencies left out)."""
    for p in _packages(meta).values():
        if p.get("name") == pkg.name and str(p.get("version")) == pkg.version:
            deps = p.get("dependencies")
            return [
                str(d.get("req", "*"))
                for d in (deps if isinstance(deps, list) else [])
                if isinstance(d, dict) and d.get("name") == dep and (not pkg.registry or d.get("kind") != "dev")
            ]
    for entry in index_entries(homes, pkg.name):
        if entry.get("vers") == pkg.version:
            return _entry_requirements(entry, dep)
    return []


def _entry_requirements(entry: Mapping[str, object], dep: str) -> list[str]:
    deps = entry.get("deps")
    return [
        str(d.get("req", "*"))
        for d in (deps if isinstance(deps, list) else [])
        if isinstance(d, dict) and (d.get("package") or d.get("name")) == dep and d.get("kind") != "dev"
    ]


def _older_release(homes: Iterable[Path], pkg: _Locked, dep: str, wanted: str) -> str:
    """The newest release of ``pkg`` below its locked one, semver-compatible with it, whose requirements of
    ``dep`` all accept ``wanted`` ("" when the index cargo cached has none)."""
    best = ""
    for entry in index_entries(homes, pkg.name):
        vers = str(entry.get("vers", ""))
        if entry.get("yanked") or _triple(vers) is None or not compatible(vers, pkg.version):
            continue
        if _version_key(vers) >= _version_key(pkg.version):
            continue
        if all(req_matches(r, wanted) for r in _entry_requirements(entry, dep)) and (
            not best or _version_key(vers) > _version_key(best)
        ):
            best = vers
    return best


def _strays(
    lock: Path, meta: Mapping[str, object], homes: Iterable[Path], patches: Mapping[str, tuple[str, str, Path]]
) -> list[_Stray]:
    graph = _locked(lock)
    out: list[_Stray] = []
    for copy in graph:
        if copy.name not in patches or not copy.registry or not compatible(copy.version, patches[copy.name][1]):
            continue
        wanted = patches[copy.name][1]
        same = sum(1 for p in graph if p.name == copy.name)
        causes = []
        for pkg in graph:
            if not _depends_on(pkg, copy, same):
                continue
            reqs = _requirements(meta, homes, pkg, copy.name)
            refused = [r for r in reqs if not req_matches(r, wanted)]
            if not refused:
                continue
            pin = _older_release(homes, pkg, copy.name, wanted) if pkg.registry else ""
            causes.append(_Cause(pkg, ", ".join(refused), not pkg.registry, pin))
        out.append(_Stray(copy, tuple(causes)))
    return out


def _why(stray: _Stray) -> str:
    if not stray.causes:
        return f"the lockfile holds {stray.copy.name} {stray.copy.version}"
    return "; ".join(
        f"{c.package.name} {c.package.version} requires {stray.copy.name} {c.requirement}" for c in stray.causes
    )


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
    """Pin what pulls another version of a patched crate to a release that accepts the registered one, release
    the registry's copy, and let cargo resolve again; what cannot be fixed so is ``out.unused``."""
    homes = (out.home, ours, user)
    initial = _strays(cargo.lock, meta, homes, patches)
    pinned: dict[str, str] = {}
    online = False
    for _ in range(_ROUNDS):
        strays = _strays(cargo.lock, meta, homes, patches)
        if not strays or any(c.member or not c.pin for s in strays for c in s.causes):
            break
        commands = [["update", "-p", c.package.spec, "--precise", c.pin] for s in strays for c in s.causes if c.pin] + [
            ["update", *(a for s in strays for a in ("-p", s.copy.spec))]
        ]
        attempt = _apply(cargo, out.home, commands, offline=True)
        if attempt is None and allow_network:
            _copy_config(user, ours)
            attempt = _apply(cargo, ours, commands, offline=False)
            online = attempt is not None
        if attempt is None:
            break
        out.home, meta = attempt
        pinned.update({f"{c.package.name} {c.package.version}": c.pin for s in strays for c in s.causes if c.pin})
        if len(_strays(cargo.lock, meta, homes, patches)) >= len(strays):
            break
    left = _strays(cargo.lock, meta, homes, patches)
    fixed = [s for s in initial if s.copy.name not in {t.copy.name for t in left}]
    for stray in fixed:
        version = patches[stray.copy.name][1]
        out.notes.append(
            f"cargo would have left the patch to the registered {stray.copy.name} {version} unused "
            f"({_why(stray)}): "
            + (f"pinned {', '.join(f'{k} → {v}' for k, v in sorted(pinned.items()))} and " if pinned else "")
            + f"released {stray.copy.name} {stray.copy.version} in the run's own lockfile, so that cargo uses the "
            "registered one" + (" (fetched into kivgraph's cargo home)" if online else "")
        )
    for stray in left:
        repo, version, _dir = patches[stray.copy.name]
        why = _why(stray)
        if any(not c.member and not c.pin for c in stray.causes):
            why += "; no older release of what requires it accepts the registered one in the cached index"
        elif any(not c.member for c in stray.causes) and not allow_network:
            why += "; an older release of what requires it accepts the registered one, but the network is off for Rust"
        out.unused.append(UnusedPatch(stray.copy.name, repo, version, stray.copy.version, why))


def _apply(
    cargo: Cargo, home: Path, commands: list[list[str]], *, offline: bool
) -> tuple[Path, dict[str, object]] | None:
    """Run the ``cargo update`` commands on a copy of the run's lockfile; the new graph, or None (the lockfile
    left as it was) when one fails or the graph does not resolve offline afterwards."""
    saved = cargo.lock.read_bytes() if cargo.lock.is_file() else None
    ok = all(cargo.run(home, cmd, offline=offline).returncode == 0 for cmd in commands)
    if ok and not offline:
        ok = (
            cargo.run(home, ["fetch", *(["--target", cargo.host] if cargo.host else [])], offline=False).returncode == 0
        )
    meta, _error = cargo.metadata(home) if ok else (None, "")
    if meta is None:
        if saved is not None:
            cargo.lock.write_bytes(saved)
        return None
    return home, meta


_SYSROOT_HOMES: dict[tuple[Path, Path, bool], tuple[Path, str]] = {}


def sysroot_home(user: Path, ours: Path, *, allow_network: bool, timeout: float = 600) -> tuple[Path, str]:
    """The cargo home in which the standard library's own crate graph resolves offline, and what it took.

    Setup fetches std's dependencies into the user's cargo home; where it has not (a machine setup never
    ran on), kivgraph's own home is tried, and with the network allowed they are fetched there (rust-src's
    lockfile, ``--locked``). A home found is kept for the process; the note is "" when nothing was fetched.
    """
    key = (user, ours, allow_network)
    if key in _SYSROOT_HOMES:
        return _SYSROOT_HOMES[key]
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
            out = _SYSROOT_HOMES[key] = (user, "")
        elif _has_registry(ours) and run(ours, check, True) == 0:
            out = _SYSROOT_HOMES[key] = (ours, "")
        elif allow_network:
            _copy_config(user, ours)
            if run(ours, ["fetch", "--target", host], False) == 0 and run(ours, check, True) == 0:
                _SYSROOT_HOMES[key] = (ours, "")
                out = (ours, f"fetched the standard library's dependencies into kivgraph's cargo home {ours}")
    return out  # what did not resolve is looked at again next time (setup may have run since)
