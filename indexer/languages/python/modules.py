"""Python module naming: the dotted module name of a file and of a relative import."""

from __future__ import annotations

from snapshot_format import languages

LANGUAGE = "python"
EXTENSIONS = languages.by_id(LANGUAGE).extensions  # its row in the language table


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """The dotted module name of a repository-relative path (``src/`` layout aware)."""
    rel = path.replace("\\", "/")
    # A src/ layout keeps the import root one level down, unless src is itself a package.
    if rel.startswith("src/") and "src/__init__.py" not in all_paths and "src/__init__.pyi" not in all_paths:
        rel = rel[len("src/") :]
    for ext in EXTENSIONS:
        if rel.endswith(ext):
            rel = rel[: -len(ext)]
            break
    parts = [p for p in rel.split("/") if p]
    if len(parts) > 1 and parts[-1] == "__init__":
        parts.pop()
    # A root __init__.py keeps its own name: a module name is never empty.
    return ".".join(parts) or "__init__"


def is_package_init(path: str) -> bool:
    """Whether a path is a package's ``__init__`` (relative imports then start at the package itself)."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base in ("__init__.py", "__init__.pyi")


def absolute_module(module: str, is_init: bool, spec: str) -> str | None:
    """The absolute module a ``from <spec> import`` names; None if it climbs above the top level."""
    level = len(spec) - len(spec.lstrip("."))
    rest = spec[level:]
    if level == 0:
        return rest
    parts = module.split(".")
    if not is_init:
        parts.pop()
    drop = level - 1
    if drop > len(parts):
        return None
    base = parts[: len(parts) - drop]
    name = ".".join([*base, rest] if rest else base)
    return name or None
