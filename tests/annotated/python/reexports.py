# Names re-exported through __init__ modules (chains, star imports, a cycle) resolve to the declaration.
# --- path: lib/__init__.py ---
from .api import connect
#                ^ imports: lib.core.engine.connect
from . import helpers
#             ^ imports: lib.helpers

# --- path: lib/api.py ---
from lib.core import connect
#                    ^ imports: lib.core.engine.connect

# --- path: lib/core/__init__.py ---
from .engine import *
#                   ^ imports: lib.core.engine

# --- path: lib/core/engine.py ---
def connect():
    return 1


def _hidden():
    return 2

# --- path: lib/helpers.py ---
def assist():
    return 3

# --- path: lib/cycle_a.py ---
from lib.cycle_b import thing
#                       ^ unresolved: IMPORT_NOT_RESOLVED

# --- path: lib/cycle_b.py ---
from lib.cycle_a import thing
#                       ^ unresolved: IMPORT_NOT_RESOLVED

# --- path: app.py ---
import lib
from lib import connect as c
#               ^ imports: lib.core.engine.connect
from lib.core import _hidden
#                    ^ unresolved: IMPORT_NOT_RESOLVED


def main():
    lib.connect()
#   ^ calls: lib.core.engine.connect
    c()
#   ^ calls: lib.core.engine.connect
    lib.helpers.assist()
#   ^ calls: lib.helpers.assist
    _hidden()
#   ^ none
