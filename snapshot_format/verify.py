"""The full digest check of a generation, in a child process, so damage cannot take the caller down.

A generation whose bytes were flipped can make LMDB read past the end of its data file (a value length or
an overflow page count that no longer fits): the kernel answers with SIGBUS, which no Python code can
catch. Reading the whole generation in a short-lived child turns that into a reported damage instead of a
dead ``kivgraph status``, ``doctor`` or ``serve``.

Run: ``python -m snapshot_format.verify GENERATION_DIR`` — exit 0 when the digest matches, 1 with the
reason on stderr when it does not. This module is the child's program; the parent's side, which starts it and
reads its end, is ``snapshot_format.reader.verify_isolated`` (``Generation.verify_digest(isolated=True)``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from snapshot_format.errors import GenerationUnreadableError
from snapshot_format.reader import Generation


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m snapshot_format.verify GENERATION_DIR", file=sys.stderr)
        return 2
    try:
        with Generation(Path(argv[0])) as generation:
            generation.verify_digest()
    except GenerationUnreadableError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
