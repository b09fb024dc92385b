"""rust-analyzer's own references, as its language server answers them: the oracle of bench_rust_agreement.

One ``rust-analyzer`` LSP session over stdio per workspace: ``initialize``
(with the server-status notification, so we know when it has loaded the
workspace), wait until it says it is quiescent, then every
``textDocument/references`` request at once (batched: one session, one load),
each answer collected by its id. A site the reference listing leaves out can then
be checked with rust-analyzer's own goto-definition there (``definitions``). The session runs with the same offline cargo
environment as kivgraph's exact pass (the shim, the patched providers), so both
see the same crate graph, but it answers from rust-analyzer's IDE analysis, not
from the SCIP index kivgraph ingested.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote


class LspError(RuntimeError):
    """The server died, answered an error, or did not answer within the bound."""


class Session:
    """A rust-analyzer language server on stdio (Content-Length framed JSON-RPC)."""

    def __init__(self, exe: Path, root: Path, env: dict[str, str], *, timeout: float = 900) -> None:
        self.proc = subprocess.Popen(
            [str(exe)],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.root = root
        self.deadline = time.monotonic() + timeout
        self.buf = b""
        self.next_id = 0
        self.answers: dict[int, Any] = {}
        self.quiescent = False

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=20)
        except (LspError, subprocess.TimeoutExpired, OSError):
            pass
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send(self, method: str, params: Any) -> int:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def request(self, method: str, params: Any) -> Any:
        return self.wait_for([self.send(method, params)])[0]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise LspError("rust-analyzer did not answer in time")
            ready, _, _ = select.select([fd], [], [], min(left, 5))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise LspError(f"rust-analyzer exited ({self.proc.poll()})")
                self.buf += chunk

    def _handle(self, msg: dict[str, Any]) -> None:
        if "id" in msg and "method" in msg:  # a request from the server: accept it
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif msg.get("method") == "experimental/serverStatus":
            self.quiescent = bool(msg["params"].get("quiescent"))
        elif "id" in msg:
            if "error" in msg:
                raise LspError(f"request {msg['id']} failed: {msg['error']}")
            self.answers[msg["id"]] = msg.get("result")

    def wait_for(self, ids: list[int]) -> list[Any]:
        while not all(i in self.answers for i in ids):
            self._handle(self._read())
        return [self.answers.pop(i) for i in ids]

    def wait_quiescent(self) -> None:
        while not self.quiescent:
            self._handle(self._read())


class Oracle:
    """One rust-analyzer language server session over a workspace: load once, then batched requests."""

    def __init__(self, exe: Path, root: Path, env: dict[str, str], *, timeout: float = 1800) -> None:
        self.session = Session(exe, root, env, timeout=timeout)
        started = time.monotonic()
        self.session.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.resolve().as_uri(),
                "capabilities": {
                    "experimental": {"serverStatusNotification": True},
                    "window": {"workDoneProgress": False},
                },
                "initializationOptions": {"checkOnSave": False, "cachePriming": {"enable": True}},
            },
        )
        self.session.notify("initialized", {})
        self.session.wait_quiescent()
        self.loaded = time.monotonic() - started

    def _batch(self, method: str, queries: list[tuple[Path, int, int]], extra: dict[str, Any]) -> list[Any]:
        ids = [
            self.session.send(
                method,
                {
                    "textDocument": {"uri": path.resolve().as_uri()},
                    "position": {"line": line, "character": col},
                    **extra,
                },
            )
            for path, line, col in queries
        ]
        return self.session.wait_for(ids)

    def references(self, queries: list[tuple[Path, int, int]]) -> list[list[tuple[str, int, int]]]:
        """For each (file, 0-based line, UTF-16 column): every reference (absolute path, line, column), the
        declaration excluded."""
        return [
            _locations(r)
            for r in self._batch("textDocument/references", queries, {"context": {"includeDeclaration": False}})
        ]

    def definitions(self, queries: list[tuple[Path, int, int]]) -> list[list[tuple[str, int, int]]]:
        """For each (file, 0-based line, UTF-16 column): where rust-analyzer's goto-definition goes."""
        return [_locations(r) for r in self._batch("textDocument/definition", queries, {})]

    def close(self) -> None:
        self.session.close()


def _locations(result: Any) -> list[tuple[str, int, int]]:
    if isinstance(result, dict):
        result = [result]
    rows = []
    for loc in result or []:
        uri = loc.get("uri") or loc.get("targetUri", "")
        rng = loc.get("range") or loc.get("targetSelectionRange") or loc.get("targetRange")
        path = unquote(uri[len("file://") :]) if uri.startswith("file://") else uri
        rows.append((path, rng["start"]["line"], rng["start"]["character"]))
    return rows
