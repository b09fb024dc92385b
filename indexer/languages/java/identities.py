"""The package identities a Java repository's bundle exports and imports (indexer/bundle.py reads them): the Maven
artifacts its build files build (``groupId:artifactId``, the version they give), and those they depend on with the
version named, marked ``sources-jar`` where the job's local Maven repository holds the dependency's sources (the
uses of it are then recorded by identity and bound when bundles are linked)."""

from __future__ import annotations

from pathlib import Path

from indexer.facts import FileFacts

Identity = tuple[str, str, str, str]  # (language, name, version, descriptor)


def package_identities(language: str, files: list[FileFacts], root: Path) -> tuple[list[Identity], list[Identity]]:
    from indexer.languages.java import build
    from indexer.languages.java.analyzer import installed_sources

    info = build.read_build(root)
    exports = [(language, coordinates, "", "build") for coordinates in sorted(info.artifacts)]
    imports = [
        (language, d.coordinates, d.version, "sources-jar" if installed_sources(d) is not None else "build")
        for d in info.external
    ]
    return exports, imports


def linking_inputs(root: Path, max_file_bytes: int) -> list[str]:
    """What linking reads besides the facts (indexer/bundle.py carries it): the build files, which name the
    artifacts a repository builds (a consumer's installed dependency is bound to the repository that builds it)."""
    from indexer.bundle import named_files
    from indexer.languages.java.build import BUILD_FILES

    return named_files(root, lambda name: name in BUILD_FILES)
