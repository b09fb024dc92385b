# Names bind by Python's scoping rules: locals shadow, class bodies are invisible to methods, global works.
# --- path: sc/lib.py ---
def helper():
    return 1


def shadowed(helper):
    return helper()
#          ^ none


def uses_module_level():
    return helper()
#          ^ calls: sc.lib.helper


def outer():
    def helper():
        return 2
    return helper()
#          ^ calls: sc.lib.outer.helper


class Box:
    def helper(self):
        return 3

    def run(self):
        return helper()
#              ^ calls: sc.lib.helper


counter = 0


def bump():
    global counter
    counter += 1
#   ^ refs: sc.lib.counter


def comprehension(items):
    return [helper for helper in items]
#           ^ none
