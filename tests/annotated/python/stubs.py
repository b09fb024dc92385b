# A stub and the implementation it stands for (the markupsafe layout): the package re-exports escape and Buffer
# behind try: from ._speedups (a compiled module: only its .pyi is here) / except ImportError: from ._native.
# A use binds to what a checker reads, the stub; STANDS_FOR ties the stub to the fallback, members too (a .pyi
# beside its .py: tests/test_python_stubs.py). A stub of a compiled module with no fallback stands for nothing.
# --- path: esc/__init__.py ---
# !stands: esc._speedups.escape -> esc._native.escape
# !stands: esc._speedups.Buffer -> esc._native.Buffer
# !stands: esc._speedups.Buffer.write -> esc._native.Buffer.write
# !stands-alone: esc._compiled.fast_hash
# !stands-alone: esc._native.Buffer.__init__
try:
    from ._speedups import Buffer as Buffer
    #                      ^ imports: esc._speedups.Buffer from esc
    from ._speedups import escape as escape
except ImportError:
    from ._native import Buffer as Buffer
    #                    ^ imports: esc._native.Buffer from esc
    from ._native import escape as escape
# --- path: esc/_speedups.pyi ---
def escape(s: str) -> str: ...

class Buffer:
    def write(self, s: str) -> None: ...
# --- path: esc/_native.py ---
def escape(s: str) -> str:
    return s.replace("<", "&lt;")


class Buffer:
    def __init__(self) -> None:
        self.last = ""

    def write(self, s: str) -> None:
        self.last = escape(s)
        #           ^ calls: esc._native.escape from esc._native.Buffer.write
# --- path: esc/_compiled.pyi ---
def fast_hash(s: str) -> int: ...
# --- path: app:pages.py ---
from esc import Buffer, escape
from esc._compiled import fast_hash


def title(text: str) -> str:
    return escape(text)
    #      ^ calls: esc._speedups.escape from pages.title


def body(buffer: Buffer) -> None:
    buffer.write("x")
#   ^ calls: esc._speedups.Buffer.write from pages.body


def etag(text: str) -> int:
    return fast_hash(text)
    #      ^ calls: esc._compiled.fast_hash
