# An import provided by exactly one other registered repository binds across repositories and records a
# package dependency; a module two other repositories provide is ambiguous.
# --- path: provider:geom/__init__.py ---
from .vec import Vec, dot

# --- path: provider:geom/vec.py ---
class Vec:
    def norm(self):
        return 1


def dot(a, b):
    return 0

# --- path: twin_a:common/__init__.py ---
def shared():
    return 1

# --- path: twin_b:common/__init__.py ---
def shared():
    return 2

# --- path: consumer:app/run.py ---
# !depends: consumer/app -> provider/geom
import geom
#      ^ imports: provider:geom
from geom import Vec
#                ^ imports: provider:geom.vec.Vec
from common import shared
#                  ^ unresolved: AMBIGUOUS_PACKAGE_PROVIDER


def main():
    v = Vec()
#       ^ calls: provider:geom.vec.Vec
    geom.dot(v, v)
#   ^ calls: provider:geom.vec.dot
    shared()
#   ^ none
    return v.norm()
#          ^ calls: provider:geom.vec.Vec.norm
