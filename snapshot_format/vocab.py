"""Frozen, append-only vocabularies: edge kinds, confidence levels, provenance.

The numeric codes are written into generations. Never renumber or reuse a
code; append new members at the end and bump FEATURE_VERSION.
"""

from enum import IntEnum


class EdgeKind(IntEnum):
    CONTAINS_PACKAGE = 1
    CONTAINS_FILE = 2
    DEFINES = 3
    METHOD_OF = 4
    PART_OF = 5
    PACKAGE_DEPENDS_ON = 6
    MODULE_DEPENDS_ON = 7
    IMPORTS_SYMBOL = 8
    EXPORTS = 9
    REEXPORTS = 10
    REFERENCES = 11
    CALLS_DIRECT = 12
    PASSES_AS_CALLBACK = 13
    ASSIGNS_FUNCTION = 14
    RETURNS_FUNCTION = 15
    TYPE_USES = 16
    IMPLEMENTS = 17
    EXTENDS = 18
    EMBEDS = 19
    OVERRIDES = 20
    # The source stands for the target at run time, so the uses of either are the uses of both: a type stub
    # (``m.pyi``) for the implementation of its module, the name a ``try`` block imports for the one its
    # ``except ImportError`` fallback imports (feature 7). A relation between declarations, never a use.
    STANDS_FOR = 21


# Kinds that describe a use or a type relation: the query tools' reference vocabulary.
REFERENCE_KINDS: frozenset[EdgeKind] = frozenset(
    {
        EdgeKind.IMPORTS_SYMBOL,
        EdgeKind.EXPORTS,
        EdgeKind.REEXPORTS,
        EdgeKind.REFERENCES,
        EdgeKind.CALLS_DIRECT,
        EdgeKind.PASSES_AS_CALLBACK,
        EdgeKind.ASSIGNS_FUNCTION,
        EdgeKind.RETURNS_FUNCTION,
        EdgeKind.TYPE_USES,
        EdgeKind.IMPLEMENTS,
        EdgeKind.EXTENDS,
        EdgeKind.EMBEDS,
        EdgeKind.OVERRIDES,
        EdgeKind.PART_OF,
    }
)

# Containment: structure, never a use; traversals skip these.
CONTAINMENT_KINDS: frozenset[EdgeKind] = frozenset(
    {EdgeKind.CONTAINS_PACKAGE, EdgeKind.CONTAINS_FILE, EdgeKind.DEFINES, EdgeKind.METHOD_OF}
)


class Confidence(IntEnum):
    EXACT_TYPECHECKED = 1
    EXACT_DECLARATION_MAPPED = 2
    EXACT_PACKAGE_MAPPED = 3
    STRUCTURAL_CERTAIN = 4
    CANDIDATE = 5
    UNRESOLVED = 6

    @property
    def is_exact(self) -> bool:
        return self <= Confidence.STRUCTURAL_CERTAIN


class Provenance(IntEnum):
    TYPESCRIPT_CHECKER = 1
    TYPESCRIPT_MODULE_RESOLUTION = 2
    TYPESCRIPT_DECLARATION_MAP = 3
    TYPESCRIPT_PROJECT_REFERENCE = 4
    GO_TYPES_DEF = 5
    GO_TYPES_USE = 6
    GO_TYPES_SELECTION = 7
    GO_AST_CALL = 8
    GO_AST_CALLBACK = 9
    GO_OBJECT_PATH = 10
    TREE_SITTER_SYNTAX = 11
    PACKAGE_MANIFEST = 12
    RUST_ANALYZER_DEF = 13
    RUST_ANALYZER_USE = 14
    RUST_ANALYZER_MONIKER = 15
    RUST_SYNTAX_CALL = 16
    RUST_SYNTAX_TYPE = 17
    RUST_SYNTAX_IMPL = 18
    RUST_SYNTAX_CALLBACK = 19
    PYTHON_INDEXER_DEF = 20
    PYTHON_INDEXER_USE = 21
    PYTHON_SYNTAX_CALL = 22
    DART_ANALYZER_DEF = 23
    DART_ANALYZER_USE = 24
    DART_SYNTAX_CALL = 25
    # Python's import system (feature 7): a stub file stands for the module of its name, an ImportError
    # fallback binds the same name (STANDS_FOR edges).
    PYTHON_IMPORT_SYSTEM = 26
    # scip-java (javac's own attribution through the SemanticDB plugin), feature 9.
    JAVA_INDEXER_DEF = 27
    JAVA_INDEXER_USE = 28
    # A SCIP index the repository names in its configuration, written by any SCIP indexer (feature 9).
    SCIP_INDEX_DEF = 29
    SCIP_INDEX_USE = 30
    # A call javac makes that no source line writes (feature 11): a constructor's implicit super(), a default
    # constructor's, an enum constant's anonymous body running the enum's constructor. Bound from javac's own
    # attribution of the types (the superclass, the enum) and the language's rule for which constructor runs.
    JAVA_IMPLICIT_CALL = 31


# Provenances that can never back an exact edge (syntax alone proves nothing).
SYNTAX_ONLY_PROVENANCES: frozenset[Provenance] = frozenset(
    {Provenance.TREE_SITTER_SYNTAX, Provenance.PYTHON_SYNTAX_CALL, Provenance.DART_SYNTAX_CALL}
)

# Kinds accepted by the symbol-kind filters (declarations of every supported language).
SYMBOL_KINDS: frozenset[str] = frozenset(
    {
        "alias",
        "associated_type",
        "attribute",
        "class",
        "const",
        "constant",
        "constructor",
        "enum",
        "enum_member",
        "export",
        "extension",
        "extension_type",
        "field",
        "func",
        "function",
        "getter",
        "implementation",
        "import",
        "interface",
        "local_variable",
        "macro",
        "method",
        "mixin",
        "module",
        "namespace",
        "parameter",
        "prefix",
        "property",
        "self_parameter",
        "setter",
        "static",
        "static_method",
        "struct",
        "trait",
        "trait_method",
        "type",
        "type_alias",
        "type_parameter",
        "union",
        "var",
        "variable",
        "variant",
    }
)

# The Unresolved reason of a type relation the type checker could not decide: whether some instantiation
# of a type (the row's ``source``) implements an interface (the row's ``name``, its qualified name, in
# ``package``). Readers make the members it names ``dispatch_unknown``, never COMPLETE.
DISPATCH_UNDECIDED = "DISPATCH_UNDECIDED"

# The Unresolved reason of a declaration its language calls without naming it (Python's special methods:
# ``x[k] = v`` calls ``__setitem__``, ``C()`` calls ``__init__``), which no analyzer records as a use. The row
# sits on the declaration (``source`` is its key); readers make it a blind spot of that declaration alone.
IMPLICIT_CALL = "IMPLICIT_CALL"
# The Unresolved reason of a method that overrides a base method outside the graph (Python: a class deriving
# from collections.abc.MutableMapping overrides its popitem): the base's own code, or code handed the object as
# the base, may call it unseen. On the method's declaration (``source``), named by the method's name, the base
# method's module in ``package``; readers make it a blind spot of that method alone, as ``IMPLICIT_CALL``.
EXTERNAL_OVERRIDE = "EXTERNAL_OVERRIDE"
# Rows that speak of their declaration alone (``source``), not of a use of its name.
DECLARATION_ROWS: frozenset[str] = frozenset({IMPLICIT_CALL, EXTERNAL_OVERRIDE})

# Dispatch through interfaces outside the graph (Go: the standard library's, the universe's error, a module no
# registered repository provides), which no declaration of the graph stands for. Relation rows, not failures:
# ``EXTERNAL_IMPLEMENTS`` sits on a method (``source``, ``path``, ``line``) that implements the interface method
# named by ``name`` (its qualified name, ``Writer.Write``) in ``package`` (``io``; ``builtin`` for error.Error);
# ``EXTERNAL_INTERFACE_CALL`` (a call) and ``EXTERNAL_INTERFACE_VALUE`` (a method value: passed, assigned,
# returned) are uses written against such a method, named the same way. Readers join the two into dispatch
# rows, as they bridge IMPLEMENTS edges. ``EXTERNAL_CONVERSION`` is a blind spot: at the site where a value of
# a type is converted to such an interface, naming the type's method (``name``, its qualified name, in
# ``package``) that code outside the graph may then call.
EXTERNAL_IMPLEMENTS = "EXTERNAL_IMPLEMENTS"
EXTERNAL_INTERFACE_CALL = "EXTERNAL_INTERFACE_CALL"
EXTERNAL_INTERFACE_VALUE = "EXTERNAL_INTERFACE_VALUE"
EXTERNAL_CONVERSION = "EXTERNAL_CONVERSION"
EXTERNAL_USES: frozenset[str] = frozenset({EXTERNAL_INTERFACE_CALL, EXTERNAL_INTERFACE_VALUE})
# Rows that record a relation to what is outside the graph rather than a use that failed to bind.
EXTERNAL_RELATIONS: frozenset[str] = frozenset({EXTERNAL_IMPLEMENTS, *EXTERNAL_USES})
# The package the universe's declarations (error) are named under, as go doc names them.
BUILTIN_PACKAGE = "builtin"


def outside_name(package: str, qualified_name: str) -> str:
    """How answers write a declaration outside the graph: ``io.Writer.Write``; the universe's ``error.Error``."""
    return qualified_name if package == BUILTIN_PACKAGE else f"{package}.{qualified_name}"
