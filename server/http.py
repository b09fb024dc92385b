"""``kivgraph serve --http``: one server for a team, over the MCP SDK's streamable HTTP transport at ``/mcp``.

The MCP side is the stdio server's own: one ``KivgraphApp`` (one holder, one tool registry, one
list_changed path) serves every session; the SDK's ``StreamableHTTPSessionManager`` runs the sessions
(idle ones expire, a closed one is discarded with everything it held). In front of it, a small ASGI gate
answers, in this order and before any MCP message is read (docs/surface.md §1.5):

1. a path other than ``/mcp``: 404;
2. a Host header that is not one the server answers to (loopback by default, ``--allowed-host`` adds
   names): 421; an Origin header whose host is not one of them: 403 (DNS rebinding);
3. no token, a malformed, unknown or revoked one: 401 (the body names no token);
4. a token past its rate (a token bucket per token): 429 with ``Retry-After``;
5. a body over the limit: 413 (the SDK's check, with our limit).

Then the request carries its token's ``Access`` (server/access.py) into the MCP handlers, and the SDK binds
each session to the token that opened it (another token presenting its session id gets 404).
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import logging
import math
import os
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from server.access import Access
from server.app import ACCESS_KEY, KivgraphApp, ServeOptions
from server.audit import AuditLog
from snapshot_format.layout import StateLayout
from snapshot_format.tokens import TokenRecord, TokenStoreError, parse_token, read_store, tokens_path, verify

log = logging.getLogger("kivgraph.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MCP_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_MAX_BODY_BYTES = 4 << 20  # the stdio transport's message limit (server/wire.py)
DEFAULT_RATE = 20.0  # requests per second per token, sustained
DEFAULT_BURST = 200  # requests a token may make at once
DEFAULT_SESSION_IDLE_SECONDS = 30 * 60
DEFAULT_MAX_SESSIONS = 1000
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class HttpAddressError(ValueError):
    """``--http`` or ``--allowed-host`` does not name an address; the message says which."""


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1); port 0 picks a free one."""
    value = text.strip()
    if value.isdigit():
        host, port_text = "", value
    elif value.startswith("["):
        host, sep, port_text = value[1:].partition("]:")
        if not sep:
            raise HttpAddressError(f"--http {text!r}: an IPv6 address is written [ADDRESS]:PORT")
    else:
        host, sep, port_text = value.rpartition(":")
        if not sep:
            raise HttpAddressError(f"--http {text!r}: expected HOST:PORT (for example 127.0.0.1:8765)")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise HttpAddressError(f"--http {text!r}: the port must be a number from 0 to 65535")
    return host or DEFAULT_HOST, int(port_text)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpOptions:
    """How the HTTP server listens and what it lets through."""

    host: str = DEFAULT_HOST
    port: int = 0
    allowed_hosts: tuple[str, ...] = ()  # names beyond the loopback ones, "name" or "name:port"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate: float = DEFAULT_RATE
    burst: int = DEFAULT_BURST
    session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS
    max_sessions: int = DEFAULT_MAX_SESSIONS


class HostRules:
    """Which Host and Origin values the server answers to: the loopback names, plus ``--allowed-host``."""

    def __init__(self, allowed: tuple[str, ...]) -> None:
        self._any_port = {n.lower() for n in LOOPBACK_NAMES}
        self._exact: set[str] = set()
        for raw in allowed:
            name = raw.strip().lower()
            if not name or any(c in name for c in "/@?# "):
                raise HttpAddressError(f"--allowed-host {raw!r}: expected a host name, optionally :PORT")
            host, sep, port = name.rpartition(":")
            if sep and port.isdigit() and (":" not in host or host.endswith("]")):
                self._exact.add(name)
            elif ":" in name and not (name.startswith("[") and name.endswith("]")):
                raise HttpAddressError(f"--allowed-host {raw!r}: write an IPv6 address in brackets, [::1]")
            else:
                self._any_port.add(name)

    def host_ok(self, host: str | None) -> bool:
        if not host:
            return False
        host = host.strip().lower()
        if host in self._exact or host in self._any_port:
            return True
        name, _, port = host.rpartition(":")
        return bool(port.isdigit() and name in self._any_port)

    def origin_ok(self, origin: str) -> bool:
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
            return False
        return self.host_ok(parts.netloc)


class TokenBook:
    """The token store as the server reads it: read again whenever the file changes (one stat per request).

    A store that cannot be read refuses every token (and says why in the log) until it can.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._signature: tuple[int, int, int] | None = None
        self._by_id: dict[str, TokenRecord] = {}

    def _signature_now(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError:
            return (-1, -1, -1)
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _refresh(self) -> None:
        signature = self._signature_now()
        if signature == self._signature and (signature is not None or not self._by_id):
            return
        with self._lock:
            try:
                records = read_store(self.path)
            except TokenStoreError as exc:
                log.error("every token is refused until the token store can be read: %s", exc)
                records = ()
            self._by_id = {r.id: r for r in records}
            self._signature = signature

    def count(self) -> int:
        self._refresh()
        return len(self._by_id)

    def lookup(self, presented: str) -> TokenRecord | None:
        """The record of a valid token, else None (malformed, unknown and revoked alike)."""
        self._refresh()
        parsed = parse_token(presented)
        if parsed is None:
            return None
        record = self._by_id.get(parsed[0])
        return record if record is not None and verify(record, parsed[1]) else None


class RateLimiter:
    """A token bucket per token: ``burst`` requests at once, ``rate`` a second after that."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # token id -> (tokens left, when)
        self._lock = threading.Lock()

    def wait(self, key: str, now: float | None = None) -> float:
        """0 when the request may go now (and it is counted), else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        with self._lock:
            left, then = self._buckets.get(key, (float(self.burst), now))
            left = min(float(self.burst), left + (now - then) * self.rate)
            if left >= 1.0:
                self._buckets[key] = (left - 1.0, now)
                return 0.0
            self._buckets[key] = (left, now)
            return (1.0 - left) / self.rate


def _json_response(
    status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]
) -> Callable[[Send], Awaitable[None]]:
    data = json.dumps(body).encode()

    async def respond(send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()),
                    *headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})

    return respond


_MISSING_TOKEN = (
    401,
    {"error": "invalid_request", "error_description": "an Authorization: Bearer token is required"},
    [(b"www-authenticate", b'Bearer realm="kivgraph"')],
)
_BAD_TOKEN = (
    401,
    {"error": "invalid_token", "error_description": "the bearer token is not valid"},
    [(b"www-authenticate", b'Bearer realm="kivgraph", error="invalid_token"')],
)


class Gate:
    """The ASGI application: the checks above, then the SDK's session manager."""

    def __init__(
        self,
        handle: Callable[[Scope, Receive, Send], Awaitable[None]],
        book: TokenBook,
        limiter: RateLimiter,
        hosts: HostRules,
        audit: AuditLog,
    ) -> None:
        self._handle = handle
        self._book = book
        self._limiter = limiter
        self._hosts = hosts
        self._audit = audit
        self._principals: dict[TokenRecord, tuple[AuthenticatedUser, Access]] = {}  # built once per token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        refusal = self._check(scope)
        if isinstance(refusal, tuple):
            status, body, headers = refusal
            await _json_response(status, body, headers)(send)
            return
        await self._handle(refusal, receive, send)

    def _check(self, scope: Scope) -> Scope | tuple[int, dict[str, Any], list[tuple[bytes, bytes]]]:
        """The scope to serve (with the token's Access), or the refusal."""
        if scope.get("path") not in (MCP_PATH, MCP_PATH + "/"):
            return 404, {"error": "not_found", "error_description": f"the MCP endpoint is {MCP_PATH}"}, []
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        host = headers.get("host")
        if not self._hosts.host_ok(host):
            log.warning("refused a request for Host %r (not an allowed host)", (host or "")[:80])
            return (
                421,
                {"error": "host_not_allowed", "error_description": "this server does not answer to that Host"},
                [],
            )
        origin = headers.get("origin")
        if origin is not None and not self._hosts.origin_ok(origin):
            log.warning("refused a request from Origin %r (not an allowed host)", origin[:80])
            return (
                403,
                {"error": "origin_not_allowed", "error_description": "requests from that Origin are refused"},
                [],
            )
        authorization = headers.get("authorization", "").strip()
        if not authorization:
            return _MISSING_TOKEN
        scheme, _, presented = authorization.partition(" ")
        record = self._book.lookup(presented.strip()) if scheme.lower() == "bearer" else None
        if record is None:
            return _BAD_TOKEN
        wait = self._limiter.wait(record.id)
        if wait > 0:
            retry = max(1, math.ceil(wait))
            return (
                429,
                {"error": "rate_limited", "error_description": f"too many requests for this token; retry in {retry} s"},
                [(b"retry-after", str(retry).encode())],
            )
        self._audit.used(record.name, record.id, session_start="mcp-session-id" not in headers)
        found = self._principals.get(record)
        if found is None:
            if len(self._principals) > 10_000:
                self._principals.clear()
            # The SDK binds a session to the principal that opened it: the token's id.
            principal = AccessToken(token=record.id, client_id=record.id, scopes=[record.scope])
            access = Access(token=record.name, token_id=record.id, scope=record.scope, repositories=record.repositories)
            found = self._principals[record] = (AuthenticatedUser(principal), access)
        return {**scope, "user": found[0], ACCESS_KEY: found[1]}


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HttpAddressError(f"--http {host}:{port}: cannot listen there: {exc.strerror or exc}") from None
    sock.listen(1024)
    sock.set_inheritable(False)
    return sock


@dataclass
class RunningHttp:
    """A server that is listening: where, its app (for in-process tests), and how to stop it."""

    url: str
    app: KivgraphApp
    server: Any  # uvicorn.Server

    def stop(self) -> None:
        """Ask the server to finish its requests and return (as SIGTERM does)."""
        self.server.should_exit = True


async def serve_http(
    layout: StateLayout, http: HttpOptions, serve: ServeOptions, on_ready: Callable[[RunningHttp], None] | None = None
) -> None:
    """Serve every session on ``http.host:http.port`` until stopped (SIGINT, SIGTERM or ``RunningHttp.stop``)."""
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = HostRules(http.allowed_hosts)
    sock = _listen(http.host, http.port)
    shown = f"[{http.host}]" if ":" in http.host else http.host
    url = f"http://{shown}:{sock.getsockname()[1]}{MCP_PATH}"
    audit = AuditLog(layout.log_dir)
    book = TokenBook(tokens_path(layout))
    app = KivgraphApp(layout, dataclasses.replace(serve, require_access=True, audit=audit))
    manager = StreamableHTTPSessionManager(
        app=app.server,
        # The gate checked Host and Origin already (with the names it was given); the SDK's own check stays
        # off rather than checking a second list that could disagree.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=http.max_body_bytes,
        session_idle_timeout=http.session_idle_seconds,
        max_sessions=http.max_sessions,
    )
    gate = Gate(manager.handle_request, book, RateLimiter(http.rate, http.burst), hosts, audit)
    config = uvicorn.Config(
        gate, lifespan="off", log_config=None, access_log=False, server_header=False, timeout_graceful_shutdown=5
    )

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """SIGINT and SIGTERM stop the server gracefully and the process exits 0 (uvicorn re-raises them)."""
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    server = _Server(config)
    log.info(
        "listening on %s; serving %s from %s (%s tokens)",
        url,
        app.holder.current_name or "no generation yet",
        layout.state_dir,
        book.count(),
    )
    if not _is_loopback(http.host) and not http.allowed_hosts:
        log.warning(
            "listening on %s but answering only to loopback Host names: pass --allowed-host with the name clients use",
            http.host,
        )
    try:
        async with manager.run():
            if on_ready is not None:
                on_ready(RunningHttp(url, app, server))  # the socket listens already: connections queue
            await server.serve(sockets=[sock])
    finally:
        sock.close()
        app.holder.close()
        audit.close()


def run_http(layout: StateLayout, http: HttpOptions, serve: ServeOptions) -> None:
    """``kivgraph serve --http``: serve until SIGINT or SIGTERM."""
    import anyio

    try:
        anyio.run(serve_http, layout, http, serve)
    except KeyboardInterrupt:
        pass
    log.info("HTTP server stopped")
