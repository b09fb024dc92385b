# A member a mixin uses but only its subclasses provide binds to the one provider; with several providers
# (dispatch we cannot decide) it stays silent. Attributes set through cls in a classmethod are known.
# --- path: mix/base.py ---
class Checks:
    def verify(self):
        return self.assert_ok()
#              ^ calls: mix.base.Harness.assert_ok


class Harness:
    def assert_ok(self):
        return True


class Case(Checks, Harness):
    pass


class Render:
    def show(self):
        return self.draw()
#              ^ none


class Circle(Render):
    def draw(self):
        return "o"


class Square(Render):
    def draw(self):
        return "[]"


class Lonely:
    def run(self):
        return self.gone()
#              ^ unresolved: MEMBER_NOT_RESOLVED


class WithRoot:
    @classmethod
    def setup(cls):
        cls.root = Harness()

    def use(self):
        return self.root.assert_ok()
#              ^ calls: mix.base.Harness.assert_ok
