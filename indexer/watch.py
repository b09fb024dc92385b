"""`kivgraph index --watch`: debounced rebuilds on file changes, each publishing a generation.

With ``--repository NAME`` (``only``) only the named repositories are watched, and a change counts only
when the file belongs to one of them: a repository registered inside a watched one owns its own files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from indexer.config import ConfigError, load
from snapshot_format.layout import StateLayout

DEBOUNCE_MS = 400
WAKE_MS = 500  # the watcher's first wait (and each idle wake-up after it)


def relevant(
    changes: Iterable[tuple[Any, str]], extensions: frozenset[str], owned: Callable[[str], bool] = lambda _p: True
) -> bool:
    """Whether a batch of (change, path) touches an indexed source file or a .gitignore (of a repository
    ``owned`` accepts the path for)."""
    for _change, path in changes:
        name = Path(path).name
        wanted = name == ".gitignore" or Path(path).suffix in extensions
        if wanted and "/.git/" not in path and "__pycache__" not in path and owned(path):
            return True
    return False


def owned_by(roots: dict[str, str], selected: frozenset[str]) -> Callable[[str], bool]:
    """Whether a path belongs to a selected repository: the registered root nearest above it (``roots``:
    name -> root) is one of ``selected``."""
    deepest = sorted(roots.items(), key=lambda item: len(item[1]), reverse=True)

    def owned(path: str) -> bool:
        for name, root in deepest:
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                return name in selected
        return False

    return owned


def watch_and_index(
    layout: StateLayout,
    reindex: Callable[[], int],
    *,
    changes: Iterable[set[tuple[Any, str]]] | None = None,
    watching: Callable[[int], None] | None = None,
    only: frozenset[str] | None = None,
    reindex_changed: Callable[[frozenset[str]], int] | None = None,
) -> None:
    """Re-run ``reindex`` after each relevant batch of changes; ``changes`` may be scripted in tests.

    ``reindex_changed``, when given, runs instead for a batch, with the batch's paths: the run is scoped to the
    repositories they concern (``indexer.scope``). The catch-up run after the watcher starts is always whole.

    With real file events, the watcher starts first and one more ``reindex`` follows at once: an edit saved
    while the run before the watch (the first index) was reading the tree is not lost, and nothing is
    published when there was none. ``watching`` hears when the watcher is live (the number of roots).
    ``only`` names the repositories to watch (None: every registered one).
    """
    from indexer.languages.registry import EXTENSIONS

    try:
        loaded = load(layout.config_path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    chosen = [r for r in loaded.repositories if only is None or r.name in only]
    roots = [str(r.root) for r in chosen if not r.problem]  # a moved one cannot be watched
    exts = frozenset(e for r in chosen for lang in r.languages for e in EXTENSIONS.get(lang, ()))
    owned = (
        owned_by({r.name: str(r.root) for r in loaded.repositories}, only)
        if only is not None
        else (lambda _path: True)  # every root is watched: whatever the watcher reports is ours
    )
    announce = watching or (lambda n: print(f"watching {n} repositories for changes (Ctrl-C to stop)", file=sys.stderr))
    if changes is not None:
        announce(len(roots))
        for batch in changes:
            if relevant(batch, exts, owned):
                _run_batch(batch, reindex, reindex_changed)
        return
    import watchfiles

    # yield_on_timeout: the first step returns once the watcher is live, whether or not anything changed
    batches = iter(
        watchfiles.watch(
            *roots, debounce=DEBOUNCE_MS, step=50, raise_interrupt=False, yield_on_timeout=True, rust_timeout=WAKE_MS
        )
    )
    first = next(batches, None)
    if first is None:
        return  # stopped (a signal) before the watcher was live
    announce(len(roots))
    from indexer import supersede

    # A second watcher listens while a run goes on: an edit saved while the exact pass's analyzer runs stops it
    # (the CANDIDATE generation serves) so that the edit's own CANDIDATE generation is not kept waiting.
    stop_listening = supersede.listen(
        lambda stop: watchfiles.watch(
            *roots, debounce=DEBOUNCE_MS, step=50, raise_interrupt=False, stop_event=stop, rust_timeout=WAKE_MS
        ),
        lambda batch: relevant(batch, exts, owned),
    )
    try:
        supersede.begin_run()
        reindex()  # catch up with what changed before the watcher was live
        for batch in batches:
            if batch and relevant(batch, exts, owned):
                supersede.begin_run()
                _run_batch(batch, reindex, reindex_changed)
    finally:
        stop_listening()


def _run_batch(
    batch: Iterable[tuple[Any, str]],
    reindex: Callable[[], int],
    reindex_changed: Callable[[frozenset[str]], int] | None,
) -> None:
    if reindex_changed is None:
        reindex()
    else:
        reindex_changed(frozenset(path for _change, path in batch))
