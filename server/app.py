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
from typing import TYPE_CHECKING, Any

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
from server.access import FULL_ACCESS, Access, view_of
from server.envelope import Coverage, sized, sized_text
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

if TYPE_CHECKING:
    from server.audit import AuditLog  # HTTP only: stdio never loads it

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
    # HTTP: every request carries the Access its token grants (server/http.py); one without is refused
    require_access: bool = False
    audit: AuditLog | None = None  # HTTP: index_project calls are recorded here


ACCESS_KEY = "kivgraph.access"  # where server/http.py puts a request's Access in its ASGI scope


@dataclass
class _Peer:
    """One connected client: how to notify it, what its token sees, and the language enum it was last listed."""

    session: ServerSession
    access: Access
    languages: tuple[str, ...] | None = None


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


def encode_answer(answer: object) -> str:
    """An answer as the client receives it, stating an estimate of its own size in tokens (docs/surface.md §5.1)."""
    if isinstance(answer, str):
        return sized_text(answer)
    if isinstance(answer, dict):
        return _json.encode(sized(answer, _json.encode(answer).decode("utf-8"))).decode("utf-8")
    return _json.encode(answer).decode("utf-8")


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
        self._peers: dict[int, _Peer] = {}  # by connection; a closed connection removes its own
        self._bus = InMemorySubscriptionBus()
        self._refresh_lock = anyio.Lock()
        self._swapped = anyio.Condition()  # notified whenever the served generation changes
        self._index_lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(self.options.read_threads)
        self._followers = 0
        self._task_group: anyio.abc.TaskGroup | None = None
        self._read_tools_listed = self.holder.current_id is not None
        self._languages_announced: tuple[str, ...] | None = None  # the whole graph's enum at the last listing
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
                await self._announce_tools(first=True)
            elif events.swapped_to:
                await self._announce_tools(first=False)  # to those whose language enum changed (a first rust file)
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

    async def _announce_tools(self, *, first: bool) -> None:
        """tools/list_changed: to every client on the first generation, else to each whose tools changed.

        A client's tools change when the language enum of what its token sees changes; each is compared
        with what that client was last listed.
        """
        if first:
            log.info("a generation is published: listing the read tools")
        for key, peer in list(self._peers.items()):
            if not first and (peer.languages is None or await self._languages_now(peer.access) == peer.languages):
                continue
            try:
                await peer.session.send_tool_list_changed()
            except Exception as exc:  # best effort: a gone client must not stop the others
                log.debug("tools/list_changed not delivered: %s", exc)
                self._peers.pop(key, None)
        # The 2026 protocol's subscriptions/listen streams share one bus: they hear of the whole graph's changes.
        languages = await self._languages_now(FULL_ACCESS)
        if first or (self._languages_announced is not None and languages != self._languages_announced):
            await self._bus.publish(ToolsListChanged())
        self._languages_announced = languages

    def _peer(self, ctx: ServerRequestContext[Any], access: Access) -> _Peer:
        """The client of this request, registered on first sight and forgotten when its connection closes."""
        # The SDK gives a handler a fresh ServerSession per request; the connection behind it is the client.
        connection = getattr(ctx.session, "_connection", None)
        key = id(connection if connection is not None else ctx.session)
        peer = self._peers.get(key)
        if peer is None:
            peer = self._peers[key] = _Peer(ctx.session, access)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.callback(self._peers.pop, key, None)
        return peer

    def connected_clients(self) -> int:
        """How many clients the server would notify now (a closed connection is not one)."""
        return len(self._peers)

    def access_of(self, ctx: ServerRequestContext[Any]) -> Access:
        """What the caller may see: its token's Access over HTTP, everything on stdio."""
        scope = getattr(ctx.request, "scope", None)
        access = scope.get(ACCESS_KEY) if isinstance(scope, dict) else None
        if isinstance(access, Access):
            return access
        if self.options.require_access:  # never reached through server/http.py, which refuses first
            raise PermissionError("a request without a token's access reached the server")
        return FULL_ACCESS

    async def _initialized(self, ctx: ServerRequestContext[Any], _params: types.NotificationParams) -> None:
        self._peer(ctx, self.access_of(ctx))

    # --- tools ---------------------------------------------------------------------------------------

    def _languages(self, access: Access) -> tuple[str, ...]:
        """The languages the served generation holds symbols in, as ``access`` sees it (the schemas' enum)."""
        from server.tools.common import served_languages

        with self.holder.lease() as generation:
            return served_languages(view_of(generation, access)) if generation is not None else ()

    async def _languages_now(self, access: Access) -> tuple[str, ...]:
        """``_languages`` off the event loop for a limited token (its view counts its symbols once per generation)."""
        if not access.limited:
            return self._languages(access)
        return await anyio.to_thread.run_sync(self._languages, access, limiter=self._limiter)

    def _tools_for(self, languages: tuple[str, ...] | None) -> list[types.Tool]:
        """The Tool objects for a language enum (None: index_project alone), built once per enum."""
        key = languages if languages is not None else ("\x00",)
        tools = self._tool_cache.get(key)
        if tools is None:
            specs = [INDEX_PROJECT] if languages is None else [*read_tool_specs(languages), INDEX_PROJECT]
            tools = self._tool_cache[key] = [_tool(spec) for spec in specs]
        return tools

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self.holder.current_id is not None and not self._read_tools_listed:
            # An outside index published between two polls: list (and announce) now.
            await self.refresh()
        access = self.access_of(ctx)
        if not self._read_tools_listed and self.holder.current_id is None:
            return types.ListToolsResult(tools=self._tools_for(None))
        languages = await self._languages_now(access)
        self._peer(ctx, access).languages = languages
        return types.ListToolsResult(tools=self._tools_for(languages))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        started = time.perf_counter()
        name = params.name
        access = self.access_of(ctx)
        try:
            if name == INDEX_PROJECT.name:
                text = await self._index_project(ctx, params, access)
            elif name in READ_TOOL_NAMES:
                if self.holder.current_id is None:
                    await self.refresh()  # published since the last poll: answer from it rather than refuse
                if _inline(name, params.arguments) and not access.limited:
                    # Key lookups and short scans answer in well under a millisecond: a thread hop
                    # would cost more than the answer (it doubled the stdio round trip). A limited token's
                    # view filters what it reads (and counts its languages once per generation): a thread.
                    text = self._read(name, params.arguments, access)
                else:
                    text = await anyio.to_thread.run_sync(
                        self._read, name, params.arguments, access, limiter=self._limiter
                    )
            else:
                raise invalid(f"unknown tool {name!r}")
        except ToolError as exc:
            self._log_call(name, started, exc.code, access)
            return _text(exc.text, error=True)
        except _InputRequired as needed:
            self._log_call(name, started, "INPUT_REQUIRED", access)
            return needed.result
        self._log_call(name, started, "OK", access)
        return _text(text)

    def _log_call(self, name: str, started: float, outcome: str, access: Access) -> None:
        ms = round((time.perf_counter() - started) * 1000, 3)
        fields: dict[str, Any] = {"tool": name, "outcome": outcome, "ms": ms, "snapshot": self.holder.current_id}
        if access.token:
            fields["token"] = access.token
        calls.info("%s %s %.1f ms", name, outcome, ms, extra={"fields": fields})

    def _read(self, name: str, arguments: object, access: Access = FULL_ACCESS) -> str:
        """Answer a read tool; a generation found damaged is condemned and the call retried once on the next."""
        try:
            return self._read_once(name, arguments, access)
        except _Damaged as damaged:
            self.holder.condemn(damaged.generation, damaged.reason)
            try:
                return self._read_once(name, arguments, access)
            except _Damaged as again:
                self.holder.condemn(again.generation, again.reason)
                raise ToolError(
                    SNAPSHOT_UNAVAILABLE, f"generation {again.generation.name} could not be read: {again.reason}"
                ) from None

    def _read_once(self, name: str, arguments: object, access: Access) -> str:
        with self.holder.lease() as generation:
            if generation is None:
                if self.holder.unavailable:
                    if name == "graph_status":
                        return encode_answer(unavailable_status(self.layout, self.holder.unavailable))
                    raise ToolError(SNAPSHOT_UNAVAILABLE, self.holder.unavailable)
                if name == "graph_status":  # never fails on a missing snapshot: it reports an empty store
                    return encode_answer(empty_status(self.layout))
                raise ToolError(INDEX_NOT_READY, INDEX_NOT_READY_MESSAGE)
            try:
                generation.check_intact()  # a data file cut short under the map would be SIGBUS, not an error
                # The one place a token's repositories apply: every tool reads through its view (server/access.py).
                answer = _read_tools()[name](view_of(generation, access), arguments)
                return encode_answer(answer)
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

    async def _index_project(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, access: Access = FULL_ACCESS
    ) -> str:
        request: indexing.IndexRequest | None = None
        try:
            if not access.may_index:
                raise ToolError(
                    PERMISSION_DENIED, "this token has the read scope; index_project needs a token with the index scope"
                )
            request = indexing.parse_index_request(
                params.arguments, self.options.cwd or Path(os.getcwd()), self.layout.state_dir
            )
            outside = [p.name for p in request.projects if not access.sees(p.name)]
            if outside:
                # The same refusal whether such a repository is registered or not: the token cannot tell.
                raise ToolError(
                    PERMISSION_DENIED,
                    f"this token may index only the repositories it can read ({', '.join(access.repositories)}); "
                    f"not {', '.join(repr(n) for n in outside)}",
                )
            text = await self._run_index(ctx, params, request, access)
        except ToolError as exc:
            self._audit_index(access, request, params.arguments, exc.code)
            raise
        except _InputRequired:
            raise
        except BaseException:
            self._audit_index(access, request, params.arguments, "INTERRUPTED")
            raise
        self._audit_index(access, request, params.arguments, "OK")
        return text

    def _audit_index(
        self, access: Access, request: indexing.IndexRequest | None, arguments: object, outcome: str
    ) -> None:
        """One audit line per index_project call over HTTP (the projects as parsed, else the names asked for)."""
        if self.options.audit is None:
            return
        if request is not None:
            projects = [{"name": p.name, "path": p.path} for p in request.projects]
        else:
            projects = [{"name": n} for n in indexing.names_asked(arguments)]
        self.options.audit.record(
            "index_project",
            token=access.token,
            token_id=access.token_id,
            projects=projects,
            outcome=outcome,
            snapshot=self.holder.current_id,
        )

    async def _run_index(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        request: indexing.IndexRequest,
        access: Access,
    ) -> str:
        await self._consent(ctx, params, request)
        counter = 0

        async def progress(event: dict[str, Any]) -> None:
            nonlocal counter
            repository = event.get("repository")
            if isinstance(repository, str) and repository and not access.sees(repository):
                return  # the run also rebuilds repositories this token cannot read: not a word of them
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
            # The indexer's own words may name any registered repository: a limited token is told less.
            cause = "the cause is in the server log" if access.limited else outcome.cause()
            raise ToolError(INDEXING_FAILED, f"project indexing failed: {cause}")
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
        counts: Any = result.get("counts", {})
        index: Any = result.get("index", {})
        if access.limited:  # the run's figures cover every repository: give those of what the token sees
            counts = await anyio.to_thread.run_sync(self._view_counts, access, limiter=self._limiter)
            index = {}
        payload = {
            "project": projects[0],
            "projects": projects,
            "generation_id": result.get("generation_id"),
            "snapshot_id": self.holder.current_id,
            "counts": counts,
            "index": index,
        }
        return encode_answer(payload)

    def _view_counts(self, access: Access) -> dict[str, int]:
        with self.holder.lease() as generation:
            if generation is None:
                return {}
            counts = view_of(generation, access).counts()
        keep = ("repositories", "files", "symbols", "edges", "unresolved", "package_dependencies")
        return {k: getattr(counts, k) for k in (*keep, "failed_files", "skipped_files")}


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
