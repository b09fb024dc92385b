# A function nobody calls has no incoming edge; getattr() with a string is never an edge.
# --- path: tools/ops.py ---
# !uncalled: tools.ops.never_called
def used():
    return 1


def never_called():
    return 2


def dynamic(obj):
    return getattr(obj, "never_called")()
#          ^ none


def caller():
    return used()
#          ^ calls: tools.ops.used
