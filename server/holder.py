"""The snapshot holder: which generation the server answers from, and the swap to a newer one.

Every call takes a lease on the current generation for its duration. A swap
publishes the newer generation for new calls at once, while the old LMDB
environment stays mapped until the last lease on it is returned. A
generation that fails to open or validate is logged and skipped (remembered
until CURRENT names something else), and the last good one keeps serving.
The holder only ever moves to a strictly newer id, except when the one it
serves fails its digest check and an older readable one must take over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from server.checkouts import registered_checkouts
from snapshot_format.errors import GenerationUnreadableError, NoGenerationError
from snapshot_format.layout import StateLayout, list_generations, parse_generation_name, read_current
from snapshot_format.reader import Generation, open_newest_readable

log = logging.getLogger("kivgraph.serve")


@dataclass
class _Entry:
    generation: Generation
    leases: int = 0
    retired: bool = False
    verified: bool = False

    def close_if_idle(self) -> bool:
        if self.retired and self.leases == 0 and not self.generation.closed:
            self.generation.close()
            log.info("closed generation %s (no call uses it any more)", self.generation.name)
            return True
        return False


@dataclass
class HolderEvents:
    """What the last ``refresh`` did, for the caller to act on (tool registration, logs)."""

    swapped_to: str | None = None
    first: bool = False
    refused: list[str] = field(default_factory=list)


class SnapshotHolder:
    """Follows CURRENT and lends the generation to calls."""

    def __init__(self, layout: StateLayout) -> None:
        self.layout = layout
        self._lock = threading.Lock()
        # One condemnation at a time: a call and the poller can find the same damage together, and the second
        # must not go on (and read the damaged generation again) before the first has installed its successor.
        self._condemning = threading.Lock()
        self._current: _Entry | None = None
        self._entries: list[_Entry] = []
        self._bad: dict[str, str] = {}  # generation name -> why it was skipped
        self._last_pointer: str | None = None
        self.unavailable = ""  # why nothing is served although generations exist (all damaged)

    # --- reading ---------------------------------------------------------------------------------

    @property
    def current_id(self) -> int | None:
        entry = self._current
        return entry.generation.id if entry is not None else None

    @property
    def current_name(self) -> str | None:
        entry = self._current
        return entry.generation.name if entry is not None else None

    @contextmanager
    def lease(self) -> Iterator[Generation | None]:
        """The current generation, kept mapped until the block ends (None when nothing is published)."""
        with self._lock:
            entry = self._current
            if entry is not None:
                entry.leases += 1
        try:
            yield entry.generation if entry is not None else None
        finally:
            if entry is not None:
                with self._lock:
                    entry.leases -= 1
                    if entry.close_if_idle():
                        self._entries.remove(entry)

    def open_generations(self) -> int:
        """How many environments are mapped right now (the current one plus those still leased)."""
        with self._lock:
            return sum(1 for e in self._entries if not e.generation.closed)

    # --- following CURRENT -------------------------------------------------------------------------

    def start(self) -> HolderEvents:
        """Open the newest readable generation, if any (a manifest read and a memory map)."""
        events = HolderEvents()
        try:
            generation, refused = open_newest_readable(self.layout, hold=True)
        except NoGenerationError as exc:
            if list_generations(self.layout):
                self.unavailable = str(exc)
                log.error("%s", exc)
            else:
                log.info("%s", exc)
            return events
        for reason in refused:
            log.warning("skipped a generation: %s", reason)
        events.refused.extend(refused)
        self._last_pointer = read_current(self.layout)
        self._install(generation, events)
        return events

    def check_current(self) -> HolderEvents:
        """Condemn the served generation if its data file changed size under us (one fstat)."""
        entry = self._current
        if entry is None or entry.generation.closed:
            return HolderEvents()
        try:
            entry.generation.check_intact()
        except GenerationUnreadableError as exc:
            return self.condemn(entry.generation, str(exc))
        return HolderEvents()

    def condemn(self, generation: Generation, reason: str) -> HolderEvents:
        """Stop serving a generation found damaged; the newest other readable one takes over, even older.

        With no other readable generation it keeps serving this one (calls that fail say why).
        """
        events = HolderEvents(refused=[reason])
        with self._condemning:
            with self._lock:
                if generation.name in self._bad:
                    return events  # condemned already, and (under _condemning) its successor is installed
                self._bad[generation.name] = reason
            log.error("generation %s is damaged and no longer served: %s", generation.name, reason)
            if self.current_name != generation.name:
                return events
            try:
                replacement, refused = open_newest_readable(self.layout, hold=True, skip=self._bad)
            except NoGenerationError as exc:
                # Some answers may still come from it; a refused call says why (SNAPSHOT_UNAVAILABLE).
                log.error("no other readable generation (%s); still serving %s", exc, generation.name)
                return events
            events.refused.extend(refused)
            self._install(replacement, events)
            log.warning("now serving %s after %s was found damaged", replacement.name, generation.name)
            return events

    def refresh(self) -> HolderEvents:
        """Swap to the generation CURRENT names if it is newer and opens; cheap when nothing changed."""
        events = self.check_current()
        if events.swapped_to:
            return events
        name = read_current(self.layout)
        if name is None or (name == self._last_pointer and self._current is not None):
            return events
        self._last_pointer = name
        if name == self.current_name or name in self._bad:
            return events
        parsed = parse_generation_name(name)
        current = self.current_id
        if parsed is None or (current is not None and parsed[0] <= current):
            if parsed is not None and current is not None and parsed[0] < current:
                log.warning(
                    "CURRENT names %s, older than the generation served (%s); keeping it", name, self.current_name
                )
            return events
        try:
            generation = Generation(self.layout.generations_dir / name, hold=True)
        except (GenerationUnreadableError, OSError) as exc:
            self._bad[name] = str(exc)
            events.refused.append(str(exc))
            log.error("skipped generation %s: %s; still serving %s", name, exc, self.current_name or "nothing")
            return events
        self._install(generation, events)
        return events

    def _install(self, generation: Generation, events: HolderEvents) -> None:
        self.unavailable = ""
        generation.checkouts = registered_checkouts(self.layout.config_path)
        with self._lock:
            previous = self._current
            entry = _Entry(generation)
            self._entries.append(entry)
            self._current = entry
            if previous is not None:
                previous.retired = True
                if previous.close_if_idle():
                    self._entries.remove(previous)
        events.swapped_to = generation.name
        events.first = previous is None
        log.info(
            "serving generation %s (%s symbols, %s edges)",
            generation.name,
            generation.manifest.counts.symbols,
            generation.manifest.counts.edges,
        )

    def verify_current(self) -> HolderEvents:
        """Recompute the served generation's digest (a full read: run it off the request path).

        On a mismatch, or damage LMDB itself reports, the generation is condemned: skipped from
        now on, and the newest other readable generation takes over, even an older one.
        """
        with self.lease() as generation:
            entry = self._current
            if generation is None or entry is None or entry.generation is not generation or entry.verified:
                return HolderEvents()
            try:
                generation.verify_digest(isolated=True)  # damage must kill a child, not the server
            except GenerationUnreadableError as exc:
                reason = str(exc)
            else:
                entry.verified = True
                return HolderEvents()
        return self.condemn(generation, reason)

    def close(self) -> None:
        """Close every environment (at shutdown, when no call is running)."""
        with self._lock:
            for entry in self._entries:
                if not entry.generation.closed:
                    entry.generation.close()
            self._entries.clear()
            self._current = None
