# Class inheritance edges, through a module alias and over several levels; a cyclic hierarchy terminates.
# --- path: shapes/base.py ---
class Base:
    def area(self):
        return 0

    def describe(self):
        return self.area()

# --- path: shapes/mid.py ---
import shapes.base as b


class Mid(b.Base):
#         ^ extends: shapes.base.Base
    pass

# --- path: shapes/leaf.py ---
from shapes.mid import Mid


class Leaf(Mid):
#          ^ extends: shapes.mid.Mid
    def show(self):
        return self.describe()
#              ^ calls: shapes.base.Base.describe


class Loop(Loop2):
    pass


class Loop2(Loop):
    def go(self):
        return self.nowhere()
#              ^ unresolved: MEMBER_NOT_RESOLVED
