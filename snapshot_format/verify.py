"""The full digest check of a generation, in a child process, so damage cannot take the caller down.

A generation whose bytes were flipped can make LMDB read past the end of its data file (a value length or
an overflow page count that no longer fits): the kernel answers with SIGBUS, which no Python code can
catch. Reading the whole generation in a short-lived child turns that into a reported damage instead of a
dead ``kivgraph status``, ``doctor`` or ``serve``.

Run: ``python -m snapshot_format.verify GENERATION_DIR`` — exit 0 when the digest matches, 1 with the
reason on stderr when it does not.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from snapshot_format.errors import DigestMismatchError, GenerationUnreadableError

TIMEOUT_SECONDS = 600.0


def verify_isolated(path: Path, name: str, timeout: float = TIMEOUT_SECONDS) -> None:
    """Recompute the digest of the generation at ``path`` in a child; DigestMismatchError says why it failed."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "snapshot_format.verify", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise DigestMismatchError(f"generation {name}: the digest check did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise DigestMismatchError(f"generation {name}: the digest check could not start: {exc}") from None
    if proc.returncode == 0:
        return
    if proc.returncode < 0:
        try:
            signame = signal.Signals(-proc.returncode).name
        except ValueError:
            signame = f"signal {-proc.returncode}"
        raise DigestMismatchError(
            f"generation {name}: damaged, reading it killed the reader ({signame}: "
            "its data points past the end of the file)"
        )
    reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    raise DigestMismatchError(reason)


def main(argv: list[str]) -> int:
    from snapshot_format.reader import Generation

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
