"""Scratch space of an index run: under the state directory, emptied at the start and end of each run.

Analyzer adapters write their SCIP output and generated configs through
``tempfile``; during a run ``tempfile`` points at ``STATE/scratch``, so a killed
run leaves its debris where the next run (which holds the indexer lock, so no
other run can be using it) deletes it, never in ``/tmp``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from snapshot_format.layout import StateLayout


@contextmanager
def scratch_directory(layout: StateLayout) -> Iterator[Path]:
    """Route ``tempfile`` into an emptied ``STATE/scratch`` for the block (call with the indexer lock held)."""
    root = layout.scratch_dir
    shutil.rmtree(root, ignore_errors=True)  # what a killed run left
    root.mkdir(parents=True, exist_ok=True)
    previous = tempfile.tempdir
    tempfile.tempdir = str(root)
    try:
        yield root
    finally:
        tempfile.tempdir = previous
        shutil.rmtree(root, ignore_errors=True)
