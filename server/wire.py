"""The stdin side of the stdio transport: every line gets an answer, and no line can grow memory without bound.

The SDK's stdio transport drops a line it cannot validate as a JSON-RPC message
without answering, so a client that sent ``"params": [1, 2, 3]``, a batch,
``"id": null``, a lone surrogate, a deeply nested value or malformed JSON waits
forever. ``ScreenedStdin`` sits in front of it: it reads stdin in chunks, refuses
a line longer than ``MAX_MESSAGE_BYTES`` while it arrives (discarding it, so a
50 MB message costs no more than the limit), and answers each line it refuses
with a JSON-RPC error (the request's id when it has a usable one, else null).
Lines it accepts go to the SDK unchanged.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from typing import IO, Any, Protocol

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger("kivgraph.serve")

MAX_MESSAGE_BYTES = 4 << 20
MAX_DEPTH = 64
_CHUNK = 1 << 16
_SURROGATE = re.compile("[\ud800-\udfff]")
_MISSING = object()


class _Sender(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


def _error(request_id: object, code: int, message: str) -> types.JSONRPCError:
    rid = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message))


def _shape_problem(message: Any) -> str:
    """Nesting deeper than MAX_DEPTH or a string that is not Unicode text, else ""."""
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return "a string holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text"
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                return f"the message nests deeper than {MAX_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and _SURROGATE.search(key):
                    return "a key holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text"
                stack.append((item, depth + 1))
    return ""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ID_VALUE = re.compile(r'\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.)*")')


def _depth_and_id(text: str) -> tuple[bool, object]:
    """Whether brackets nest deeper than MAX_DEPTH, and the top-level id if one can be read — without
    parsing, so a hostile nesting never reaches a recursive parser and its error still carries the id."""
    depth = deepest = 0
    found: object = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            if depth == 1 and token == '"id"' and found is None:
                value = _ID_VALUE.match(text, match.end())
                if value:
                    found = json.loads(value.group(1))
        elif token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest > MAX_DEPTH, found


def screen(line: bytes) -> tuple[str | None, types.JSONRPCError | None]:
    """(line for the SDK, None) when it is a well-formed message; (None, error to send) otherwise.

    A blank line is (None, None): nothing to pass, nothing to answer.
    """
    stripped = line.strip()
    if not stripped:
        return None, None
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, _error(None, types.PARSE_ERROR, f"parse error: the message is not UTF-8 (byte {exc.start})")
    if text.count("{") + text.count("[") > MAX_DEPTH:  # cheap test first: only then scan for the depth
        too_deep, request_id = _depth_and_id(text)
        if too_deep:
            return None, _error(request_id, types.INVALID_REQUEST, f"the message nests deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(text)
    except RecursionError:  # unreachable after the depth scan; kept so no input can escape as a traceback
        return None, _error(None, types.INVALID_REQUEST, f"the message nests deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return None, _error(None, types.PARSE_ERROR, f"parse error: {exc}")
    if isinstance(message, list):
        return None, _error(None, types.INVALID_REQUEST, "batches are not supported: send one message per line")
    if not isinstance(message, dict):
        return None, _error(None, types.INVALID_REQUEST, "a message must be a JSON object")
    request_id = message.get("id", _MISSING)
    if message.get("jsonrpc") != "2.0":
        return None, _error(request_id, types.INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if request_id is not _MISSING and (not isinstance(request_id, (str, int)) or isinstance(request_id, bool)):
        return None, _error(
            None, types.INVALID_REQUEST, f"id must be a string or an integer, got {json.dumps(request_id)[:40]}"
        )
    problem = _shape_problem(message)
    if problem:
        return None, _error(request_id, types.INVALID_REQUEST, problem)
    if "method" in message:
        if not isinstance(message["method"], str):
            return None, _error(request_id, types.INVALID_REQUEST, "method must be a string")
        params = message.get("params", _MISSING)
        if params is not _MISSING and not isinstance(params, dict):
            return None, _error(
                request_id, types.INVALID_PARAMS, f"params must be an object, got {type(params).__name__}"
            )
    elif request_id is _MISSING or ("result" not in message and "error" not in message):
        return None, _error(request_id, types.INVALID_REQUEST, "neither a request, a notification nor a response")
    return text, None


class ScreenedStdin:
    """An async line source for ``mcp.server.stdio.stdio_server(stdin=...)`` that answers what it refuses."""

    def __init__(self, raw: IO[bytes], limit: int = MAX_MESSAGE_BYTES) -> None:
        self._file = anyio.wrap_file(raw)
        self._limit = limit
        self._responder: _Sender | None = None
        self._attached = anyio.Event()

    def attach(self, write_stream: _Sender) -> None:
        """Where refusals are written: the transport's own write stream (so frames never interleave)."""
        self._responder = write_stream
        self._attached.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        pending = bytearray()
        dropped = 0  # bytes of an oversized line discarded so far
        while True:
            chunk = await self._file.read1(_CHUNK)
            if not chunk:
                break
            pending += chunk
            while True:
                newline = pending.find(b"\n")
                if newline < 0:
                    if len(pending) + dropped > self._limit:
                        dropped += len(pending)
                        pending = bytearray()  # a fresh buffer: the large one is freed now
                    break
                line = bytes(pending[:newline])
                del pending[: newline + 1]
                if dropped:
                    size = dropped + len(line)
                    dropped = 0
                    await self._refuse(
                        _error(
                            None,
                            types.INVALID_REQUEST,
                            f"message of {size} bytes refused: the limit is {self._limit} bytes",
                        )
                    )
                    continue
                text, error = screen(line)
                if error is not None:
                    await self._refuse(error)
                elif text is not None:
                    yield text
            if len(pending) == 0 and pending.__sizeof__() > 2 * _CHUNK:
                pending = bytearray()
        if pending.strip() and not dropped:
            text, error = screen(bytes(pending))
            if error is not None:
                await self._refuse(error)
            elif text is not None:
                yield text

    async def _refuse(self, error: types.JSONRPCError) -> None:
        log.warning("refused a message: %s", error.error.message)
        await self._attached.wait()
        assert self._responder is not None
        try:
            await self._responder.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
