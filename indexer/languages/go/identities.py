"""The package identities a Go repository's bundle exports and imports (indexer/bundle.py reads them): the
module its go.mod declares, and each module it requires with the version go.mod names."""

from __future__ import annotations

from pathlib import Path

from indexer.facts import FileFacts

Identity = tuple[str, str, str, str]  # (language, name, version, descriptor)


def package_identities(language: str, files: list[FileFacts], root: Path) -> tuple[list[Identity], list[Identity]]:
    from indexer.languages.go.resolve import read_module_path

    module = read_module_path(str(root))
    exports = [(language, module, "", "go.mod")] if module else []
    text = (root / "go.mod").read_text(errors="replace") if (root / "go.mod").is_file() else ""
    imports = [(language, req, version, "go.mod") for req, version in go_requirements(text)]
    return exports, imports


def go_requirements(text: str) -> list[tuple[str, str]]:
    """(module path, version) of each ``require`` of a go.mod's text."""
    out: list[tuple[str, str]] = []
    block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("require ("):
            block = True
            continue
        if block and line == ")":
            block = False
            continue
        parts = line.split()
        if block and len(parts) >= 2:
            out.append((parts[0], parts[1]))
        elif len(parts) >= 3 and parts[0] == "require":
            out.append((parts[1], parts[2]))
    return out


def linking_inputs(root: Path, max_file_bytes: int) -> list[str]:
    """What linking reads besides the facts (indexer/bundle.py carries it): every go.mod, go.sum and go.work (the
    module paths that name packages and providers)."""
    from indexer.bundle import named_files

    return named_files(root, lambda name: name in ("go.mod", "go.sum", "go.work"))
