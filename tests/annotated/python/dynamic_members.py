# Members that may come from what is not indexed are silent rather than MEMBER_NOT_RESOLVED: a builtin base,
# a metaclass, __getattr__. Tuple-unpacked attributes are known, their values are not. A comprehension's
# first iterable sees the class body.
# --- path: dyn/models.py ---
import abc


class Registry(dict):
    def names(self):
        return self.keys()
#              ^ none


class Plugin(metaclass=abc.ABCMeta):
    def attach(self):
        return Plugin.register(int)
#              ^ none


class Proxy:
    def __getattr__(self, name):
        return name

    def run(self):
        return self.anything()
#              ^ none


class Pair:
    def __init__(self, make):
        self.left, self.right = make()

    def use(self):
        return self.left.value()
#              ^ unresolved: RECEIVER_NOT_RESOLVED

    def other(self):
        return self.nothing()
#              ^ unresolved: MEMBER_NOT_RESOLVED


class Table:
    columns = ["a", "b"]
    widths = [len(c) for c in columns]
#                             ^ none
