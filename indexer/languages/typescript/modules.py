"""TypeScript/JavaScript module naming: the dotted module name of a file, and which grammar parses it."""

from __future__ import annotations

from snapshot_format import languages

LANGUAGE = "typescript"
TS_EXTENSIONS = languages.by_id(LANGUAGE).extensions  # the rows of the language table
JS_EXTENSIONS = languages.by_id("javascript").extensions
EXTENSIONS = TS_EXTENSIONS + JS_EXTENSIONS
# ``.d.ts`` first: it must lose its whole double extension.
_STRIP = (".d.ts", ".d.mts", ".d.cts", *EXTENSIONS)


def language_of(path: str) -> str:
    """ "javascript" for ``.js .jsx .mjs .cjs``, "typescript" otherwise."""
    return "javascript" if path.endswith(JS_EXTENSIONS) else "typescript"


def strip_extension(path: str) -> str:
    for ext in _STRIP:
        if path.endswith(ext):
            return path[: -len(ext)]
    return path


def module_name(path: str) -> str:
    """The module's qualified name: the repository-relative path, ``/`` → ``.``, extension removed."""
    return ".".join(p for p in strip_extension(path.replace("\\", "/")).split("/") if p) or "index"


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """A file's package for stable keys: its module name (package.json names are read at resolution)."""
    return module_name(path)
