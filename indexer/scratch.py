"""Scratch space of an index run: under the state directory, emptied at the start and end of each run.

Analyzer adapters write their SCIP output and generated configs through
``tempfile``; during a run ``tempfile`` points at ``STATE/scratch``, so a killed
run leaves its debris where the next run (which holds the indexer lock, so no
other run can be using it) deletes it, never in ``/tmp``. The live analyzer groups
are recorded there too (``indexer/children.py``): the next run ends any group a
killed run left before it deletes the records.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from indexer import children
from indexer.damage import remove_tree
from snapshot_format.layout import StateLayout

GROUPS = "analyzer-groups"


@contextmanager
def scratch_directory(layout: StateLayout) -> Iterator[Path]:
    """Route ``tempfile`` into an emptied ``STATE/scratch`` for the block (call with the indexer lock held)."""
    root = layout.scratch_dir
    ended = children.end_leftovers(root / GROUPS)
    if ended:
        pids = ", ".join(str(pid) for pid in ended)
        print(
            f"warning: ended {len(ended)} analyzer processes a killed run left running (pids {pids})", file=sys.stderr
        )
    remove_tree(root)  # what a killed run left
    root.mkdir(parents=True, exist_ok=True)
    previous = tempfile.tempdir
    tempfile.tempdir = str(root)
    try:
        with children.recorded_in(root / GROUPS):
            yield root
    finally:
        tempfile.tempdir = previous
        remove_tree(root)
