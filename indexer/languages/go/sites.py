"""The Site vocabulary the Go extractor writes and the Go resolvers read.

Sites are cached per file: change this vocabulary only together with
``EXTRACTOR_VERSION``. Every site sits on the identifier being resolved (for
``pkg.F`` and ``x.M`` that is ``F`` and ``M``, not the qualifier), which is
also where the exact analyzer reports its uses, so an exact answer replaces
the candidate at the same position.

Site kinds (``name`` is the identifier; ``extra = (qualifier, binding, qualifier_type)``)
    ``import``    an import spec; name = the import path, extra = (alias or "",)
    ``call``      the callee of a call
    ``callback``  a name or selector passed as a call argument
    ``ref``       any other use of a name in an expression
    ``type``      a type name in a type position (qualifier = the package name of ``pkg.T``)
    ``embed``     an embedded field of a struct or an embedded interface; enclosing = the type

Qualifier bindings (``extra[1]``)
    ``""``       a bare identifier (no qualifier)
    ``local``    the qualifier is a name bound inside the enclosing function;
                 ``qualifier_type`` is its declared or constructed type when
                 the syntax says it (receiver, typed parameter, ``var v T``,
                 ``v := T{}`` or ``&T{}``), else ""
    ``outer``    the qualifier is not bound locally: an import name or a package-level name
    ``expr``     the qualifier is an expression (a call, an index, a chain): unknown type

Bare identifiers bound locally (parameters, ``:=``, local ``var``, type
parameters, range variables) are never sites: they are not declarations of
the graph.
"""

from __future__ import annotations

IMPORT = "import"
CALL = "call"
CALLBACK = "callback"
REF = "ref"
TYPE = "type"
EMBED = "embed"

LOCAL = "local"
OUTER = "outer"
EXPR = "expr"

# Predeclared identifiers of the universe scope: never edges, never unresolved rows.
PREDECLARED: frozenset[str] = frozenset(
    {
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "true",
        "false",
        "iota",
        "nil",
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "_",
    }
)
