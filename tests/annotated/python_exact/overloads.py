# Overloaded methods: the implementation is the declaration; calls bind to it, stub names are not uses.
# --- path: ctx/__init__.py ---

# --- path: ctx/core.py ---
import typing as t


class Context:
    @t.overload
    def invoke(self, cb: int) -> int: ...

    @t.overload
    def invoke(self, cb: str) -> str: ...

    def invoke(self, cb):
        return cb


def use(ctx: Context) -> int:
    return ctx.invoke(1)
#          ^ calls: ctx.core.Context.invoke
