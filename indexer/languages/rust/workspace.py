"""Cargo workspaces of a repository, the registered crates they depend on, and the cargo a run gives rust-analyzer.

rust-analyzer runs once per Cargo workspace: the directory of a ``Cargo.toml``
with a ``[workspace]`` table, or each package that is in none. Everything a
run writes is outside the repository: kivgraph's own cargo home
(``<state>/rust/cargo-home``, whose ``bin/cargo`` is the shim in
``cargo_shim.py``, generated here on every run), a target directory per
workspace (``<state>/rust/target/``, kept between runs so build scripts and
proc macros are not rebuilt), and the per-run files (the ``[patch]`` config,
the shim's log, the run's lockfile, rust-analyzer's temporary lockfiles) in
the run's scratch directory. cargo reads the registry from the user's own
cargo home, or from kivgraph's when the dependencies were fetched there
(``dependencies.py``; the network only when the config allows it).

A registry dependency (``serde = "1"``) whose package another registered
repository provides is patched to that checkout (``[patch.crates-io]``), so
the consumer is analysed against the provider's own source and its uses carry
the provider's symbols.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus
from indexer.languages.rust import cargo_shim, dependencies, toolchain
from indexer.languages.rust import modules as cargo
from snapshot_format.layout import resolve_layout

_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _toml(path: Path) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return data


@dataclass(frozen=True)
class Package:
    """A Cargo package of a repository: its directory (repository-relative), name, version and library crate."""

    directory: str
    name: str
    version: str
    lib_name: str
    lib_path: str  # relative to ``directory``


@dataclass(frozen=True)
class Workspace:
    """One rust-analyzer run: the workspace directory (repository-relative, "" = the root) and its packages."""

    directory: str
    packages: tuple[Package, ...]

    def manifest(self, root: Path) -> Path:
        return Path(root, self.directory, "Cargo.toml") if self.directory else Path(root, "Cargo.toml")


def package_of(root: Path, directory: str) -> Package | None:
    """The package whose Cargo.toml is in ``directory`` (None for a virtual manifest or none)."""
    manifest = cargo.read_manifest(
        Path(root, directory, "Cargo.toml") if directory else Path(root, "Cargo.toml"), directory
    )
    if manifest is None:
        return None
    data = _toml(Path(root, directory, "Cargo.toml"))
    pkg = data.get("package")
    version = pkg.get("version", "") if isinstance(pkg, dict) else ""
    if not isinstance(version, str):  # ``version.workspace = true``
        version = ""
    return Package(directory, manifest.package, version, manifest.lib_name, manifest.lib_path)


def _parents(directory: str) -> list[str]:
    """``a/b/c`` → ``["a/b", "a", ""]``."""
    parts = directory.split("/") if directory else []
    return ["/".join(parts[:i]) for i in range(len(parts) - 1, -1, -1)]


def _in_workspace(root: Path, workspace_dir: str, package_dir: str) -> bool:
    """Whether a ``[workspace]`` at ``workspace_dir`` claims the package: it is there, or not ``exclude``d.

    cargo refuses a package below a workspace that does not list it, so such a package is no run of its own.
    """
    ws = _toml(Path(root, workspace_dir, "Cargo.toml")).get("workspace")
    if not isinstance(ws, dict):
        return False
    rel = package_dir[len(workspace_dir) + 1 :] if workspace_dir else package_dir
    excluded = ws.get("exclude", [])
    return not (
        isinstance(excluded, list)
        and any(isinstance(e, str) and (rel == e.strip("/") or rel.startswith(e.strip("/") + "/")) for e in excluded)
    )


def workspaces(root: Path, paths: Iterable[str]) -> list[Workspace]:
    """The Cargo workspaces owning these repository-relative Rust files, in order of their directories."""
    by_dir: dict[str, dict[str, Package]] = {}
    seen: dict[str, str | None] = {}
    for path in paths:
        manifest = cargo.manifest_for(root, path)
        if manifest is None:
            continue
        directory = manifest.directory
        if directory in seen:
            continue
        owner = next((d for d in _parents(directory) if _in_workspace(root, d, directory)), None)
        if owner is None and _in_workspace(root, directory, directory):
            owner = directory
        ws_dir = owner if owner is not None else directory
        seen[directory] = ws_dir
        pkg = package_of(root, directory)
        if pkg is not None:
            by_dir.setdefault(ws_dir, {})[directory] = pkg
    return [Workspace(d, tuple(pkgs[k] for k in sorted(pkgs))) for d, pkgs in sorted(by_dir.items())]


def registry_dependencies(root: Path, workspace: Workspace) -> set[str]:
    """Package names the workspace's packages take from a registry (not by path or git)."""
    shared = _toml(workspace.manifest(root)).get("workspace")
    shared_deps = shared.get("dependencies", {}) if isinstance(shared, dict) else {}
    out: set[str] = set()

    def add(table: object) -> None:
        if not isinstance(table, dict):
            return
        for key, spec in table.items():
            if isinstance(spec, dict) and spec.get("workspace") is True and isinstance(shared_deps, dict):
                spec = shared_deps.get(key, spec)
            if isinstance(spec, str):
                out.add(key)
            elif isinstance(spec, dict) and not ({"path", "git", "registry"} & set(spec)):
                package = spec.get("package", key)
                out.add(package if isinstance(package, str) else key)

    for pkg in workspace.packages:
        data = _toml(Path(root, pkg.directory, "Cargo.toml"))
        for name in _DEPENDENCY_TABLES:
            add(data.get(name))
        targets = data.get("target")
        if isinstance(targets, dict):
            for spec in targets.values():
                if isinstance(spec, dict):
                    for name in _DEPENDENCY_TABLES:
                        add(spec.get(name))
    return out


@dataclass(frozen=True)
class Provided:
    """A Cargo package a registered repository provides."""

    repository: str
    root: str  # the repository's root
    package: Package

    @property
    def directory(self) -> Path:
        return Path(self.root, self.package.directory) if self.package.directory else Path(self.root)


@dataclass
class Providers:
    """Every registered repository's Cargo packages, by package name (several owners: nobody provides it)."""

    by_name: dict[str, list[Provided]] = field(default_factory=dict)

    @classmethod
    def of(cls, corpus: Corpus) -> Providers:
        out = cls()
        for repo in corpus.repositories:
            root = Path(repo.root)
            dirs: dict[str, None] = {}
            for ff in repo.files:
                manifest = cargo.manifest_for(root, ff.path)
                if manifest is not None:
                    dirs.setdefault(manifest.directory, None)
            for directory in dirs:
                pkg = package_of(root, directory)
                if pkg is not None:
                    out.by_name.setdefault(pkg.name, []).append(Provided(repo.name, repo.root, pkg))
        return out

    def patches(self, repository: str, wanted: Iterable[str]) -> dict[str, Provided]:
        """The registry dependencies exactly one other registered repository provides."""
        out: dict[str, Provided] = {}
        for name in sorted(wanted):
            owners = self.by_name.get(name, [])
            if len(owners) == 1 and owners[0].repository != repository:
                out[name] = owners[0]
        return out


def patch_config(patches: dict[str, Provided]) -> str:
    """The ``[patch.crates-io]`` table pointing each dependency at its registered checkout (TOML)."""
    lines = ["[patch.crates-io]"]
    for name, provided in sorted(patches.items()):
        lines.append(f"{json.dumps(name)} = {{ path = {json.dumps(str(provided.directory.resolve()))} }}")
    return "\n".join(lines) + "\n"


# -- the cargo rust-analyzer runs ---------------------------------------------------------------------------


def state_dir() -> Path:
    """The state directory of the index run (the parent of its scratch directory), else the configured one."""
    scratch = tempfile.gettempdir()
    if Path(scratch).name == "scratch" and (Path(scratch).parent / "publish.lock").exists():
        return Path(scratch).parent
    return resolve_layout().state_dir


def real_cargo_home() -> Path:
    """The user's cargo home, where the local registry cache is: ``$CARGO_HOME``, else ``~/.cargo``."""
    return Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")


OWN_CARGO_HOME = Path("rust", "cargo-home")  # under the state directory


def cargo_home(state: Path) -> Path:
    """kivgraph's own cargo home, with the shim as ``bin/cargo`` (rewritten when it differs)."""
    home = state / OWN_CARGO_HOME
    stub = home / "bin" / "cargo"
    body = (
        f"#!/bin/sh\n# generated by kivgraph for rust-analyzer runs; see {cargo_shim.__name__}\n"
        f"exec {_quote(sys.executable)} -I {_quote(os.path.realpath(cargo_shim.__file__))} "
        '"$@"\n'
    )
    if not stub.is_file() or stub.read_text() != body:
        stub.parent.mkdir(parents=True, exist_ok=True)
        tmp = stub.with_name(f".cargo.{os.getpid()}")
        tmp.write_text(body)
        tmp.chmod(0o755)
        os.replace(tmp, stub)
    return home


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def target_dir(state: Path, repository: str, root: Path) -> Path:
    """The target directory of one workspace (build scripts, proc macros), kept between runs."""
    digest = hashlib.blake2b(str(root.resolve()).encode(), digest_size=6).hexdigest()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in repository)
    return state / "rust" / "target" / f"{safe}-{digest}"


@dataclass(frozen=True)
class CargoCall:
    """One cargo invocation rust-analyzer made, as the shim logged it."""

    args: tuple[str, ...]
    code: int
    stderr: tuple[str, ...]

    @property
    def subcommand(self) -> str:
        at = cargo_shim.subcommand_at(list(self.args))
        return self.args[at] if at is not None else ""

    def manifest(self) -> str:
        return cargo_shim.manifest_of(list(self.args))

    def error(self) -> str:
        """cargo's own error line (``error: no matching package named `x` found``), else the last line."""
        for line in self.stderr:
            if line.startswith("error"):
                return line.strip()
        return self.stderr[-1].strip() if self.stderr else f"exit code {self.code}"


def read_calls(log: Path) -> list[CargoCall]:
    out: list[CargoCall] = []
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        try:
            rec = json.loads(line)
            out.append(CargoCall(tuple(rec["args"]), int(rec["code"]), tuple(rec.get("stderr", []))))
        except (ValueError, KeyError, TypeError):
            continue
    return out


@dataclass(frozen=True)
class LoadProblems:
    """What cargo could not do for one workspace run: resolve its dependencies, build its build scripts."""

    dependencies: str = ""  # cargo's error when the dependency graph could not be resolved offline
    build_scripts: str = ""  # cargo's error when build scripts and proc macros could not be built
    sysroot: str = ""  # cargo's error when the standard library's own crate graph could not be resolved


def load_problems(calls: list[CargoCall], manifest: Path) -> LoadProblems:
    """Did ``cargo metadata`` (with dependencies) of the workspace and of the standard library succeed, and
    ``cargo check`` (build scripts, proc macros)?"""
    want = str(manifest.resolve())
    deps = scripts = sysroot = ""
    for call in calls:
        if call.code == 0 or not call.manifest():
            continue
        if call.subcommand == "metadata" and "--no-deps" not in call.args and cargo_shim.is_sysroot(call.manifest()):
            sysroot = call.error()
            continue
        if str(Path(call.manifest()).resolve()) != want:
            continue
        if call.subcommand == "metadata" and "--no-deps" not in call.args:
            deps = call.error()
        elif call.subcommand == "check":
            scripts = call.error()
    return LoadProblems(deps, scripts, sysroot)


def cargo_environment(
    state: Path,
    repository: str,
    root: Path,
    workspace: Workspace,
    providers: Providers,
    scratch: Path,
    real_cargo: Path,
    log: Path,
    *,
    allow_network: bool = False,
    timeout: float = 600.0,
) -> tuple[dict[str, str], dependencies.Resolved]:
    """The environment of a rust-analyzer run over ``workspace``, and how its crate graph was settled.

    Our cargo home and shim, offline, the target directory in the state directory, temporary files and the
    ``[patch]`` config in ``scratch``; the crate graph resolved first (``dependencies.resolve``: the cargo
    home that holds the dependencies, fetched into ours when the config allows the network, patches that
    cargo would leave unused fixed in the run's own lockfile), which every cargo call of the run then uses.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("KIVGRAPH_RUST_ANALYZER", "CARGO_TARGET_DIR")}
    home = cargo_home(state)
    env.update(
        {
            "CARGO_HOME": str(home),
            "CARGO_TARGET_DIR": str(target_dir(state, repository, workspace.manifest(root).parent)),
            "CARGO_NET_OFFLINE": "true",
            "TMPDIR": str(scratch),
            "KIVGRAPH_CARGO_REAL": str(real_cargo),
            "KIVGRAPH_CARGO_REAL_HOME": str(real_cargo_home()),
            "KIVGRAPH_CARGO_LOG": str(log),
        }
    )
    patches = providers.patches(repository, registry_dependencies(root, workspace))
    patch: Path | None = None
    if patches:
        patch = scratch / "patch.toml"
        patch.write_text(patch_config(patches))
        env["KIVGRAPH_CARGO_PATCH"] = str(patch)
    manifest = workspace.manifest(root)
    cargo = dependencies.Cargo(
        real_cargo,
        manifest.resolve(),
        scratch / "lock" / "Cargo.lock",
        patch,
        time.monotonic() + timeout,
        toolchain.host(),
    )
    resolved = dependencies.resolve(
        cargo,
        real_cargo_home(),
        home,
        manifest.with_name("Cargo.lock"),
        {name: (p.repository, p.package.version, p.directory.resolve()) for name, p in patches.items()},
        allow_network=allow_network,
    )
    env["KIVGRAPH_CARGO_WORKSPACE_HOME"] = str(resolved.home)
    std_home, fetched = dependencies.sysroot_home(real_cargo_home(), home, allow_network=allow_network)
    env["KIVGRAPH_CARGO_SYSROOT_HOME"] = str(std_home)
    if fetched:
        resolved.notes.append(fetched)
    if resolved.lock.is_file():
        env["KIVGRAPH_CARGO_LOCK"] = str(resolved.lock)
    return env, resolved
