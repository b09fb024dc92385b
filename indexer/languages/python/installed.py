"""Packages the job's environment installs (``kivgraph index --bundle``): the active virtualenv's site-packages,
else the conda environment's, else those of the ``python3`` on ``PATH``.

A bundle is built where a repository's own CI has installed its dependencies; a provider registered
elsewhere is, here, a distribution in site-packages. It is shown to scip-python the way a registered
provider is (a search-path entry and an environment entry listing its files), so the consumer's
occurrences carry the provider's descriptors (``shapes.circle/Circle#``): the package identity
``kivgraph publish`` binds to the provider's declarations.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

_SOURCES = (".py", ".pyi")


@dataclass(frozen=True)
class InstalledPackage:
    """A top-level package of an installed distribution."""

    distribution: str
    version: str
    name: str  # the top-level package or module
    site: Path  # the site-packages directory it is importable from
    files: tuple[str, ...]  # site-relative .py/.pyi paths


def site_directories() -> list[Path]:
    """Where the job installed its dependencies: the active virtualenv's site-packages (``VIRTUAL_ENV``), else
    the active conda environment's (``CONDA_PREFIX``), else those of the ``python3`` on ``PATH`` (a job that
    runs ``pip install`` into the interpreter its setup step put there, as GitHub's setup-python does)."""
    venv = os.environ.get("VIRTUAL_ENV", "") or os.environ.get("CONDA_PREFIX", "")
    if not venv:
        return interpreter_sites()
    out: list[Path] = []
    for lib in ("lib", "lib64"):
        base = Path(venv) / lib
        if base.is_dir():
            out += sorted(p for p in base.glob("python3*/site-packages") if p.is_dir())
    windows = Path(venv) / "Lib" / "site-packages"
    if windows.is_dir():
        out.append(windows)
    return list(dict.fromkeys(out))


def interpreter_sites(interpreter: str | None = None) -> list[Path]:
    """The site-packages directories the interpreter imports from (``site.getsitepackages()`` and the user
    site), asked of the interpreter itself; none when there is no ``python3`` on ``PATH`` or it does not answer."""
    exe = interpreter or shutil.which("python3") or shutil.which("python")
    if exe is None:
        return []
    program = "import json, site; print(json.dumps([*site.getsitepackages(), site.getusersitepackages()]))"
    try:
        done = subprocess.run([exe, "-I", "-c", program], capture_output=True, text=True, timeout=20, check=False)
        listed = json.loads(done.stdout) if done.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []
    return list(dict.fromkeys(Path(p) for p in listed if isinstance(p, str) and Path(p).is_dir()))


def _distributions(site: Path) -> dict[str, tuple[str, str]]:
    """Top-level name -> (distribution, version), from each ``*.dist-info`` (top_level.txt, else RECORD)."""
    out: dict[str, tuple[str, str]] = {}
    for info in sorted(site.glob("*.dist-info")):
        dist, version = info.name[: -len(".dist-info")].partition("-")[::2]
        meta = info / "METADATA"
        if meta.is_file():
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Name:"):
                    dist = line[5:].strip()
                elif line.startswith("Version:"):
                    version = line[8:].strip()
                elif not line.strip():
                    break
        tops: set[str] = set()
        top_level = info / "top_level.txt"
        if top_level.is_file():
            tops = {t.strip() for t in top_level.read_text(encoding="utf-8", errors="replace").split() if t.strip()}
        elif (info / "RECORD").is_file():
            for row in (info / "RECORD").read_text(encoding="utf-8", errors="replace").splitlines():
                first = row.split(",", 1)[0].split("/", 1)[0]
                if first.endswith(_SOURCES):
                    tops.add(first.rsplit(".", 1)[0])
                elif first and not first.endswith((".dist-info", ".data")) and "." not in first:
                    tops.add(first)
        for top in tops:
            out.setdefault(top, (dist, version))
    return out


def installed_packages(wanted: Collection[str]) -> list[InstalledPackage]:
    """The installed top-level packages among ``wanted``, in name order (the first site-packages that has one)."""
    out: dict[str, InstalledPackage] = {}
    for site in site_directories():
        dists = _distributions(site)
        for top in sorted(wanted):
            if top in out or top in sys.stdlib_module_names:
                continue
            files: list[str] = []
            if (site / top).is_dir():
                files = sorted(p.relative_to(site).as_posix() for p in (site / top).rglob("*") if p.suffix in _SOURCES)
            else:
                files = [f"{top}{suffix}" for suffix in _SOURCES if (site / f"{top}{suffix}").is_file()]
            if files:
                dist, version = dists.get(top, (top, ""))
                out[top] = InstalledPackage(dist, version, top, site, tuple(files))
    return [out[k] for k in sorted(out)]


def fingerprint(packages: Collection[InstalledPackage]) -> bytes:
    """What the analyzer run reads of the installed packages: their identity and every file's bytes."""
    h = hashlib.blake2b(digest_size=20)
    for p in packages:
        h.update(f"{p.distribution}\0{p.version}\0{p.name}\0{p.site}\n".encode())
        for rel in p.files:
            try:
                data = (p.site / rel).read_bytes()
            except OSError:
                data = b""
            h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.digest()
