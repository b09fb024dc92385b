"""Token counts with OpenAI's o200k_base encoding, offline.

tiktoken (PyPI) downloads its encoding files from a blob store on first use, which these machines cannot
reach. The same ranks ship inside the npm package js-tiktoken (``dist/ranks/o200k_base.js``, a compressed
listing); ``install`` fetches that package with npm, rewrites the listing as the ``.tiktoken`` file tiktoken
expects, checks its SHA-256 against the hash tiktoken itself pins for o200k_base, and stores it where
tiktoken's cache looks (``$KIVGRAPH_CACHE/tiktoken``). From then on ``count`` works with no network.

    python -m benchmarks.tokenizer --install   # make setup runs this; idempotent
    python -m benchmarks.tokenizer FILE...     # tokens of each file
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

JS_TIKTOKEN = "js-tiktoken@1.0.21"
ENCODING = "o200k_base"
# What tiktoken_ext.openai_public fetches (the cache file is named by the SHA-1 of this address) and the
# SHA-256 it requires of the content.
_SOURCE = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


class TokenizerMissing(RuntimeError):
    """The o200k_base file is not installed: ``make setup`` installs it."""


def cache_dir() -> Path:
    root = os.environ.get("KIVGRAPH_CACHE") or str(Path.home() / ".cache" / "kivgraph")
    return Path(root) / "tiktoken"


def ranks_file() -> Path:
    return cache_dir() / hashlib.sha1(_SOURCE.encode()).hexdigest()


def ranks_from_js(listing: str) -> bytes:
    """js-tiktoken's ``bpe_ranks`` (lines of ``<marker> <first rank> <base64 token>…``) as a ``.tiktoken`` file."""
    pairs: list[tuple[int, str]] = []
    for line in listing.split("\n"):
        if not line:
            continue
        fields = line.split(" ")
        first = int(fields[1])
        pairs.extend((first + i, token) for i, token in enumerate(fields[2:]))
    pairs.sort()
    return "".join(f"{token} {rank}\n" for rank, token in pairs).encode("ascii")


def install(timeout: float = 600) -> str:
    """Install the o200k_base ranks unless present; a one-line status (``FAILED`` in it on failure)."""
    target = ranks_file()
    label = f"o200k_base tokenizer (ranks from {JS_TIKTOKEN})"
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == _SHA256:
        return f"{label}: already installed in {target.parent}"
    npm = shutil.which("npm")
    if npm is None:
        return f"{label}: FAILED (npm not found: install Node.js and npm, then run make setup again)"
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run(
            [npm, "pack", JS_TIKTOKEN, "--silent"], cwd=scratch, capture_output=True, text=True, timeout=timeout
        )
        tarballs = list(Path(scratch).glob("js-tiktoken-*.tgz"))
        if proc.returncode != 0 or not tarballs:
            return f"{label}: FAILED (npm pack {JS_TIKTOKEN}: {' '.join((proc.stderr or proc.stdout).split())[-200:]})"
        with tarfile.open(tarballs[0]) as tar:
            member = tar.extractfile("package/dist/ranks/o200k_base.js")
            if member is None:
                return f"{label}: FAILED ({JS_TIKTOKEN} has no dist/ranks/o200k_base.js)"
            source = member.read().decode("utf-8")
    payload: dict[str, Any] = json.loads(source.removeprefix("export default ").rstrip().rstrip(";"))
    data = ranks_from_js(payload["bpe_ranks"])
    digest = hashlib.sha256(data).hexdigest()
    if digest != _SHA256:
        return f"{label}: FAILED (the rebuilt ranks hash to {digest}, not tiktoken's {_SHA256})"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, target)
    return f"{label}: installed in {target.parent}"


@functools.cache
def _encoding() -> Any:
    if not ranks_file().exists():
        raise TokenizerMissing(f"the o200k_base ranks are not installed in {cache_dir()}: run `make setup`")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir())
    try:
        import tiktoken
    except ImportError:
        raise TokenizerMissing("tiktoken is not installed: run `make setup`") from None
    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    """o200k_base tokens of ``text`` (special-token text counted as ordinary text)."""
    return len(_encoding().encode(text, disallowed_special=()))


def main(argv: list[str]) -> int:
    if argv == ["--install"]:
        status = install()
        print(f"tools: {status}")
        return 1 if "FAILED" in status else 0
    for name in argv:
        print(f"{count(Path(name).read_text(encoding='utf-8', errors='replace'))}\t{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
