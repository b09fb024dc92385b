"""Real corpora at pinned versions, fetched from the package registries into a cache (never committed).

The cache directory is $KIVGRAPH_CACHE (default ~/.cache/kivgraph); a corpus
already there is not fetched again.

Crates come from the crate registry (``static.crates.io``, sha256 pinned) to
``<cache>/corpora/<name>-<version>/`` with a pinned Cargo.lock
(``benchmarks/rust_locks/``) beside their Cargo.toml, and their dependencies
(and the standard library's) are fetched once into a cargo home of our own,
``<cache>/cargo-home`` (``cargo_home()``): index with ``cargo_env()``
(``CARGO_HOME`` pointing there), so the offline analyzer run finds them.

Go modules come through the Go module proxy into a module cache of our own,
``<cache>/gomod`` (``go_modcache()``), and are copied, made writable, to
``<cache>/corpora/<name>-<version>/``. Their own dependencies are downloaded
into the same module cache, so that the hermetic analyzer run
(``GOPROXY=off``) finds them: run the indexer with ``go_env()``
(``GOMODCACHE`` pointing there).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
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
    # generic interfaces (simplelru.LRUCache[K, V]) with generic implementations: bench_go_agreement
    "golang-lru": ("github.com/hashicorp/golang-lru/v2", "v2.0.7"),
    # containers behind generic interfaces (Container[T], List[T], Map[K, V], Tree[K, V]): bench_go_agreement
    "gods": ("github.com/emirpasic/gods/v2", "v2.0.0-alpha"),
}


# name -> (npm package, version): tarballs that ship their TypeScript sources
NPM_CORPORA: dict[str, tuple[str, str]] = {
    "query-core": ("@tanstack/query-core", "5.59.0"),
    "effect": ("effect", "3.12.0"),
    "rxjs": ("rxjs", "7.8.1"),
    "react-query": ("@tanstack/react-query", "5.59.0"),  # ships src/; a consumer of query-core
    # built with tsdown: its build/modern/*.d.ts keep shared declarations in hashed chunk files
    # (subscribable-D2lAzdDi.d.ts, removable-B1nFbgZm.d.ts, hydration-DArUEfp7.d.ts) no entry exports
    "query-core-chunked": ("@tanstack/query-core", "5.108.4"),
    "react-query-chunked": ("@tanstack/react-query", "5.108.4"),
    # react-query's type dependencies, so that its hooks are typed as its own build sees them
    "types-react": ("@types/react", "18.3.12"),
    "types-prop-types": ("@types/prop-types", "15.7.15"),
    "csstype": ("csstype", "3.2.4"),
}
# A consumer corpus gets these corpora's published tarballs installed in its node_modules/<npm name>
# (a copy, as npm installs it: build output, no source map back to the provider's source).
NPM_INSTALLS: dict[str, tuple[str, ...]] = {
    "react-query": ("query-core", "types-react", "types-prop-types", "csstype"),
    "react-query-chunked": ("query-core-chunked", "types-react", "types-prop-types", "csstype"),
}


# name -> (version, sha256 of the .crate file)
RUST_CORPORA: dict[str, tuple[str, str]] = {
    "serde": ("1.0.215", "6513c1ad0b11a9376da888e3e0baa0077f1aed55c17f50e7b2397136129fb88f"),
    "serde_json": ("1.0.133", "c7fceb2473b9166b2294ef05efcb65a3db80803f0b03ef86a5fc88a2b85ee377"),
}
RUST_LOCKS = Path(__file__).resolve().parent / "rust_locks"
# A corpus whose pinned lock resolves a dependency to another corpus (as kivgraph's [patch] does when both are
# registered): consumer -> {dependency: corpus}
RUST_PATCHES: dict[str, dict[str, str]] = {"serde_json": {"serde": "serde"}}


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
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{name}=={version}",
                "-d",
                tmp,
            ],
            check=True,
            timeout=300,
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
    proc = subprocess.run(
        [go, "mod", "download", "-json", f"{module}@{version}"],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=600,
    )
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
        subprocess.run(
            [npm, "pack", "--silent", f"{package}@{version}"], cwd=tmp, check=True, capture_output=True, timeout=300
        )
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


def cargo_home() -> Path:
    """The cargo home the Rust corpora's dependencies (and the standard library's) are fetched into."""
    return cache_root() / "cargo-home"


def cargo_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment to index a Rust corpus with: ours, with CARGO_HOME at ``cargo_home()``."""
    return {**os.environ, "CARGO_HOME": str(cargo_home()), **(extra or {})}


def fetch_crate(name: str) -> Path:
    """The source of a pinned crate from the registry, its pinned Cargo.lock beside its Cargo.toml, and every
    dependency of that lock (and of the standard library's own workspace) in ``cargo_home()``."""
    version, sha256 = RUST_CORPORA[name]
    dest = cache_root() / "corpora" / f"{name}-{version}"
    marker = dest / ".kivgraph-complete"
    if marker.exists():
        return dest
    cargo = shutil.which("cargo")
    if cargo is None:
        raise RuntimeError("cargo is needed to fetch the Rust corpora's dependencies")
    url = f"https://static.crates.io/crates/{name}/{name}-{version}.crate"
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"{url}: sha256 {hashlib.sha256(data).hexdigest()}, pinned {sha256}")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(tmp) / f"{name}-{version}"), dest)
    shutil.copyfile(RUST_LOCKS / f"{name}-{version}.Cargo.lock", dest / "Cargo.lock")
    patches: list[str] = []
    for dep, corpus in RUST_PATCHES.get(name, {}).items():
        patches += ["--config", f"patch.crates-io.{dep}.path={json.dumps(str(fetch_crate(corpus)))}"]
    proc = subprocess.run(
        [cargo, "fetch", "--locked", *patches, "--manifest-path", str(dest / "Cargo.toml")],
        env=cargo_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"cargo fetch for {name} {version} failed: {proc.stderr[-1500:]}")
    from indexer.languages.rust.toolchain import fetch_sysroot_dependencies

    saved = os.environ.get("CARGO_HOME")
    os.environ["CARGO_HOME"] = str(cargo_home())
    try:
        print(f"{name}: {fetch_sysroot_dependencies()}", file=sys.stderr)
    finally:
        if saved is None:
            os.environ.pop("CARGO_HOME", None)
        else:
            os.environ["CARGO_HOME"] = saved
    marker.touch()
    return dest


if __name__ == "__main__":
    for corpus_name in sys.argv[1:] or list(PYPI_CORPORA):
        if corpus_name in NPM_CORPORA:
            print(fetch_npm_package(corpus_name))
            continue
        if corpus_name in RUST_CORPORA:
            print(fetch_crate(corpus_name))
            continue
        print(fetch_go_module(corpus_name) if corpus_name in GO_CORPORA else fetch_pypi_sdist(corpus_name))
