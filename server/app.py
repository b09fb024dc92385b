"""The MCP server: the low-level SDK server wired to the snapshot holder, the tools and index_project.

With no generation the server lists only index_project; when the first
generation appears (through index_project or an outside ``kivgraph index``)
it lists the read tools too and sends ``notifications/tools/list_changed``
(and publishes the event to ``subscriptions/listen`` streams on the
2026 protocol). Read calls run in worker threads, each under a lease on the
generation it started with.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import lmdb
import mcp_types as types
import msgspec
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from server import indexing
from server.envelope import Coverage
from server.errors import (
    INDEX_NOT_READY,
    INDEX_NOT_READY_MESSAGE,
    INDEXING_FAILED,
    PERMISSION_DENIED,
    PERMISSION_REQUIRED,
    SNAPSHOT_UNAVAILABLE,
    ToolError,
    invalid,
)
from server.holder import HolderEvents, SnapshotHolder
from server.logs import CALLS_LOGGER
from server.surface import INDEX_PROJECT, INSTRUCTIONS_EMPTY, INSTRUCTIONS_READY, read_tool_specs
from server.surface import ToolSpec as Spec
from snapshot_format.errors import SnapshotError
from snapshot_format.layout import StateLayout
from snapshot_format.reader import Generation
from snapshot_format.versions import RELEASE

log = logging.getLogger("kivgraph.serve")
calls = logging.getLogger(CALLS_LOGGER)
_json = msgspec.json.Encoder()
SERVER_NAME = "kivgraph"


# Tools bounded to a page of key lookups; the walks, file reads and ranking run in worker threads.
# graph_status and list_repositories read each repository's .git (outside the generation): always in a thread.
_INLINE_TOOLS = frozenset({"get_symbol", "find_symbol", "get_file_outline", "find_references"})
# Arguments that make an inline tool a walk (find_references relation: a transitive hierarchy): in a thread.
_WALKING_ARGUMENTS = {"find_references": ("relation",)}


def _inline(name: str, arguments: object) -> bool:
    """Whether the call answers on the event loop (a page of key lookups) rather than in a worker thread."""
    if name not in _INLINE_TOOLS:
        return False
    walking = _WALKING_ARGUMENTS.get(name, ())
    return not (isinstance(arguments, dict) and any(arguments.get(a) not in (None, "") for a in walking))


@dataclass
class ServeOptions:
    """How a server follows generations and runs the indexer."""

    poll_interval: float = 1.0
    verify_digest: bool = True
    # The digest check reads the whole generation (seconds at a million edges) and holds the GIL while it
    # runs: it waits this long after a start or a swap, so it never competes with the first answers.
    verify_delay: float = 10.0
    indexer: list[str] = field(default_factory=indexing.default_indexer)
    index_timeout: float = indexing.DEFAULT_TIMEOUT_SECONDS
    read_threads: int = 4
    cwd: Path | None = None  # where relative index_project paths resolve (default: the process's)


def _tool(spec: Spec) -> types.Tool:
    if spec.read_only:
        annotations = types.ToolAnnotations(title=spec.title, read_only_hint=True, open_world_hint=False)
    else:
        annotations = types.ToolAnnotations(
            title=spec.title, read_only_hint=False, destructive_hint=True, open_world_hint=True
        )
    meta: dict[str, Any] = dict(spec.meta)
    if spec.always_load:
        meta["anthropic/alwaysLoad"] = True
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=annotations,
        _meta=meta or None,
    )


# The tool functions are imported on the first call, not before initialize (they are most of server/).
READ_TOOL_NAMES = frozenset(spec.name for spec in read_tool_specs())


@functools.cache
def _read_tools() -> dict[str, Any]:
    from server.tools import READ_TOOLS

    return READ_TOOLS


def tools_list_json(languages: tuple[str, ...]) -> str:
    """The tools/list result the server sends when its generation serves ``languages`` (for the token budget)."""
    tools = [_tool(spec) for spec in (*read_tool_specs(languages), INDEX_PROJECT)]
    return types.ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True)


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


class _InputRequired(Exception):
    """The call cannot finish before the client answers an input request (the 2026 protocol's elicitation)."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


class _Damaged(Exception):
    """A read failed inside LMDB or the reader: the generation is damaged."""

    def __init__(self, generation: Generation, reason: str) -> None:
        super().__init__(reason)
        self.generation = generation
        self.reason = reason


class KivgraphServer(Server[Any]):
    """The SDK's low-level server, advertising ``tools.listChanged`` on every transport."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


class KivgraphApp:
    """One serving process: the holder, the tool set it implies, and the MCP server over both."""

    def __init__(self, layout: StateLayout, options: ServeOptions | None = None) -> None:
        self.layout = layout
        self.options = options or ServeOptions()
        self.holder = SnapshotHolder(layout)
        self.holder.start()
        self._sessions: list[ServerSession] = []
        self._bus = InMemorySubscriptionBus()
        self._refresh_lock = anyio.Lock()
        self._swapped = anyio.Condition()  # notified whenever the served generation changes
        self._index_lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(self.options.read_threads)
        self._followers = 0
        self._task_group: anyio.abc.TaskGroup | None = None
        self._read_tools_listed = self.holder.current_id is not None
        self._listed_languages: tuple[str, ...] | None = None  # the language enum of the last tools/list
        self._tool_cache: dict[tuple[str, ...], list[types.Tool]] = {}
        self.server = KivgraphServer(
            SERVER_NAME,
            version=RELEASE,
            instructions=INSTRUCTIONS_READY if self._read_tools_listed else INSTRUCTIONS_EMPTY,
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)

    # --- lifecycle ---------------------------------------------------------------------------------

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            leader = self._followers == 0
            self._followers += 1
            if leader:
                self._task_group = tg
                tg.start_soon(self._follow)
                if self.holder.current_id is not None:
                    self._verify_soon()
            try:
                yield {}
            finally:
                self._followers -= 1
                if leader:
                    self._task_group = None
                tg.cancel_scope.cancel()

    async def _follow(self) -> None:
        """Poll CURRENT (one small file read) and swap when a newer generation is published."""
        while True:
            await anyio.sleep(self.options.poll_interval)
            try:
                await self.refresh()
            except Exception:  # the follower must survive anything a half-written state can throw
                log.exception("following CURRENT failed; retrying")

    async def refresh(self) -> HolderEvents:
        """Look at CURRENT now; announce the read tools when the first generation appears."""
        async with self._refresh_lock:
            events = await anyio.to_thread.run_sync(self.holder.refresh, limiter=self._limiter)
            if events.swapped_to:
                self._verify_soon()
                await self._notify_swap()
            if self.holder.current_id is not None and not self._read_tools_listed:
                self._read_tools_listed = True
                await self._announce_tools()
            elif (
                events.swapped_to and self._listed_languages is not None and self._languages() != self._listed_languages
            ):
                await self._announce_tools()  # the language enums changed (a first rust or dart repository)
        return events

    def _verify_soon(self) -> None:
        if self.options.verify_digest and self._task_group is not None:
            self._task_group.start_soon(self._verify)

    async def _verify(self) -> None:
        await anyio.sleep(self.options.verify_delay)
        try:
            events = await anyio.to_thread.run_sync(self.holder.verify_current, limiter=self._limiter)
        except Exception:
            log.exception("digest verification failed to run")
            return
        if events.swapped_to:
            log.warning("now serving %s after a digest failure", events.swapped_to)
            await self._notify_swap()

    async def _notify_swap(self) -> None:
        async with self._swapped:
            self._swapped.notify_all()

    async def serving(self, snapshot_id: int) -> None:
        """Return once the server answers from generation ``snapshot_id`` (bound it with a timeout)."""
        async with self._swapped:
            while self.holder.current_id != snapshot_id:
                await self._swapped.wait()

    async def _announce_tools(self) -> None:
        log.info("a generation is published: listing the read tools")
        for session in list(self._sessions):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # best effort: a gone client must not stop the others
                log.debug("tools/list_changed not delivered: %s", exc)
        await self._bus.publish(ToolsListChanged())

    async def _initialized(self, ctx: ServerRequestContext[Any], _params: types.NotificationParams) -> None:
        self._sessions.append(ctx.session)

    # --- tools ---------------------------------------------------------------------------------------

    def _languages(self) -> tuple[str, ...]:
        """The languages the served generation holds symbols in (the schemas' language enum)."""
        from server.tools.common import served_languages

        with self.holder.lease() as generation:
            return served_languages(generation) if generation is not None else ()

    def listed_tools(self) -> list[types.Tool]:
        if self.holder.current_id is None and not self._read_tools_listed:
            return self._tools_for(None)
        languages = self._languages()
        self._listed_languages = languages
        return self._tools_for(languages)

    def _tools_for(self, languages: tuple[str, ...] | None) -> list[types.Tool]:
        """The Tool objects for a language enum (None: index_project alone), built once per enum."""
        key = languages if languages is not None else ("\x00",)
        tools = self._tool_cache.get(key)
        if tools is None:
            specs = [INDEX_PROJECT] if languages is None else [*read_tool_specs(languages), INDEX_PROJECT]
            tools = self._tool_cache[key] = [_tool(spec) for spec in specs]
        return tools

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self.holder.current_id is not None and not self._read_tools_listed:
            # An outside index published between two polls: list (and announce) now.
            await self.refresh()
        return types.ListToolsResult(tools=self.listed_tools())

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        started = time.perf_counter()
        name = params.name
        try:
            if name == INDEX_PROJECT.name:
                text = await self._index_project(ctx, params)
            elif name in READ_TOOL_NAMES:
                if self.holder.current_id is None:
                    await self.refresh()  # published since the last poll: answer from it rather than refuse
                if _inline(name, params.arguments):
                    # Key lookups and short scans answer in well under a millisecond: a thread hop
                    # would cost more than the answer (it doubled the stdio round trip).
                    text = self._read(name, params.arguments)
                else:
                    text = await anyio.to_thread.run_sync(self._read, name, params.arguments, limiter=self._limiter)
            else:
                raise invalid(f"unknown tool {name!r}")
        except ToolError as exc:
            self._log_call(name, started, exc.code)
            return _text(exc.text, error=True)
        except _InputRequired as needed:
            self._log_call(name, started, "INPUT_REQUIRED")
            return needed.result
        self._log_call(name, started, "OK")
        return _text(text)

    def _log_call(self, name: str, started: float, outcome: str) -> None:
        ms = round((time.perf_counter() - started) * 1000, 3)
        calls.info(
            "%s %s %.1f ms",
            name,
            outcome,
            ms,
            extra={"fields": {"tool": name, "outcome": outcome, "ms": ms, "snapshot": self.holder.current_id}},
        )

    def _read(self, name: str, arguments: object) -> str:
        """Answer a read tool; a generation found damaged is condemned and the call retried once on the next."""
        try:
            return self._read_once(name, arguments)
        except _Damaged as damaged:
            self.holder.condemn(damaged.generation, damaged.reason)
            try:
                return self._read_once(name, arguments)
            except _Damaged as again:
                self.holder.condemn(again.generation, again.reason)
                raise ToolError(
                    SNAPSHOT_UNAVAILABLE, f"generation {again.generation.name} could not be read: {again.reason}"
                ) from None

    def _read_once(self, name: str, arguments: object) -> str:
        with self.holder.lease() as generation:
            if generation is None:
                if self.holder.unavailable:
                    if name == "graph_status":
                        return _json.encode(unavailable_status(self.layout, self.holder.unavailable)).decode()
                    raise ToolError(SNAPSHOT_UNAVAILABLE, self.holder.unavailable)
                if name == "graph_status":  # never fails on a missing snapshot: it reports an empty store
                    return _json.encode(empty_status(self.layout)).decode("utf-8")
                raise ToolError(INDEX_NOT_READY, INDEX_NOT_READY_MESSAGE)
            try:
                generation.check_intact()  # a data file cut short under the map would be SIGBUS, not an error
                answer = _read_tools()[name](generation, arguments)
                return answer if isinstance(answer, str) else _json.encode(answer).decode("utf-8")
            except ToolError:
                raise
            except (lmdb.Error, SnapshotError, msgspec.DecodeError) as exc:
                # Damage is an expected event with a known reason, not a bug: no stack trace in the log.
                # A record that no longer decodes (msgspec.DecodeError) is damage too: records are written
                # once, by this format's encoder, so only changed bytes make one unreadable.
                log.warning("%s found generation %s damaged: %s", name, generation.name, exc)
                raise _Damaged(generation, str(exc)) from None
            except Exception as exc:
                log.exception("%s failed on generation %s", name, generation.name)
                raise ToolError(
                    SNAPSHOT_UNAVAILABLE,
                    f"internal error while answering ({type(exc).__name__}); it is in the server log",
                ) from None

    # --- index_project -----------------------------------------------------------------------------------

    async def _consent(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, request: indexing.IndexRequest
    ) -> None:
        """Proceed only with the user's consent: elicitation when the client can show it, else confirmed=true."""
        capabilities = ctx.session.client_capabilities
        can_elicit = capabilities is not None and capabilities.elicitation is not None
        if can_elicit and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = self._input_response(params, request)  # 2026 protocol: ask through InputRequiredResult
        elif can_elicit and ctx.session.can_send_request:
            try:
                answer = await ctx.session.elicit_form(
                    indexing.consent_message(request), indexing.CONSENT_SCHEMA, related_request_id=ctx.request_id
                )
            except Exception as exc:
                log.warning("the consent elicitation failed: %s", exc)
                raise ToolError(
                    PERMISSION_REQUIRED,
                    f"the consent request to the user failed ({exc}); "
                    "ask the user, then call again with confirmed=true",
                ) from None
        else:
            if request.confirmed is not True:
                raise ToolError(
                    PERMISSION_REQUIRED,
                    "user approval is required; confirm the operation before setting confirmed=true",
                )
            return
        if answer.action != "accept" or (answer.content or {}).get("confirmed") is not True:
            raise ToolError(PERMISSION_DENIED, "project indexing was not approved")

    @staticmethod
    def _input_response(params: types.CallToolRequestParams, request: indexing.IndexRequest) -> types.ElicitResult:
        """The consent answer carried by a retried call, or InputRequired to ask for it (bound to the projects)."""
        binding = hashlib.sha256(json.dumps([p.as_json() for p in request.projects]).encode()).hexdigest()[:32]
        answer = (params.input_responses or {}).get("consent")
        if params.request_state == binding and isinstance(answer, types.ElicitResult):
            return answer
        raise _InputRequired(
            types.InputRequiredResult(
                input_requests={
                    "consent": types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=indexing.consent_message(request), requested_schema=indexing.CONSENT_SCHEMA
                        )
                    )
                },
                request_state=binding,
            )
        )

    async def _index_project(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> str:
        request = indexing.parse_index_request(
            params.arguments, self.options.cwd or Path(os.getcwd()), self.layout.state_dir
        )
        await self._consent(ctx, params, request)
        counter = 0

        async def progress(event: dict[str, Any]) -> None:
            nonlocal counter
            counter += 1
            message = " ".join(str(event.get(k, "")) for k in ("phase", "repository", "detail")).strip()
            try:
                await ctx.session.report_progress(counter, None, message)
            except Exception as exc:  # an undeliverable notification never fails the index
                log.debug("progress not delivered: %s", exc)

        argv = indexing.index_argv(self.options.indexer, self.layout, request.projects)
        async with self._index_lock:
            log.info("indexing %s", ", ".join(p.name for p in request.projects))
            outcome = await indexing.run_indexer(argv, on_progress=progress, timeout=self.options.index_timeout)
        if not outcome.passed:
            log.error("indexing failed (exit %s): %s", outcome.returncode, outcome.stderr_tail[-2000:])
            raise ToolError(INDEXING_FAILED, f"project indexing failed: {outcome.cause()}")
        events = await self.refresh()
        result = outcome.result or {}
        published = result.get("generation_id")
        current = self.holder.current_id
        if isinstance(published, int) and (current is None or current < published):
            reason = "; ".join(events.refused) or "CURRENT does not name it"
            raise ToolError(
                INDEXING_FAILED,
                f"project indexing failed: generation {published} was published but "
                f"this server cannot open it: {reason}",
            )
        projects = [p.as_json() for p in request.projects]
        payload = {
            "project": projects[0],
            "projects": projects,
            "generation_id": result.get("generation_id"),
            "snapshot_id": self.holder.current_id,
            "counts": result.get("counts", {}),
            "index": result.get("index", {}),
        }
        return _json.encode(payload).decode("utf-8")


def empty_status(layout: StateLayout) -> dict[str, Any]:
    """graph_status before any generation is published."""
    return {
        "snapshot_id": None,
        "snapshot_age_ms": None,
        "total": 1,
        "returned": 1,
        "truncated": False,
        "next_cursor": None,
        "coverage": Coverage().full(),
        "guidance": "nothing is published yet: call index_project, or run kivgraph index",
        "results": {"status": "empty", "snapshot_id": None, "state_dir": str(layout.state_dir)},
    }


def unavailable_status(layout: StateLayout, reason: str) -> dict[str, Any]:
    """graph_status when generations exist but none can be read."""
    return {
        "snapshot_id": None,
        "snapshot_age_ms": None,
        "total": 1,
        "returned": 1,
        "truncated": False,
        "next_cursor": None,
        "coverage": Coverage().full(),
        "guidance": "every generation on disk is unreadable: run kivgraph index to publish a good one",
        "results": {"status": "unavailable", "snapshot_id": None, "state_dir": str(layout.state_dir), "reason": reason},
    }


def _version() -> str:
    return RELEASE
