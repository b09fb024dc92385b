# What cannot be bound is an unresolved row with a reason; what is not indexed (stdlib, third party) is silent.
# --- path: pkg/__init__.py ---
# --- path: pkg/core.py ---
import os
import requests
#      ^ none
from . import missing_sibling
#             ^ unresolved: IMPORT_NOT_RESOLVED
import pkg.nothing_here
#      ^ unresolved: IMPORT_NOT_RESOLVED
from ... import too_far
#               ^ unresolved: IMPORT_NOT_RESOLVED


def work(client, path):
    client.fetch(path)
#   ^ unresolved: RECEIVER_NOT_RESOLVED
    os.path.join(path, "x")
#   ^ none
    requests.get(path)
#   ^ none
    undefined_function()
#   ^ unresolved: NAME_NOT_RESOLVED
    print(len(path))
#   ^ none
    missing_sibling.run()
#   ^ none


class Plain:
    def run(self):
        return self.missing()
#              ^ unresolved: MEMBER_NOT_RESOLVED

    def ok(self):
        return self.__repr__()
#              ^ none
