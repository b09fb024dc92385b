"""A crate registry on 127.0.0.1 for tests: cargo's sparse protocol over HTTP, from crates the test writes.

``LocalRegistry`` serves ``config.json``, the index files and the ``.crate``
downloads of the crates added with ``add`` (a real gzip tarball, its sha256 in
the index line, as crates.io serves them). A crate it was not given is taken
from a cargo home of this machine (``mirror``), read-only: its index lines
from that home's index cache and its ``.crate`` from that home's download
cache. So a cargo home that starts empty can fetch the standard library's
dependencies through it, and nothing leaves the machine.

``user_home(path)`` writes a cargo home whose ``config.toml`` replaces
crates.io with this registry: cargo run with it fetches from here.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from indexer.languages.rust import dependencies


def crate_archive(name: str, version: str, files: dict[str, str]) -> bytes:
    """A ``.crate`` file: a gzip tarball of ``name-version/`` with the given files (Cargo.toml among them)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{rel}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


@dataclass
class LocalRegistry:
    mirror: Path | None = None  # a cargo home whose caches answer for crates not added here
    crates: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    archives: dict[tuple[str, str], bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None

    def add(
        self,
        name: str,
        version: str,
        deps: dict[str, str] | None = None,
        lib: str = "",
        targets: dict[str, str] | None = None,
        files: dict[str, str] | None = None,
    ) -> None:
        """A library crate ``name`` ``version`` with normal dependencies ``{name: requirement}``, those named in
        ``targets`` only for that platform (``{"base": "cfg(any())"}``, serde's trick to pin a version); ``files``, when
        given, are the crate's other files (``src/...``) besides its Cargo.toml."""
        deps, targets = deps or {}, targets or {}
        plain = "".join(f'{d} = "{req}"\n' for d, req in sorted(deps.items()) if d not in targets)
        scoped = "".join(
            f"\n[target.'{targets[d]}'.dependencies]\n{d} = \"{req}\"\n"
            for d, req in sorted(deps.items())
            if d in targets
        )
        manifest = f'[package]\nname = "{name}"\nversion = "{version}"\nedition = "2021"\n\n[dependencies]\n'
        manifest += plain + scoped
        sources = dict(files) if files else {"src/lib.rs": lib or "pub fn f() {}\n"}
        data = crate_archive(name, version, {**sources, "Cargo.toml": manifest})
        self.archives[(name, version)] = data
        self.crates.setdefault(name, []).append(
            {
                "name": name,
                "vers": version,
                "deps": [
                    {
                        "name": d,
                        "req": req,
                        "features": [],
                        "optional": False,
                        "default_features": True,
                        "target": targets.get(d),
                        "kind": "normal",
                    }
                    for d, req in sorted(deps.items())
                ],
                "cksum": hashlib.sha256(data).hexdigest(),
                "features": {},
                "yanked": False,
            }
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _index(self, name: str) -> bytes | None:
        if name in self.crates:
            return b"".join(json.dumps(v).encode() + b"\n" for v in self.crates[name])
        if self.mirror is None:
            return None
        entries = dependencies.index_entries([self.mirror], name)
        return b"".join(json.dumps(e).encode() + b"\n" for e in entries) if entries else None

    def _download(self, name: str, version: str) -> bytes | None:
        if (name, version) in self.archives:
            return self.archives[(name, version)]
        if self.mirror is None:
            return None
        for cache in sorted((self.mirror / "registry" / "cache").glob("*")):
            path = cache / f"{name}-{version}.crate"
            if path.is_file():
                return path.read_bytes()
        return None

    def __enter__(self) -> LocalRegistry:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.requests.append(self.path)
                body: bytes | None
                if self.path == "/index/config.json":
                    body = json.dumps({"dl": f"{registry.url}/dl/{{crate}}/{{version}}"}).encode()
                elif self.path.startswith("/index/"):
                    body = registry._index(self.path.rsplit("/", 1)[-1])
                elif self.path.startswith("/dl/"):
                    _, _, name, version = self.path.split("/", 3)
                    body = registry._download(name, version)
                else:
                    body = None
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def user_home(self, path: Path) -> Path:
        """A cargo home whose config replaces crates.io with this registry (nothing cached in it yet)."""
        return write_replacement(path, f"sparse+{self.url}/index/")


def write_replacement(path: Path, index: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "kivgraph-test"\n\n'
        f'[source.kivgraph-test]\nregistry = "{index}"\n\n'
        "[net]\nretry = 0\n"
    )
    return path


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def iter_requests(registry: LocalRegistry, prefix: str) -> Iterator[str]:
    return (r for r in registry.requests if r.startswith(prefix))
