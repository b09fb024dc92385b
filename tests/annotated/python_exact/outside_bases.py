# Calls nobody writes (docs/surface.md §4.8): a mapping deriving from the standard library's MutableMapping.
# Its popitem overrides a base method outside the graph, which the base's own clear() calls
# (EXTERNAL_OVERRIDE); its special methods are called by syntax (IMPLICIT_CALL); a plain method is neither.
# --- path: store/mapping.py ---
import collections.abc


class Store(collections.abc.MutableMapping):
    def __init__(self):
#   ^ unresolved: IMPLICIT_CALL
        self.data = {}

    def __getitem__(self, key):
#   ^ unresolved: IMPLICIT_CALL
        return self.data[key]

    def __setitem__(self, key, value):
#   ^ unresolved: IMPLICIT_CALL
        self.data[key] = value

    def __delitem__(self, key):
        del self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)

    def popitem(self):
#   ^ unresolved: EXTERNAL_OVERRIDE
        key = next(iter(self.data))
        return key, self.data.pop(key)

    def keys_sorted(self):
#   ^ none
        return sorted(self.data)


def drain(store: Store) -> None:
    store.clear()
    store["k"] = 1
    store.popitem()
#   ^ calls: store.mapping.Store.popitem
