"""Go package naming: a file's import path (module path of the nearest go.mod + directory)."""

from __future__ import annotations

from pathlib import Path

from snapshot_format import languages

LANGUAGE = "go"
EXTENSIONS = languages.by_id(LANGUAGE).extensions  # its row in the language table


def package_for(path: str, all_paths: frozenset[str]) -> str:
    """The package directory of a repository-relative path ("." for the repository root).

    The fallback when the repository root is not known; the pipeline prefers
    ``package_for_root``, which gives the import path.
    """
    rel = path.replace("\\", "/")
    return rel.rsplit("/", 1)[0] if "/" in rel else "."


def package_for_root(root: Path, path: str, all_paths: frozenset[str]) -> str:
    """A Go file's package: its import path, module path of the nearest go.mod + the directory below it.

    ``cmd/app/main.go`` of a repository whose go.mod says ``module example.com/m``
    is in ``example.com/m/cmd/app``. A go.mod in a subdirectory of the repository
    (a nested module) governs the files below it. Without any go.mod up to the
    repository root the package is the directory, as ``package_for`` gives it.
    """
    directory = package_for(path, all_paths)
    parts = [] if directory == "." else directory.split("/")
    for depth in range(len(parts), -1, -1):
        module = _module_path(Path(root, *parts[:depth], "go.mod"))
        if module:
            rest = "/".join(parts[depth:])
            return f"{module}/{rest}" if rest else module
    return directory


_MODULE_LINES: dict[Path, tuple[int, int, str]] = {}  # go.mod -> (mtime_ns, size, module path)


def _module_path(go_mod: Path) -> str:
    """The ``module`` line of a go.mod ("" when it is missing or has none), re-read when the file changes."""
    try:
        st = go_mod.stat()
    except OSError:
        return ""
    cached = _MODULE_LINES.get(go_mod)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2]
    module = ""
    try:
        text = go_mod.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        words = line.split("//", 1)[0].split()
        if len(words) >= 2 and words[0] == "module":
            module = words[1].strip('"`')
            break
    _MODULE_LINES[go_mod] = (st.st_mtime_ns, st.st_size, module)
    return module


def module_qualified_name(path: str) -> str:
    """The synthetic module symbol's qualified name: ``cmd/app/main.go`` → ``cmd.app.main``."""
    rel = path.replace("\\", "/")
    if rel.endswith(".go"):
        rel = rel[:-3]
    return rel.replace("/", ".")
