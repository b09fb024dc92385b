"""The Site vocabulary the Python extractor writes and the Python resolver reads.

Sites are cached per file, so this vocabulary is part of the extractor's
output: change it only together with ``EXTRACTOR_VERSION``.

Reference chains
    A reference is written as a dotted chain of segments: ``foo``,
    ``mod.func``, ``self.method``. A segment ending in ``()`` stands for the
    result of calling it: ``Foo().bar`` is ``bar`` looked up on what ``Foo()``
    returns. Two heads are special: ``super()`` (zero-argument super inside a
    method) and ``?`` (a receiver that is not a name chain, e.g. ``x[0].run``).

Head bindings
    Every reference site carries ``extra = (binding, scope, ...)``: where the
    first segment is bound, as decided by the extractor from Python's scoping
    rules (function locals are local for the whole function, class bodies are
    not visible from their methods, ``global``/``nonlocal`` respected):

    ``module``   look the name up in the file's module namespace
    ``local``    bound in the function or class ``scope`` by a nested def/class,
                 an import, or an assignment whose value the resolver can follow
    ``untyped``  a local whose value is unknown (kept only as a call receiver)
    ``self``     the first parameter of a method of class ``scope``
    ``cls``      the first parameter of a classmethod of class ``scope``
    ``super``    ``super()`` inside a method of class ``scope``
    ``unknown``  the ``?`` head; ``extra[2]`` holds the callee text

Site kinds (``name``; ``extra``)
    ``import``    ``import a.b [as c]``: name = module; extra = (alias or "",)
    ``from``      ``from M import n [as z]``: name = n; extra = (M as written,
                  dots kept for relative imports, bound name)
    ``star``      ``from M import *``: name = M as written
    ``call``      a call's callee chain; extra = (binding, scope[, text])
    ``decorator`` a decorator without arguments (resolved like a call)
    ``ref``       a name chain in load context
    ``arg``       a name chain passed as a call argument (callback if it is a function)
    ``type``      a name chain in an annotation
    ``base``      a class base; enclosing = the class
    ``bind``      a name bound to a followable value in scope ``enclosing``;
                  extra = (value chain, binding, scope, mode); mode ``ann`` means
                  the chain is the declared type, ``value`` means it is the value
                  itself; an empty chain marks a module name of unknown value
    ``attr``      an instance attribute of class ``enclosing`` (``self.x = ...``
                  or a class-body assignment); extra as for ``bind``
    ``returns``   a function's declared return type; extra = (binding, scope)
    ``fixture``   a pytest fixture's value: name = the name it is requested by,
                  enclosing = the fixture function; extra as for ``bind`` (its
                  return annotation, or the one value its returns/yields give).
                  A parameter pytest fills (of a test or a fixture) is a ``bind``
                  site of mode ``fixture`` whose chain is the requested name
    ``metaclass`` a class's ``metaclass=`` argument text; enclosing = the class
                  (its members may then come from the metaclass)
    ``dynamic``   the file calls ``globals()`` or ``exec()``: its module namespace
                  may hold names no statement binds (at most one per file)
    ``alt``       an import of a ``try`` body or of its ImportError handler that
                  binds a name both bind; name = the bound name, at the position of
                  its ``import``/``from`` site; extra = (the try statement's
                  ``line:col``, ``try`` | ``except``): only the body's first such
                  import is ``try`` (the one a checker reads), every handler's is
                  ``except`` (what the run time may take instead)

Sites of a decorator, base, parameter annotation or default value are
attributed to the declaration they belong to (``enclosing``), while their
head binding is decided in the scope where Python evaluates them.
"""

from __future__ import annotations

import builtins

IMPORT = "import"
FROM = "from"
STAR = "star"
CALL = "call"
DECORATOR = "decorator"
REF = "ref"
ARG = "arg"
TYPE = "type"
BASE = "base"
BIND = "bind"
ATTR = "attr"
RETURNS = "returns"
FIXTURE = "fixture"
METACLASS = "metaclass"
DYNAMIC = "dynamic"
ALT = "alt"

MODULE = "module"
LOCAL = "local"
UNTYPED = "untyped"
SELF = "self"
CLS = "cls"
SUPER = "super"
UNKNOWN = "unknown"

CALLED = "()"
SUPER_HEAD = "super()"
UNKNOWN_HEAD = "?"

ANNOTATION = "ann"
VALUE = "value"

# Names every module sees without binding them: never edges, never unresolved rows.
IMPLICIT_NAMES: frozenset[str] = frozenset(dir(builtins)) | {
    "__file__",
    "__path__",
    "__cached__",
    "__builtins__",
    "__annotations__",
    "__dict__",
    "__name__",
    "__doc__",
    "__package__",
    "__spec__",
    "__loader__",
    "__qualname__",
    "__module__",
}

# Members every class inherits from object: a miss on them is not a missing member.
OBJECT_MEMBERS: frozenset[str] = frozenset(dir(object)) | {
    "__init__",
    "__new__",
    "__call__",
    "__enter__",
    "__exit__",
    "__dict__",
    "__weakref__",
    "__module__",
    "__slots__",
    "__annotations__",
    "__qualname__",
    "__name__",
    "__mro__",
    "__bases__",
    "__wrapped__",
    "__orig_bases__",
    "__match_args__",
    "__dataclass_fields__",
    "__dataclass_params__",
}


def segment(seg: str) -> tuple[str, int]:
    """Split a chain segment into its name and how many times it is called."""
    calls = 0
    while seg.endswith(CALLED):
        seg = seg[:-2]
        calls += 1
    return seg, calls


# What calls a special method without naming it: the syntax or built-in that does, for the blind spot's text.
_IMPLICIT_BY: dict[str, str] = {
    "__init__": "a construction of its class (C(...)); find_references on the class lists them",
    "__new__": "a construction of its class (C(...)); find_references on the class lists them",
    "__post_init__": "the dataclass machinery after __init__",
    "__init_subclass__": "a class statement subclassing its class",
    "__getitem__": "a subscript (x[k])",
    "__setitem__": "a subscript assignment (x[k] = v)",
    "__delitem__": "a subscript deletion (del x[k])",
    "__missing__": "dict.__getitem__ on a missing key",
    "__contains__": "a membership test (k in x)",
    "__iter__": "a for loop, unpacking, iter() and every consumer of an iterable",
    "__next__": "a for loop and next()",
    "__len__": "len() and truth tests",
    "__bool__": "truth tests (if x, while x, not x)",
    "__call__": "a call of an instance (x(...))",
    "__enter__": "a with statement",
    "__exit__": "a with statement",
    "__aenter__": "an async with statement",
    "__aexit__": "an async with statement",
    "__await__": "an await",
    "__aiter__": "an async for loop",
    "__anext__": "an async for loop",
    "__getattr__": "an attribute lookup that finds nothing else",
    "__getattribute__": "every attribute lookup",
    "__setattr__": "every attribute assignment",
    "__delattr__": "every attribute deletion",
    "__get__": "an attribute lookup through a descriptor",
    "__set__": "an attribute assignment through a descriptor",
    "__set_name__": "a class statement holding the descriptor",
    "__repr__": "repr(), f-strings with !r and the interactive prompt",
    "__str__": "str(), print() and f-strings",
    "__format__": "format() and f-strings",
    "__hash__": "hash(), dict keys and set members",
    "__eq__": "==, !=, in, dict and set lookups",
    "__del__": "the garbage collector",
}


def is_special_method(name: str) -> bool:
    """A special method (``__x__``): Python calls it through syntax or the built-ins, not only by its name."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__") and name[2] != "_"


def implicit_call_detail(name: str) -> str:
    """What calls the special method ``name`` without naming it, as a blind spot says it."""
    by = _IMPLICIT_BY.get(name, "an operator, a statement or a built-in that uses this protocol")
    return f"Python calls {name} through {by}; the analyzer records no such call as a use of it"
