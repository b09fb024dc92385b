"""Real corpora at pinned versions, fetched from the package registries into a cache (never committed).

The cache directory is $KIVGRAPH_CACHE (default ~/.cache/kivgraph); a corpus
already there is not fetched again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PYPI_CORPORA: dict[str, str] = {
    "click": "8.1.7",
    "typer": "0.12.3",
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


if __name__ == "__main__":
    for corpus_name in sys.argv[1:] or list(PYPI_CORPORA):
        print(fetch_pypi_sdist(corpus_name))
