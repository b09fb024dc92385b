# Two classes declare a method of the same name: every call binds to its own class's method.
# --- path: geo/shapes.py ---
class Circle:
    def area(self):
        return 3


class Square:
    def area(self):
        return 4

    def twice(self):
        return self.area() * 2
#              ^ calls: geo.shapes.Square.area from geo.shapes.Square.twice

# --- path: geo/use.py ---
from geo.shapes import Circle, Square


def by_annotation(c: Circle, s: Square):
#                    ^ type: geo.shapes.Circle
    return c.area() + s.area()
#          ^ calls: geo.shapes.Circle.area
#                     ^ calls: geo.shapes.Square.area


def by_construction():
    c = Circle()
#       ^ calls: geo.shapes.Circle
    s = Square()
    return c.area(), s.area()
#          ^ calls: geo.shapes.Circle.area
#                    ^ calls: geo.shapes.Square.area


def chained():
    return Square().area()
#          ^ calls: geo.shapes.Square
#          ^ calls: geo.shapes.Square.area


def ambiguous(flag):
    shape = Circle()
    if flag:
        shape = Square()
    return shape.area()
#          ^ unresolved: RECEIVER_NOT_RESOLVED
