"""The language table: every language kivgraph knows, one row each, read by the indexer and the server alike.

A row says what both sides must agree on about a language: its id (as written in ``kivgraph.toml``, in
records and in answers), the names a user may type for it, the file extensions it owns, how its declarations
and modules are named, how its names say whether they are exported, and the syntax of its bodies (how the
server, which never parses, finds where a declaration ends in a file that changed since indexing).

Code outside a language's own folder (``indexer/languages/<name>/``) reads these properties and never branches
on a language's id (``tests/test_language_table.py`` greps for it). Adding a language is one row here plus its
folder. Ids are written into generations: never rename one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

# How the qualified names of a language's declarations are formed:
#   "package"     the file's module name, dotted, is the package and prefixes the name (Python ``click.core.Context``)
#   "file_path"   a module is named by its file's path without the extension, dotted (``src.query.QueryClient``)
#   "import_path" the package is a field, not part of the name, and is named by its import path, whose last
#                 element (minus a ``/vN`` or ``.vN`` version suffix) is how code refers to it (Go: ``FlagSet.Parse``
#                 in ``github.com/spf13/pflag``, typed ``pflag.FlagSet.Parse``)
#   "crate_path"  paths from the crate's root separated by ``::``, re-exported by ``pub use`` (Rust)
ModuleNames = Literal["package", "file_path", "import_path", "crate_path"]

# Whether a declaration's name says if it is exported:
#   "underscore"  exported unless the name starts with ``_`` (Python's convention, Dart's library privacy)
#   "capital"     exported when the name starts with a capital letter (Go)
#   "declared"    a modifier or export list decides; the name says nothing (TypeScript's export, Rust's pub)
ExportRule = Literal["underscore", "capital", "declared"]


@dataclass(frozen=True)
class BodySyntax:
    """How a declaration's body is delimited, for re-anchoring a declaration in changed text (server/queries/anchor.py)."""

    # "indent": a header closed by ``:`` and the lines indented deeper than it, decorators above (Python);
    # "braces": the first ``{`` outside strings and comments opens the body, its matching ``}`` ends it
    blocks: Literal["indent", "braces"]
    single_quote_strings: bool = False  # ``'…'`` is a string; otherwise a character literal or a lifetime
    triple_quote_strings: bool = False  # ``'''`` and ``\"\"\"`` open strings that may span lines
    # a backtick string is raw: no escapes and no ``${…}`` (Go); otherwise a template literal
    raw_backticks: bool = False


@dataclass(frozen=True)
class Language:
    """One row of the table."""

    id: str
    aliases: tuple[str, ...]  # other names accepted in configuration (lower case), besides the id
    extensions: tuple[str, ...]  # file extensions, with the dot
    module_names: ModuleNames
    export_rule: ExportRule
    body: BodySyntax
    # Regular expressions of lines that declare a name (group 1 is the name): how the server names a declaration
    # a diff adds or removes that the generation does not hold (server/queries/changes.py).
    declaring_lines: tuple[str, ...]
    # Languages that call each other's declarations share a family (a .js file imports a .ts module and back).
    family: str = ""
    separator: str = "."  # between the segments of a qualified name as developers type it
    # Types implement an interface without naming it (Go): without the type checker, no implementation is known.
    structural_typing: bool = False
    # The test-file patterns (fnmatch on a repository-relative path) the indexer used before files carried their
    # own test mark (feature 5); frozen: a newer generation carries its own marks.
    tests_before_feature_5: tuple[str, ...] = field(default=())

    @property
    def language_family(self) -> str:
        return self.family or self.id

    @cached_property
    def declaring_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.declaring_lines)


def _dirs_and_names(*items: str) -> tuple[str, ...]:
    """fnmatch patterns for directories (``tests/`` anywhere) and file names (anywhere)."""
    out: list[str] = []
    for item in items:
        out += [f"{item}*", f"*/{item}*"] if item.endswith("/") else [item, f"*/{item}"]
    return tuple(out)


_COMMON_TEST_DIRS = ("test/", "tests/", "testing/", "__tests__/", "testdata/")
_IDENT = r"([A-Za-z_$][\w$]*)"
_BRACES = BodySyntax(blocks="braces")
_TS_JS_BODY = BodySyntax(blocks="braces", single_quote_strings=True)
_TS_JS_DECLARING = (
    r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:function\s*\*?|class|interface|type|enum|namespace)\s+" + _IDENT,
    r"^\s*(?:export\s+)?(?:const|let|var)\s+" + _IDENT + r"\s*(?::[^=]*)?=\s*(?:async\s*)?"
    r"(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)",
    r"^\s+(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*"
    + _IDENT
    + r"\s*(?:<[^>]*>)?\([^;]*$",
)
_TS_JS_TESTS = _dirs_and_names(*_COMMON_TEST_DIRS, "spec/", "*.test.*", "*.spec.*", "*-test.*")

LANGUAGES: tuple[Language, ...] = (
    Language(
        id="python",
        aliases=("py",),
        extensions=(".py", ".pyi"),
        module_names="package",
        export_rule="underscore",
        body=BodySyntax(blocks="indent"),
        declaring_lines=(r"^\s*(?:async\s+)?(?:def|class)\s+" + _IDENT,),
        tests_before_feature_5=_dirs_and_names(*_COMMON_TEST_DIRS, "test_*.py", "*_test.py", "conftest.py"),
    ),
    Language(
        id="go",
        aliases=(),
        extensions=(".go",),
        module_names="import_path",
        export_rule="capital",
        body=BodySyntax(blocks="braces", raw_backticks=True),
        declaring_lines=(
            r"^func\s+(?:\([^)]*\)\s*)?" + _IDENT,
            r"^type\s+" + _IDENT,
            r"^\s+" + _IDENT + r"\s+(?:struct|interface)\s*\{",
        ),
        structural_typing=True,
        tests_before_feature_5=_dirs_and_names("testdata/", "*_test.go"),
    ),
    Language(
        id="typescript",
        aliases=("ts", "tsx"),
        extensions=(".ts", ".tsx", ".mts", ".cts"),
        module_names="file_path",
        export_rule="declared",
        body=_TS_JS_BODY,
        declaring_lines=_TS_JS_DECLARING,
        tests_before_feature_5=_TS_JS_TESTS,
    ),
    Language(
        id="javascript",
        aliases=("js",),
        extensions=(".js", ".jsx", ".mjs", ".cjs"),
        module_names="file_path",
        export_rule="declared",
        body=_TS_JS_BODY,
        declaring_lines=_TS_JS_DECLARING,
        family="typescript",
        tests_before_feature_5=_TS_JS_TESTS,
    ),
    Language(
        id="rust",
        aliases=("rs",),
        extensions=(".rs",),
        module_names="crate_path",
        export_rule="declared",
        body=_BRACES,
        declaring_lines=(
            r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|default)\s+|extern\s+\"[^\"]*\"\s+)*"
            r"(?:fn|struct|enum|trait|type|mod|union|macro_rules!)\s+" + _IDENT,
        ),
        separator="::",
        tests_before_feature_5=_dirs_and_names("tests/", "benches/"),
    ),
    Language(
        id="java",
        aliases=(),
        extensions=(".java",),
        module_names="package",
        export_rule="declared",
        body=BodySyntax(blocks="braces", single_quote_strings=False, triple_quote_strings=True),
        declaring_lines=(
            r"^\s*(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)\s+)*"
            r"(?:class|interface|enum|record|@interface)\s+" + _IDENT,
            r"^\s+(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*"
            r"(?:<[^>]*>\s*)?[\w$<>\[\],.? ]+\s+" + _IDENT + r"\s*\([^;]*$",
        ),
    ),
    Language(
        id="dart",
        aliases=(),
        extensions=(".dart",),
        module_names="file_path",
        export_rule="underscore",
        body=BodySyntax(blocks="braces", single_quote_strings=True, triple_quote_strings=True),
        declaring_lines=(r"^\s*(?:abstract\s+)?(?:class|mixin|enum|extension)\s+" + _IDENT,),
        tests_before_feature_5=_dirs_and_names("test/", "*_test.dart"),
    ),
)

IDS: tuple[str, ...] = tuple(row.id for row in LANGUAGES)
_BY_ID: dict[str, Language] = {row.id: row for row in LANGUAGES}
# every accepted spelling (lower case) -> the language id
ALIASES: dict[str, str] = {name: row.id for row in LANGUAGES for name in (row.id, *row.aliases)}
# file extension -> the language id
BY_EXTENSION: dict[str, str] = {ext: row.id for row in LANGUAGES for ext in row.extensions}


def language(language_id: str) -> Language | None:
    """The row of a language id, or None (a generation written by a newer indexer may name one this build lacks)."""
    return _BY_ID.get(language_id)


def by_id(language_id: str) -> Language:
    """The row of a language this build has (KeyError naming the id otherwise)."""
    row = _BY_ID.get(language_id)
    if row is None:
        raise KeyError(f"{language_id!r} is not in the language table ({', '.join(IDS)})")
    return row


def language_of_path(path: str) -> str:
    """The language a path's extension implies ("" for none kivgraph indexes)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return BY_EXTENSION.get(name[dot:], "") if dot >= 0 else ""


def family(language_id: str) -> str:
    """The family whose code can call each other's declarations (JavaScript's is TypeScript's)."""
    row = _BY_ID.get(language_id)
    return row.language_family if row is not None else language_id


def check(rows: tuple[Language, ...]) -> None:
    """The table is consistent: ids, aliases and extensions each name one language; families are ids."""
    spellings: dict[str, str] = {}
    extensions: dict[str, str] = {}
    for row in rows:
        for name in (row.id, *row.aliases):
            if name != name.lower() or spellings.setdefault(name, row.id) != row.id:
                raise ValueError(f"language table: the name {name!r} of {row.id!r} is taken or not lower case")
        for ext in row.extensions:
            if not ext.startswith(".") or extensions.setdefault(ext, row.id) != row.id:
                raise ValueError(f"language table: the extension {ext!r} of {row.id!r} is taken or has no dot")
        if row.family and row.family not in {r.id for r in rows}:
            raise ValueError(f"language table: the family {row.family!r} of {row.id!r} is no language")


check(LANGUAGES)
