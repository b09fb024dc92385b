"""The Site vocabulary the Rust extractor writes and the Rust CANDIDATE resolver reads.

Sites are cached per file: change this vocabulary only together with
``EXTRACTOR_VERSION``. A site sits on the identifier being resolved (the last
segment of a path, the method of ``x.m()``, the name of ``m!``), which is
also where rust-analyzer reports its occurrence, so an exact answer replaces
the candidate at the same position.

Every site's ``extra`` starts with ``scope``: the Rust module the site is in
(``crate::a`` for a file ``src/a.rs``, ``crate::a::tests`` inside its
``mod tests {}``), and ends with ``block``: the function whose body holds the
site when items or ``use`` declarations of that body are in scope ("" outside
bodies). Paths are written with ``::``, generic arguments dropped, ``Self``
replaced by the implementing type's path as the impl spells it.

Site kinds (``name``; ``extra``)
    ``use``        a leaf of a ``use`` tree or an ``extern crate``: name = the item's own name
                   (``*`` for a glob); extra = (scope, full path, alias or "", "pub" or "", block).
                   ``extern crate x as y`` is the path ``::x``.
    ``call``       a callee: ``f()``, ``a::f()``, ``T::f()``, ``x.m()``
    ``ref``        any other use of a value path (a const, a unit variant, a function named, not called)
    ``callback``   a path passed as a call argument
    ``type``       a type path in a type position (parameters, fields, bounds, impl headers, ``S {..}``)
    ``qualifier``  the last qualifier of a value path (``Type`` of ``Type::new()``): a type use when it names
                   a type, nothing when it names a module, never a row (the path's own site has it)
    ``field``      a field: ``x.f`` not called, or ``S { f: .. }``
    ``macro``      a macro invocation's name
    ``mod``        ``mod x;``: the module is the file Rust's rules place next to this one
                   (``x.rs`` or ``x/mod.rs`` beside a crate root or ``mod.rs``, under ``a/`` for ``a.rs``),
                   or the one its ``#[path = ".."]`` names; extra = (scope, that path or "", ``path``, "", block)
    ``impl``       the trait of ``impl Trait for Type``; extra = (scope, trait path, self type path or "" when
                   the self type is no nominal type, member prefix, block). The impl's members are the
                   file's declarations directly under the member prefix.
    ``inherent``   the self type of ``impl Type``; extra = (scope, type path, "", member prefix, block)
    ``supertrait`` a bound of ``trait A: B``; enclosing = the trait
    ``derive``     a name in ``#[derive(..)]``; enclosing = the type (the impls it makes are invisible)
    ``typeof``     the declared type of a declaration (a field's type, a function's return type, a
                   const's or static's type, what a type alias names), for receivers: name = the declaration's
                   qualified name, extra = (scope, type encoding, block, "field" for a field's or "")
    ``macro_arg``  an identifier inside a macro's arguments, which tree-sitter reads as a token tree:
                   a use nobody can bind without expanding the macro; extra = (macro name,)

For ``call``, ``ref``, ``callback``, ``type``, ``qualifier``, ``field``, ``macro``, ``supertrait`` and
``derive`` the extra is
(scope, qualifier, binding, type encoding, block):

Qualifier bindings
    ``path``   the qualifier is a path (``a::b`` of ``a::b::f``; "" for a bare name)
    ``recv``   a method or field on a receiver whose type the encoding gives ("" = not known from syntax)
    ``as``     ``<T as Trait>::f``: qualifier = the trait path, encoding = T's type encoding (also
               ``Self::Item`` inside ``impl Trait for T``, which rustc reads the same way)

Type encodings (what the syntax says about a value's type)
    ``type:P``         the nominal type at path P
    ``bound:P1+P2``    some type bounded by these traits (a type parameter, ``impl Tr``, ``dyn Tr``)
    ``ext:``           a type no repository declares (primitives, slices, tuples, literals)
    ``ret:P``          the type of the value at path P: what a function returns, a const's type, a unit
                       struct or variant itself
    ``field:N;E``      the type of field N of a value of encoding E
    ``method:N;E``     what method N returns on a value of encoding E
    ""                 unknown

Bare identifiers bound locally (parameters, ``let``, closure parameters,
patterns) are never sites: they are not declarations of the graph.
"""

from __future__ import annotations

USE = "use"
CALL = "call"
REF = "ref"
CALLBACK = "callback"
TYPE = "type"
QUALIFIER = "qualifier"
FIELD = "field"
MACRO = "macro"
MOD = "mod"
IMPL = "impl"
INHERENT = "inherent"
SUPERTRAIT = "supertrait"
DERIVE = "derive"
TYPEOF = "typeof"
MACRO_ARG = "macro_arg"

PATH = "path"
RECV = "recv"
AS = "as"

# Crates of the toolchain: never a registered repository, so their names are nobody's and leave no rows.
TOOLCHAIN_CRATES: frozenset[str] = frozenset({"std", "core", "alloc", "proc_macro", "test"})

PRIMITIVES: frozenset[str] = frozenset(
    {
        "bool",
        "char",
        "str",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "f32",
        "f64",
    }
)

# Names of the standard prelude (and the primitive types): never edges, never unresolved rows.
PRELUDE: frozenset[str] = PRIMITIVES | frozenset(
    {
        "Option",
        "Some",
        "None",
        "Result",
        "Ok",
        "Err",
        "String",
        "Vec",
        "Box",
        "ToString",
        "ToOwned",
        "Clone",
        "Copy",
        "Send",
        "Sync",
        "Sized",
        "Unpin",
        "Drop",
        "Fn",
        "FnMut",
        "FnOnce",
        "Iterator",
        "IntoIterator",
        "Extend",
        "DoubleEndedIterator",
        "ExactSizeIterator",
        "Default",
        "Eq",
        "PartialEq",
        "Ord",
        "PartialOrd",
        "AsRef",
        "AsMut",
        "Into",
        "From",
        "TryFrom",
        "TryInto",
        "FromIterator",
        "drop",
        "Debug",
        "Hash",
        "self",
        "Self",
        "super",
        "crate",
        "_",
    }
)

# Macros of the toolchain: their invocations are nobody's declarations.
STANDARD_MACROS: frozenset[str] = frozenset(
    {
        "println",
        "print",
        "eprintln",
        "eprint",
        "format",
        "format_args",
        "vec",
        "panic",
        "assert",
        "assert_eq",
        "assert_ne",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
        "write",
        "writeln",
        "unreachable",
        "unimplemented",
        "todo",
        "matches",
        "dbg",
        "concat",
        "stringify",
        "include",
        "include_str",
        "include_bytes",
        "env",
        "option_env",
        "cfg",
        "line",
        "column",
        "file",
        "module_path",
        "compile_error",
        "thread_local",
        "try",
        "addr_of",
        "addr_of_mut",
        "const_format_args",
        "concat_idents",
        "trace_macros",
        "log_syntax",
        "is_x86_feature_detected",
    }
)
