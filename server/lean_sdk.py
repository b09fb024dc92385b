"""Load only the part of the MCP SDK a stdio server runs, so `kivgraph serve` starts sooner.

``import mcp.server.stdio`` first runs ``mcp/__init__.py`` (which imports the whole client, httpx included,
and the ``mcp.types`` re-exports) and ``mcp/server/__init__.py`` (which imports ``MCPServer`` with its
resource templates); the low-level server module then imports the streamable-HTTP transport, Starlette and
the OAuth middleware at module level, though it uses them only in ``streamable_http_app``. A stdio server
needs none of it. ``install`` therefore

- registers ``mcp`` and ``mcp.server`` as bare packages (their submodules import as usual, their
  ``__init__`` does not run), and
- stands in for the HTTP-only modules with modules whose every name is a placeholder that refuses to be
  used ("the HTTP transports are not loaded in kivgraph serve").

If the SDK cannot be imported that way (a release that needs one of those modules at import time), every
stand-in is taken back and the SDK is imported whole: slower, never broken. ``python -m
benchmarks.bench_startup`` measures the difference.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import types
from typing import Any

log = logging.getLogger("kivgraph.serve")

_BARE_PACKAGES = ("mcp", "mcp.server")
# Imported by mcp.server.lowlevel.server for streamable_http_app only (a stdio server never calls it).
HTTP_ONLY = (
    "starlette",
    "starlette.applications",
    "starlette.middleware",
    "starlette.middleware.authentication",
    "starlette.routing",
    "mcp.server.auth",
    "mcp.server.auth.middleware",
    "mcp.server.auth.middleware.auth_context",
    "mcp.server.auth.middleware.bearer_auth",
    "mcp.server.auth.provider",
    "mcp.server.auth.routes",
    "mcp.server.auth.settings",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.transport_security",
)
# What a stdio server imports from the SDK (server/app.py and server/main.py).
NEEDED = (
    "mcp.server.stdio",
    "mcp.server.lowlevel",
    "mcp.server.session",
    "mcp.server.subscriptions",
    "mcp.server.context",
    "mcp.server.models",
)


class _NotLoaded:
    """A name of a module left out of serve; any use says why."""

    def __init__(self, where: str) -> None:
        self._where = where

    def _refuse(self, *_args: object, **_kwargs: object) -> Any:
        raise RuntimeError(f"{self._where} belongs to the MCP HTTP transports, which kivgraph serve does not load")

    __call__ = _refuse

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._refuse()


class _StandIn(types.ModuleType):
    """A module left out of serve: every public name is a ``_NotLoaded`` placeholder."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _NotLoaded(f"{self.__name__}.{name}")


def _bare_package(name: str) -> types.ModuleType | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        return None
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__spec__ = spec
    module.__file__ = spec.origin
    module.__package__ = name
    return module


def install() -> bool:
    """Import the SDK's stdio server without its HTTP side; False (and the SDK imported whole) if that fails."""
    if any(name in sys.modules for name in (*_BARE_PACKAGES, *HTTP_ONLY)):
        return False  # something already imported the SDK (a test process, an embedding): leave it alone
    before = set(sys.modules)
    try:
        for name in _BARE_PACKAGES:
            package = _bare_package(name)
            if package is None:
                raise ImportError(f"{name} is not an installed package")
            sys.modules[name] = package
        sys.modules["mcp"].server = sys.modules["mcp.server"]  # type: ignore[attr-defined]
        for name in HTTP_ONLY:
            stand_in = _StandIn(name)
            stand_in.__path__ = []
            sys.modules[name] = stand_in
        for name in NEEDED:
            importlib.import_module(name)
        return True
    except Exception as exc:  # an SDK release this does not fit: import it whole instead
        for name in set(sys.modules) - before:
            del sys.modules[name]
        log.warning("the lean MCP SDK import failed (%s: %s); importing the whole SDK", type(exc).__name__, exc)
        return False
