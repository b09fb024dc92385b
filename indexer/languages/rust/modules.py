"""Cargo manifests and the Rust module a file is: crate names from Cargo.toml, module paths from file paths.

A file's module path starts with its crate's name: the ``[lib] name`` (else
the ``[package] name``, ``-`` read as ``_``) for the library's files, the
target's name for a binary, test, example or bench. Below the crate root,
``a/mod.rs`` and ``a.rs`` are the module ``a``. A file's module path comes
from its place alone (extraction is per file); where a ``mod x;`` or its
``#[path]`` puts a file elsewhere (``tests/common/mod.rs`` shared by test
crates), the resolver lets the declaring module see it under that name too.
"""

from __future__ import annotations

import posixpath
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from snapshot_format import languages

LANGUAGE = "rust"
EXTENSIONS = languages.by_id(LANGUAGE).extensions  # its row in the language table

FALLBACK_CRATE = "crate"  # the crate name of files no Cargo.toml governs
_TARGET_DIRS = ("tests", "examples", "benches")


@dataclass(frozen=True)
class Manifest:
    """What the resolver needs from one Cargo.toml that has a ``[package]``."""

    directory: str  # repository-relative directory of the Cargo.toml ("" at the root)
    package: str  # the package name as written
    lib_name: str  # the library crate's name as code spells it
    lib_path: str  # the library root, relative to ``directory``
    dependencies: frozenset[str] = field(default_factory=frozenset)  # crate names as code spells them
    bins: tuple[tuple[str, str], ...] = ()  # (path relative to ``directory``, crate name) of [[bin]] entries


def crate_ident(name: str) -> str:
    """A package name as Rust code spells the crate: ``serde-json`` → ``serde_json``."""
    return name.replace("-", "_")


_MANIFESTS: dict[Path, tuple[int, int, Manifest | None]] = {}  # Cargo.toml -> (mtime_ns, size, parsed)


def read_manifest(cargo_toml: Path, directory: str) -> Manifest | None:
    """The manifest of one Cargo.toml (None without ``[package] name`` or when unreadable), cached on mtime."""
    try:
        st = cargo_toml.stat()
    except OSError:
        return None
    cached = _MANIFESTS.get(cargo_toml)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2]
    manifest: Manifest | None = None
    try:
        data = tomllib.loads(cargo_toml.read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    package = data.get("package")
    name = package.get("name") if isinstance(package, dict) else None
    if isinstance(name, str) and name:
        lib = data.get("lib")
        lib = lib if isinstance(lib, dict) else {}
        lib_name = lib["name"] if isinstance(lib.get("name"), str) else name
        lib_path = lib["path"] if isinstance(lib.get("path"), str) else "src/lib.rs"
        deps: set[str] = set()
        for table in ("dependencies", "dev-dependencies", "build-dependencies"):
            section = data.get(table)
            if isinstance(section, dict):
                deps.update(crate_ident(k) for k in section)
        targets = data.get("target")
        if isinstance(targets, dict):  # [target.'cfg(..)'.dependencies]
            for spec in targets.values():
                if isinstance(spec, dict):
                    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
                        section = spec.get(table)
                        if isinstance(section, dict):
                            deps.update(crate_ident(k) for k in section)
        bins: list[tuple[str, str]] = []
        for entry in data.get("bin", []) if isinstance(data.get("bin"), list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("path"), str):
                bins.append((_normal(entry["path"]), crate_ident(entry["name"])))
        manifest = Manifest(
            directory=directory,
            package=name,
            lib_name=crate_ident(lib_name),
            lib_path=_normal(lib_path),
            dependencies=frozenset(deps),
            bins=tuple(bins),
        )
    _MANIFESTS[cargo_toml] = (st.st_mtime_ns, st.st_size, manifest)
    return manifest


def _normal(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    return "/".join(parts)


def manifest_for(root: Path, path: str) -> Manifest | None:
    """The nearest Cargo.toml with a ``[package]`` at or above a file's directory, up to the repository root."""
    parts = _normal(path).split("/")[:-1]
    for depth in range(len(parts), -1, -1):
        directory = "/".join(parts[:depth])
        found = read_manifest(Path(root, *parts[:depth], "Cargo.toml"), directory)
        if found is not None:
            return found
    return None


def _modules(parts: list[str], roots: tuple[str, ...] = ()) -> list[str]:
    """Module segments of a path below a crate root directory: ``a/mod.rs`` and ``a.rs`` are ``a``.

    A file named in ``roots`` directly in that directory is the root itself (``main.rs`` of ``src/bin/x/``).
    """
    if not parts:
        return []
    *dirs, last = parts
    if not dirs and last in roots:
        return []
    if last == "mod.rs":
        return dirs
    return [*dirs, last[:-3] if last.endswith(".rs") else last]


def module_path(manifest: Manifest | None, path: str) -> str:
    """The Rust module a file is, ``crate_name::a::b``; ``crate::…`` when no manifest governs it."""
    rel = _normal(path)
    if manifest is None:
        return fallback_module_path(rel)
    if manifest.directory:
        rel = rel[len(manifest.directory) + 1 :]
    if rel == manifest.lib_path:
        return manifest.lib_name
    for bin_path, bin_name in manifest.bins:
        if rel == bin_path:
            return bin_name
    parts = rel.split("/")
    if rel in ("src/main.rs", "build.rs"):
        return crate_ident(manifest.package) if rel == "src/main.rs" else "build_script_build"
    if parts[:2] == ["src", "bin"] and len(parts) > 2:
        return _target_module(parts[2:])
    if parts[0] in _TARGET_DIRS and len(parts) > 1:
        return _target_module(parts[1:])
    base = manifest.lib_path.rsplit("/", 1)[0] if "/" in manifest.lib_path else ""
    if base and parts[: base.count("/") + 1] == base.split("/"):
        parts = parts[base.count("/") + 1 :]
    return "::".join([manifest.lib_name, *_modules(parts)])


def _target_module(parts: list[str]) -> str:
    """``x.rs`` or ``x/main.rs`` is the crate ``x``; ``x/y.rs`` its module ``x::y``."""
    first = parts[0][:-3] if len(parts) == 1 and parts[0].endswith(".rs") else parts[0]
    return "::".join([crate_ident(first), *_modules(parts[1:], ("main.rs",))])


def fallback_module_path(path: str) -> str:
    """Without a manifest: the module below the last ``src/`` directory, the crate named after its parent."""
    parts = _normal(path).split("/")
    if "src" in parts[:-1]:
        at = len(parts) - 1 - parts[::-1].index("src")
        crate = crate_ident(parts[at - 1]) if at > 0 else FALLBACK_CRATE
        return "::".join([crate, *_modules(parts[at + 1 :], ("lib.rs", "main.rs"))])
    return "::".join([FALLBACK_CRATE, *_modules(parts)])


def crate_of(module: str) -> str:
    """The crate root of a module path: its first segment."""
    return module.split("::", 1)[0]


def parent_module(module: str) -> str:
    """``a::b::c`` → ``a::b``; a crate root is its own parent (``super`` above it names nothing new)."""
    return module.rsplit("::", 1)[0] if "::" in module else module


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """The module path of a repository-relative file when the repository root is not known.

    The crate is named after the directory holding ``src/`` (``crate`` at the root); the pipeline
    prefers ``package_for_root``, which reads Cargo.toml.
    """
    return fallback_module_path(path)


def package_for_root(root: Path, path: str, all_paths: frozenset[str]) -> str:
    """A Rust file's package: its module path, ``crate_name::a::b`` (crate name from the nearest Cargo.toml)."""
    return module_path(manifest_for(root, path), path)


def child_module_paths(path: str, package: str, scope: str, name: str, attribute: str = "") -> list[str]:
    """The repository-relative files ``mod name;`` may name, in Rust's order of preference.

    ``path`` and ``package`` are the declaring file's, ``scope`` the module the declaration is in (an inline
    ``mod a { mod x; }`` looks under ``a/``), ``attribute`` its ``#[path = ".."]`` (relative to the declaring
    file's directory). Otherwise the file is beside a crate root or ``mod.rs`` (``x.rs`` or ``x/mod.rs``), and
    under ``a/`` for a file ``a.rs``.
    """
    directory, _, base = path.rpartition("/")
    if attribute:
        return [posixpath.normpath(posixpath.join(directory, attribute))]
    root_like = base in ("lib.rs", "main.rs", "mod.rs") or "::" not in package
    parts = [directory] if directory else []
    if not root_like:
        parts.append(base[:-3] if base.endswith(".rs") else base)
    if scope != package and scope.startswith(package + "::"):
        parts.extend(scope[len(package) + 2 :].split("::"))
    stem = "/".join([*parts, name])
    return [f"{stem}.rs", f"{stem}/mod.rs"]
