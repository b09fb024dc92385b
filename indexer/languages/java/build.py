"""What a repository's Maven and Gradle build files say: the artifacts it builds and the ones it depends on.

Read as text, never run: a ``pom.xml`` gives its coordinates (``groupId`` from the parent when absent),
its properties and ``dependencyManagement`` versions (``${name}`` substituted), and its dependencies; a
``build.gradle``/``build.gradle.kts`` its ``group`` and project name (``settings.gradle``'s
``rootProject.name``, else the directory's) and the ``group:artifact:version`` strings of its dependency
configurations. A consumer uses a provider's artifact when one of its build files names the
provider's ``groupId:artifactId``: that is the cross-repository route (``providers``).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

BUILD_FILES = ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
_SKIP_DIRS = frozenset({"target", "build", "node_modules", "out", "bin"})
_GRADLE_DEP = re.compile(
    r"\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation|testCompileOnly|compile|testCompile|"
    r"annotationProcessor|kapt)\s*\(?\s*['\"]([^:'\"\s]+):([^:'\"\s]+)(?::([^'\"\s]+))?['\"]"
)
_GRADLE_GROUP = re.compile(r"^\s*group\s*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)
_GRADLE_NAME = re.compile(r"rootProject\.name\s*=\s*['\"]([^'\"]+)['\"]")
_PROPERTY = re.compile(r"\$\{([^}]+)\}")


@dataclass(frozen=True)
class Dependency:
    group: str
    artifact: str
    version: str = ""
    scope: str = "compile"

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}"


@dataclass
class BuildInfo:
    """The artifacts a repository builds and the dependencies its build files declare (theirs, not its own)."""

    artifacts: set[str] = field(default_factory=set)  # groupId:artifactId
    dependencies: list[Dependency] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # repository-relative build files read
    problems: list[str] = field(default_factory=list)

    @property
    def external(self) -> list[Dependency]:
        """Dependencies on artifacts the repository does not build itself, each once (first version wins)."""
        seen: set[str] = set()
        out: list[Dependency] = []
        for d in self.dependencies:
            if d.coordinates in self.artifacts or d.coordinates in seen:
                continue
            seen.add(d.coordinates)
            out.append(d)
        return out


def build_files(root: Path) -> list[str]:
    """Repository-relative paths of every Maven or Gradle build file, sorted (build output dirs skipped)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in filenames:
            if name in BUILD_FILES:
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(node: ET.Element | None, name: str) -> ET.Element | None:
    if node is None:
        return None
    return next((c for c in node if _local(c.tag) == name), None)


def _text(node: ET.Element | None, name: str) -> str:
    found = _child(node, name)
    return (found.text or "").strip() if found is not None else ""


def _substitute(value: str, properties: dict[str, str]) -> str:
    for _ in range(5):
        replaced = _PROPERTY.sub(lambda m: properties.get(m.group(1), m.group(0)), value)
        if replaced == value:
            break
        value = replaced
    return value


def _read_pom(path: Path, info: BuildInfo, rel: str, parents: dict[str, dict[str, str]]) -> None:
    try:
        project = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        info.problems.append(f"{rel}: not readable as a pom ({exc})")
        return
    parent = _child(project, "parent")
    group = _text(project, "groupId") or _text(parent, "groupId")
    artifact = _text(project, "artifactId")
    version = _text(project, "version") or _text(parent, "version")
    properties: dict[str, str] = dict(parents.get(f"{_text(parent, 'groupId')}:{_text(parent, 'artifactId')}", {}))
    props = _child(project, "properties")
    for p in props if props is not None else ():
        properties[_local(p.tag)] = (p.text or "").strip()
    properties.update(
        {"project.groupId": group, "project.artifactId": artifact, "project.version": version, "pom.version": version}
    )
    if group and artifact:
        info.artifacts.add(f"{group}:{artifact}")
    managed: dict[str, str] = {}
    management = _child(_child(project, "dependencyManagement"), "dependencies")
    for d in management if management is not None else ():
        key = f"{_substitute(_text(d, 'groupId'), properties)}:{_substitute(_text(d, 'artifactId'), properties)}"
        managed[key] = _substitute(_text(d, "version"), properties)
    for key, value in managed.items():
        properties.setdefault(f"managed:{key}", value)
    parents[f"{group}:{artifact}"] = properties
    deps = _child(project, "dependencies")
    for d in deps if deps is not None else ():
        g = _substitute(_text(d, "groupId"), properties)
        a = _substitute(_text(d, "artifactId"), properties)
        v = _substitute(_text(d, "version"), properties) or properties.get(f"managed:{g}:{a}", "")
        if g and a:
            info.dependencies.append(Dependency(g, a, v, _text(d, "scope") or "compile"))


def read_build(root: Path) -> BuildInfo:
    """The build information of a repository (every pom.xml and Gradle build file under it)."""
    info = BuildInfo()
    files = build_files(root)
    info.files = files
    parents: dict[str, dict[str, str]] = {}
    # parents before children: a shallower pom first
    for rel in sorted((f for f in files if f.endswith("pom.xml")), key=lambda f: (f.count("/"), f)):
        _read_pom(root / rel, info, rel, parents)
    root_name = ""
    for rel in files:
        if rel.startswith("settings.gradle"):
            try:
                found = _GRADLE_NAME.search((root / rel).read_text(encoding="utf-8", errors="replace"))
            except OSError:
                found = None
            root_name = found.group(1) if found else root_name
    for rel in files:
        if not rel.startswith("build.gradle") and "/build.gradle" not in rel:
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            info.problems.append(f"{rel}: not readable ({exc})")
            continue
        directory = rel.rpartition("/")[0]
        name = directory.rsplit("/", 1)[-1] if directory else (root_name or root.name)
        group = _GRADLE_GROUP.search(text)
        if group:
            info.artifacts.add(f"{group.group(1)}:{name}")
        for m in _GRADLE_DEP.finditer(text):
            scope = "test" if "test" in m.group(0)[:16].lower() else "compile"
            info.dependencies.append(Dependency(m.group(1), m.group(2), m.group(3) or "", scope))
    return info
