"""Tool errors: a stable code the client branches on, and a message for the agent.

The text of a failed tool call is ``"<CODE>: <message>"``; docs/surface.md §2 says when each code is raised.
"""

from __future__ import annotations

INVALID_ARGUMENT = "INVALID_ARGUMENT"
SYMBOL_NOT_FOUND = "SYMBOL_NOT_FOUND"
AMBIGUOUS_SYMBOL = "AMBIGUOUS_SYMBOL"
REPOSITORY_NOT_FOUND = "REPOSITORY_NOT_FOUND"
CURSOR_INVALID = "CURSOR_INVALID"
CURSOR_SNAPSHOT_EXPIRED = "CURSOR_SNAPSHOT_EXPIRED"
TRAVERSAL_LIMIT_REACHED = "TRAVERSAL_LIMIT_REACHED"
SNAPSHOT_UNAVAILABLE = "SNAPSHOT_UNAVAILABLE"
INDEX_NOT_READY = "INDEX_NOT_READY"
PERMISSION_REQUIRED = "PERMISSION_REQUIRED"
PERMISSION_DENIED = "PERMISSION_DENIED"
INDEXING_FAILED = "INDEXING_FAILED"

ALL_CODES = frozenset(
    {
        INVALID_ARGUMENT,
        SYMBOL_NOT_FOUND,
        AMBIGUOUS_SYMBOL,
        REPOSITORY_NOT_FOUND,
        CURSOR_INVALID,
        CURSOR_SNAPSHOT_EXPIRED,
        TRAVERSAL_LIMIT_REACHED,
        SNAPSHOT_UNAVAILABLE,
        INDEX_NOT_READY,
        PERMISSION_REQUIRED,
        PERMISSION_DENIED,
        INDEXING_FAILED,
    }
)

INDEX_NOT_READY_MESSAGE = 'no graph is published yet: index a project with index_project, or run "kivgraph index"'


class ToolError(Exception):
    """A domain failure of a tool call, reported to the client as ``CODE: message``."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ALL_CODES:
            raise ValueError(f"unknown tool error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def text(self) -> str:
        """The wire text of the error."""
        return f"{self.code}: {self.message}"


def invalid(message: str) -> ToolError:
    """An INVALID_ARGUMENT error."""
    return ToolError(INVALID_ARGUMENT, message)
