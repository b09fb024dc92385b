"""Where this machine keeps the repositories a generation names: the ``[[repository]]`` entries of kivgraph.toml.

A generation published from bundles (``kivgraph publish``) on a machine without checkouts names no directory
for a repository, and one published elsewhere names that machine's; the server reads a repository's files
(``get_source``, git checks) from the checkout its own kivgraph.toml registers under the same name. Only
names and paths are read here, leniently: the indexer validates the file (serve never imports it).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from snapshot_format.regular import IrregularFileError, read_regular

_MAX_CONFIG_BYTES = 16 << 20


def registered_checkouts(config_path: Path) -> dict[str, str]:
    """Repository name -> the directory kivgraph.toml registers for it (existing directories only)."""
    try:
        data = tomllib.loads(read_regular(config_path, limit=_MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, IrregularFileError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    entries = data.get("repository")
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        name, raw = entry.get("name"), entry.get("path")
        if not isinstance(name, str) or not isinstance(raw, str):
            continue
        expanded = Path(os.path.expandvars(os.path.expanduser(raw)))
        path = expanded if expanded.is_absolute() else config_path.parent / expanded
        if path.is_dir():
            out[name] = str(path.resolve())
    return out
