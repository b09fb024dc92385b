# A decorator is a call of the decorator function, made by the decorated declaration.
# --- path: web/app.py ---
import functools


def route(path):
    def wrap(fn):
        return fn
    return wrap


def logged(fn):
    @functools.wraps(fn)
    def inner(*args):
        return fn(*args)
    return inner


@logged
#^ calls: web.app.logged from web.app.index
def index():
    return "ok"


@route("/about")
#^ calls: web.app.route from web.app.about
def about():
    return "about"


class Page:
    @staticmethod
    def render():
        return index()
#              ^ calls: web.app.index
