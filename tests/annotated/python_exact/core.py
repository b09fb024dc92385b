# Inheritance, annotated instances, homonym methods, re-exports, aliases, decorators, dynamic access.
# --- path: shapes/__init__.py ---
from shapes.base import Shape
#                       ^ imports: shapes.base.Shape
from .circles import Circle
#                    ^ imports: shapes.circles.Circle

# --- path: shapes/base.py ---
import functools


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


class Shape:
    def area(self) -> float:
        return 0.0

    def describe(self) -> str:
        return str(self.area())
#                  ^ calls: shapes.base.Shape.area

# --- path: shapes/circles.py ---
from shapes.base import Shape, traced


class Circle(Shape):
#            ^ extends: shapes.base.Shape
    def area(self) -> float:
        return 3.14

    @traced
    #^ calls: shapes.base.traced
    def label(self) -> str:
        return self.describe()
#              ^ calls: shapes.base.Shape.describe


class Square(Shape):
    def area(self) -> float:
        return 4.0

# --- path: app.py ---
import shapes.circles as rnd
#      ^ imports: shapes.circles
import shapes
from shapes import Circle
#                  ^ imports: shapes.circles.Circle
from shapes.circles import Square


def measure(s: Square) -> float:
#              ^ type: shapes.circles.Square
    return s.area()
#          ^ calls: shapes.circles.Square.area


def via_base(s: shapes.Shape) -> float:
#               ^ type: shapes.base.Shape
    return s.describe()
#          ^ calls: shapes.base.Shape.describe


def main() -> float:
    c = rnd.Circle()
#       ^ calls: shapes.circles.Circle
    c.label()
#   ^ calls: shapes.circles.Circle.label
    measure(Square())
#   ^ calls: app.measure
#           ^ calls: shapes.circles.Square
    sorted([c], key=measure)
#                   ^ callback: app.measure
    return Circle().area()
#          ^ calls: shapes.circles.Circle.area
#          ^ calls: shapes.circles.Circle


def dynamic(obj, name: str) -> object:
    fn = getattr(obj, name)
    fn()
#   ^ none
    return getattr(Circle(), "label")()
#          ^ none


def untyped(x):
    return x.area()
#          ^ unresolved: RECEIVER_NOT_RESOLVED
