"""`kivgraph index --watch`: debounced rebuilds on file changes, each publishing a generation."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from indexer.config import ConfigError, load
from snapshot_format.layout import StateLayout

DEBOUNCE_MS = 400


def relevant(changes: Iterable[tuple[Any, str]], extensions: frozenset[str]) -> bool:
    """Whether a batch of (change, path) touches an indexed source file or a .gitignore."""
    for _change, path in changes:
        name = Path(path).name
        wanted = name == ".gitignore" or Path(path).suffix in extensions
        if wanted and "/.git/" not in path and "__pycache__" not in path:
            return True
    return False


def watch_and_index(
    layout: StateLayout,
    reindex: Callable[[], int],
    *,
    changes: Iterable[set[tuple[Any, str]]] | None = None,
) -> None:
    """Re-run ``reindex`` after each relevant batch of changes; ``changes`` may be scripted in tests."""
    from indexer.languages.registry import EXTENSIONS

    try:
        loaded = load(layout.config_path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    roots = [str(r.root) for r in loaded.repositories if not r.problem]  # a moved one cannot be watched
    exts = frozenset(e for r in loaded.repositories for lang in r.languages for e in EXTENSIONS.get(lang, ()))
    batches: Iterable[set[tuple[Any, str]]]
    if changes is None:
        import watchfiles

        batches = watchfiles.watch(*roots, debounce=DEBOUNCE_MS, step=50, raise_interrupt=False)
    else:
        batches = changes
    print(f"watching {len(roots)} repositories for changes (Ctrl-C to stop)", file=sys.stderr)
    for batch in batches:
        if relevant(batch, exts):
            reindex()
