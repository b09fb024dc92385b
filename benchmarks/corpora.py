"""Real corpora at pinned versions, fetched from the package registries into a cache (never committed).

The cache directory is $KIVGRAPH_CACHE (default ~/.cache/kivgraph); a corpus
already there is not fetched again.

Go modules come through the Go module proxy into a module cache of our own,
``<cache>/gomod`` (``go_modcache()``), and are copied, made writable, to
``<cache>/corpora/<name>-<version>/``. Their own dependencies are downloaded
into the same module cache, so that the hermetic analyzer run
(``GOPROXY=off``) finds them: run the indexer with ``go_env()``
(``GOMODCACHE`` pointing there).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PYPI_CORPORA: dict[str, str] = {
    "click": "8.1.7",
    "typer": "0.12.3",
    "django": "5.1.4",  # large; scip-python 0.6.6 crashes on one of its test files (issue 10)
}

# name -> (module path, version)
GO_CORPORA: dict[str, tuple[str, str]] = {
    "pflag": ("github.com/spf13/pflag", "v1.0.9"),
    "cobra": ("github.com/spf13/cobra", "v1.10.2"),
    "zap": ("go.uber.org/zap", "v1.27.0"),  # many packages: bench_fresh's per-package exact pass
}


# name -> (npm package, version): tarballs that ship their TypeScript sources
NPM_CORPORA: dict[str, tuple[str, str]] = {
    "query-core": ("@tanstack/query-core", "5.59.0"),
    "effect": ("effect", "3.12.0"),
    "rxjs": ("rxjs", "7.8.1"),
    "react-query": ("@tanstack/react-query", "5.59.0"),  # ships src/; a consumer of query-core
    # react-query's type dependencies, so that its hooks are typed as its own build sees them
    "types-react": ("@types/react", "18.3.12"),
    "types-prop-types": ("@types/prop-types", "15.7.15"),
    "csstype": ("csstype", "3.2.4"),
}
# A consumer corpus gets these corpora's published tarballs installed in its node_modules/<npm name>
# (a copy, as npm installs it: build output, no source map back to the provider's source).
NPM_INSTALLS: dict[str, tuple[str, ...]] = {
    "react-query": ("query-core", "types-react", "types-prop-types", "csstype"),
}


def cache_root() -> Path:
    root = Path(os.environ.get("KIVGRAPH_CACHE") or Path.home() / ".cache" / "kivgraph")
    root.mkdir(parents=True, exist_ok=True)
    return root


def fetch_pypi_sdist(name: str, version: str | None = None) -> Path:
    """Unpacked source of ``name==version`` from its PyPI sdist; returns the source directory."""
    version = version or PYPI_CORPORA[name]
    dest = cache_root() / "corpora" / f"{name}-{version}"
    marker = dest / ".kivgraph-complete"
    if marker.exists():
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             f"{name}=={version}", "-d", tmp],
            check=True, timeout=300,
        )
        archives = [p for p in Path(tmp).iterdir() if p.name.endswith((".tar.gz", ".tgz"))]
        if len(archives) != 1:
            raise RuntimeError(f"expected one sdist for {name}=={version}, got {[p.name for p in Path(tmp).iterdir()]}")
        unpack = Path(tmp) / "unpacked"
        with tarfile.open(archives[0]) as tar:
            tar.extractall(unpack, filter="data")
        (top,) = list(unpack.iterdir())
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(top), dest)
    marker.touch()
    return dest


def go_modcache() -> Path:
    """The module cache the Go corpora and their dependencies are downloaded into: ``<cache>/gomod``."""
    return cache_root() / "gomod"


def go_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment to index a Go corpus with: ours, with GOMODCACHE at ``go_modcache()``."""
    return {**os.environ, "GOMODCACHE": str(go_modcache()), **(extra or {})}


def _go_fetch_env() -> dict[str, str]:
    env = go_env({"GOFLAGS": "-mod=mod", "GOWORK": "off", "GOTOOLCHAIN": "local"})
    if env.get("GOPROXY", "") in ("", "off"):
        env["GOPROXY"] = "https://proxy.golang.org"
    return env


def _make_writable(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            p = Path(dirpath, name)
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    root.chmod(root.stat().st_mode | stat.S_IWUSR)


def fetch_go_module(name: str) -> Path:
    """The source of a pinned Go module, through the module proxy; its dependencies land in ``go_modcache()``.

    ``go mod download -json module@version`` into ``go_modcache()``, then the
    extracted (read-only) module directory is copied to
    ``<cache>/corpora/<name>-<version>/`` and made writable, then ``go mod
    download`` in the copy fetches every module of its build list into the
    same module cache.
    """
    module, version = GO_CORPORA[name]
    dest = cache_root() / "corpora" / f"{name}-{version}"
    marker = dest / ".kivgraph-complete"
    if marker.exists():
        return dest
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("the go toolchain is needed to fetch Go corpora")
    env = _go_fetch_env()
    proc = subprocess.run([go, "mod", "download", "-json", f"{module}@{version}"], env=env, cwd=tempfile.gettempdir(),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"go mod download {module}@{version} failed: {proc.stdout[-1000:]} {proc.stderr[-1000:]}")
    info = json.loads(proc.stdout)
    if info.get("Error"):
        raise RuntimeError(f"go mod download {module}@{version}: {info['Error']}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(info["Dir"], dest)
    _make_writable(dest)
    subprocess.run([go, "mod", "download"], env=env, cwd=dest, check=True, capture_output=True, timeout=600)
    marker.touch()
    return dest


def fetch_npm_package(name: str) -> Path:
    """The unpacked tarball of a pinned npm package (``npm pack``), at ``<cache>/corpora/<name>-<version>/``,
    with the tarballs ``NPM_INSTALLS`` names for it copied into its ``node_modules``."""
    package, version = NPM_CORPORA[name]
    dest = cache_root() / "corpora" / f"{name}-{version}"
    marker = dest / ".kivgraph-complete"
    if not marker.exists():
        _fetch_npm_tarball(package, version, dest)
    for dependency in NPM_INSTALLS.get(name, ()):
        installed = dest / "node_modules" / NPM_CORPORA[dependency][0]
        if not (installed / "package.json").is_file():
            staging = installed.with_name(installed.name + ".tmp")
            shutil.rmtree(staging, ignore_errors=True)
            shutil.copytree(fetch_npm_package(dependency), staging, ignore=shutil.ignore_patterns(marker.name))
            staging.rename(installed)
    return dest


def _fetch_npm_tarball(package: str, version: str, dest: Path) -> None:
    marker = dest / ".kivgraph-complete"
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to fetch npm corpora")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", "--silent", f"{package}@{version}"], cwd=tmp, check=True, capture_output=True,
                       timeout=300)
        (archive,) = [p for p in Path(tmp).iterdir() if p.name.endswith(".tgz")]
        unpack = Path(tmp) / "unpacked"
        with tarfile.open(archive) as tar:
            tar.extractall(unpack, filter="data")
        (top,) = list(unpack.iterdir())  # "package/", except for @types tarballs ("react/")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(top), dest)
    marker.touch()


if __name__ == "__main__":
    for corpus_name in sys.argv[1:] or list(PYPI_CORPORA):
        if corpus_name in NPM_CORPORA:
            print(fetch_npm_package(corpus_name))
            continue
        print(fetch_go_module(corpus_name) if corpus_name in GO_CORPORA else fetch_pypi_sdist(corpus_name))
