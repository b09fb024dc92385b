"""The response envelope shared by every JSON tool (docs/surface.md §5).

The full view states every field; the compact view drops what carries no
information: ``snapshot_age_ms``, a false ``truncated``, a null
``next_cursor`` and zero coverage counters (the whole block when all four are
zero). An absent field reads as false, null or 0.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from snapshot_format.vocab import Confidence


@dataclass
class Coverage:
    """Four disjoint counters over the whole matching set, not just the page."""

    exact: int = 0
    candidate: int = 0
    unresolved_related: int = 0
    package_level: int = 0

    def count_confidence(self, confidence: int, n: int = 1) -> None:
        """Add ``n`` facts of this confidence to the counter it belongs to."""
        if confidence <= Confidence.STRUCTURAL_CERTAIN:
            self.exact += n
        elif confidence == Confidence.CANDIDATE:
            self.candidate += n
        else:
            self.unresolved_related += n

    def full(self) -> dict[str, int]:
        return {
            "exact": self.exact,
            "candidate": self.candidate,
            "unresolved_related": self.unresolved_related,
            "package_level": self.package_level,
        }

    def compact(self) -> dict[str, int]:
        return {k: v for k, v in self.full().items() if v}


def snapshot_age_ms(built_at_ns: int) -> int:
    """Milliseconds since the generation was built (never negative)."""
    return max(0, (time.time_ns() - built_at_ns) // 1_000_000)


def envelope(
    *,
    compact: bool,
    snapshot_id: int,
    built_at_ns: int,
    total: int,
    returned: int,
    next_cursor: str | None,
    coverage: Coverage,
    results: Any,
    guidance: str | None = None,
    completeness: dict[str, Any] | None = None,
    tests: str | None = None,
    pending: dict[str, Any] | None = None,
    access: str | None = None,
) -> dict[str, Any]:
    """The envelope around ``results`` in the compact or the full view (``completeness`` only on blast radius).

    ``tests`` states the rows in test files left out of the answer (``+4 in 2 test files; include_tests=true
    lists them``); absent when none was left out. ``pending_exact`` appears only on a snapshot published before
    its exact analysis. ``access`` appears on every answer to a token limited to some repositories: what it
    does not name may exist in a repository the token cannot read (docs/surface.md §1.6).
    """
    truncated = next_cursor is not None
    out: dict[str, Any] = {"snapshot_id": snapshot_id}
    if compact:
        out["total"] = total
        out["returned"] = returned
        if truncated:
            out["truncated"] = True
            out["next_cursor"] = next_cursor
        cov = coverage.compact()
        if cov:
            out["coverage"] = cov
    else:
        out["snapshot_age_ms"] = snapshot_age_ms(built_at_ns)
        out["total"] = total
        out["returned"] = returned
        out["truncated"] = truncated
        out["next_cursor"] = next_cursor
        out["coverage"] = coverage.full()
    if completeness is not None:
        out["completeness"] = completeness
    if guidance:
        out["guidance"] = guidance
    if tests:
        out["tests"] = tests
    if pending:
        out["pending_exact"] = pending
    if access:
        out["access"] = access
    out["results"] = results
    return out


# The size estimate (docs/surface.md §5.1): no tokenizer at serve time, so the text is read as o200k_base's
# pre-tokenizer splits it, each kind of piece weighed by what it costs: a letter run (a capital inside a
# camelCase run starts another piece, a long run is a piece per seven letters), a digit run (a piece per three
# digits), a punctuation mark, white space. Calibrated on the token question set, full-view answers, a large
# outline and source code (benchmarks/results/tokens.json), it is within about a sixth of the real count.
SIZE_FIELD = "size_tokens"
_PIECES = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]|\s+")
_LETTERS, _DIGITS, _MARKS, _SPACE = 0.75, 1.2, 0.5, 0.5
_FIELD_TOKENS = 5  # "size_tokens":N, itself


def estimate_tokens(text: str) -> int:
    """About how many o200k_base tokens ``text`` is (at least one)."""
    letters = digits = marks = space = 0
    for m in _PIECES.finditer(text):
        p = m.group()
        first = p[0]
        if first.isalpha():
            inner = p[1:]
            if any(c.isupper() for c in inner) and any(c.islower() for c in p):
                letters += 1 + sum(1 for c in inner if c.isupper())
            else:
                letters += 1 + (len(p) - 1) // 7
        elif first.isdigit():
            digits += (len(p) + 2) // 3
        elif p.isspace():
            space += 1
        else:
            marks += 1
    return max(1, round(_LETTERS * letters + _DIGITS * digits + _MARKS * marks + _SPACE * space))


def sized(answer: dict[str, Any], encoded: str) -> dict[str, Any]:
    """The answer with ``size_tokens``, the estimate of its own size (the field included), after ``snapshot_id``;
    ``encoded`` is the answer's text without the field."""
    estimate = estimate_tokens(encoded) + _FIELD_TOKENS
    out: dict[str, Any] = {}
    for key, value in answer.items():
        out[key] = value
        if key == "snapshot_id":
            out[SIZE_FIELD] = estimate
    if SIZE_FIELD not in out:
        out = {SIZE_FIELD: estimate, **answer}
    return out


def sized_text(text: str) -> str:
    """Prose (get_source) with ``~N tokens`` ending its first line, the estimate of the whole text."""
    first, sep, rest = text.partition("\n")
    estimate = estimate_tokens(text) + 3
    return f"{first}  ~{estimate} tokens{sep}{rest}"
