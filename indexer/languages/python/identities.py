"""The package identities a Python repository's bundle exports and imports (indexer/bundle.py reads them).

Exports: its top-level modules. Imports: the top-level modules it imports that the job's environment has
installed (the active virtualenv's site-packages), with the distribution's version.
"""

from __future__ import annotations

from pathlib import Path

from indexer.facts import FileFacts

Identity = tuple[str, str, str, str]  # (language, name, version, descriptor)


def package_identities(language: str, files: list[FileFacts], root: Path) -> tuple[list[Identity], list[Identity]]:
    from indexer.languages.python.installed import installed_packages

    own = {ff.package.split(".")[0] for ff in files if ff.package}
    exports = [(language, top, "", "module") for top in sorted(own)]
    wanted: set[str] = set()
    for ff in files:
        for site in ff.sites:
            if site.kind == "import":
                wanted.add(site.name.split(".")[0])
            elif site.kind == "from" and site.extra and not site.extra[0].startswith("."):
                wanted.add(site.extra[0].split(".")[0])
    found = {p.name: p for p in installed_packages(wanted - own)}
    imports = [
        (language, top, found[top].version, f"site-packages:{found[top].distribution}")
        for top in sorted(wanted - own)
        if top in found
    ]
    return exports, imports


def linking_inputs(root: Path, max_file_bytes: int) -> list[str]:
    """What linking reads besides the facts (indexer/bundle.py carries it): the project files."""
    from indexer.bundle import named_files

    return named_files(root, lambda name: name in ("pyproject.toml", "setup.cfg"))
