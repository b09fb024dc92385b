"""The Site vocabulary the Dart extractor writes and the Dart resolver reads.

Sites are cached per file: change this vocabulary only together with
``EXTRACTOR_VERSION``. A site sits on the identifier being resolved (for
``p.f()`` and ``x.m`` that is ``f`` and ``m``), which is where an exact
analyzer reports the use, so an exact answer replaces the candidate there.

Directive sites (``enclosing`` is "", the file's module symbol)
    ``import``   name = the URI; extra = (prefix or "", show names, hide names, "deferred" or "",
                 conditional alternative URIs), name lists comma-joined
    ``export``   name = the URI; extra = ("", show names, hide names, "", alternatives)
    ``show``     a name of an import's or export's ``show`` list; extra = (URI, prefix, "import" | "export")
    ``part``     name = the URI of a part file
    ``part_of``  name = the library's URI or its dotted name; extra = ("uri" | "name",)
    ``library``  name = the dotted library name of a ``library`` directive

Use sites (``extra = (qualifier, binding, qualifier_type)``)
    ``call``      the callee of an invocation (a constructor call ``Square(2)`` and ``Shape.named()`` too;
                  ``super(...)`` / ``this.named(...)`` in an initializer list is ``new`` / ``named``
                  with binding ``super`` / ``this``)
    ``callback``  a name or a ``x.name`` chain passed as an argument (a tear-off)
    ``ref``       any other use of a name in an expression
    ``type``      a type name in a type position (qualifier = the import prefix of ``p.T``)
    ``extends`` ``with`` ``implements`` ``on``   a type in a declaration's header; enclosing = the type
    ``typed``     not a use: the declared (or constructed) type of the enclosing field, variable or
                  getter, for receivers named by them; name = the type, qualifier = its import prefix

Qualifier bindings (``extra[1]``)
    ``""``      a bare identifier
    ``local``   the chain starts with a local variable or parameter; ``qualifier_type`` is its declared or
                constructed type when the syntax says it, else ""
    ``this``    ``this.x`` (``qualifier`` is ``this``, or ``this.a`` for longer chains)
    ``super``   ``super.x``
    ``outer``   the chain starts with a name not bound locally: an import prefix, a type, a top-level
                variable, a member of the enclosing class
    ``new``     the receiver is a constructor call: ``qualifier`` is the called chain (``Point.origin``),
                ``qualifier_type`` the type it constructs when the chain is a type's (``Point``)
    ``expr``    the qualifier is an expression (a call, an index, a literal): its type is unknown

Names bound locally (parameters, local variables and functions, loop and catch variables, type
parameters) are never sites: they are not declarations of the graph.
"""

from __future__ import annotations

IMPORT = "import"
EXPORT = "export"
SHOW = "show"
PART = "part"
PART_OF = "part_of"
LIBRARY = "library"

CALL = "call"
CALLBACK = "callback"
REF = "ref"
TYPE = "type"
EXTENDS = "extends"
WITH = "with"
IMPLEMENTS = "implements"
ON = "on"
TYPED = "typed"

LOCAL = "local"
THIS = "this"
SUPER = "super"
OUTER = "outer"
NEW = "new"
EXPR = "expr"

HERITAGE = frozenset({EXTENDS, WITH, IMPLEMENTS, ON})
DIRECTIVES = frozenset({IMPORT, EXPORT, SHOW, PART, PART_OF, LIBRARY})

# Names every Dart library sees without an import (dart:core) and keywords the grammar reads as names: never
# edges, never unresolved rows. Not exhaustive: a dart:core name missing here is a NAME_NOT_RESOLVED row.
DART_CORE: frozenset[str] = frozenset(
    {
        "Object",
        "Null",
        "Never",
        "dynamic",
        "void",
        "bool",
        "num",
        "int",
        "double",
        "String",
        "Symbol",
        "Type",
        "Function",
        "Record",
        "List",
        "Map",
        "Set",
        "Iterable",
        "Iterator",
        "MapEntry",
        "Comparable",
        "Pattern",
        "RegExp",
        "RegExpMatch",
        "Match",
        "Runes",
        "StringBuffer",
        "StringSink",
        "Sink",
        "Duration",
        "DateTime",
        "Uri",
        "UriData",
        "BigInt",
        "Future",
        "Stream",
        "FutureOr",
        "Enum",
        "Invocation",
        "StackTrace",
        "Stopwatch",
        "Expando",
        "WeakReference",
        "Finalizer",
        "Error",
        "Exception",
        "AssertionError",
        "TypeError",
        "ArgumentError",
        "RangeError",
        "IndexError",
        "StateError",
        "UnsupportedError",
        "UnimplementedError",
        "FormatException",
        "ConcurrentModificationError",
        "OutOfMemoryError",
        "StackOverflowError",
        "IntegerDivisionByZeroException",
        "NoSuchMethodError",
        "Deprecated",
        "pragma",
        "override",
        "deprecated",
        "print",
        "identical",
        "identityHashCode",
        "BidirectionalIterator",
        "Comparator",
        "hashCode",
        "runtimeType",
        "toString",
        "noSuchMethod",
        "loadLibrary",
        "call",
        "new",
    }
)
