"""Build outputs are not sources: the declaration files a TypeScript repository's own sources produce.

A repository that commits (or, for a published npm tarball, ships) its build
next to its sources would otherwise declare every symbol once more per output
(``build/legacy/x.d.ts``, ``x.d.cts``, ``build/modern/...``), and bundled
outputs would outrank ``src/`` in every lexical answer. A declaration file
(``.d.ts``, ``.d.mts``, ``.d.cts``) is skipped as generated when it lies in
an output directory, found three ways:

- the ``outDir`` or ``declarationDir`` of a ``tsconfig*.json``/``jsconfig*.json``
  (``extends`` chains followed; a path resolves against the config that
  writes it, as ``tsc`` resolves it);
- a directory ``package.json`` points into (``types``, ``typings``, ``main``,
  ``module``, every leaf of ``exports`` and ``typesVersions``), when the
  repository has TypeScript sources outside it;
- a conventional ``build/``, ``dist/``, ``lib/`` or ``out/`` at the repository
  root or next to a ``package.json``, on the same condition.

A directory that holds a TypeScript source itself (``.ts`` that is not a
declaration) is never an output directory: a hand-written ``src/global.d.ts``
stays, and so does a JavaScript library's hand-written ``types/index.d.ts``
(no TypeScript sources, nothing could have generated it). The reason is
recorded in the file row, so ``kivgraph status`` can list what was left out.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from indexer.discover import Candidate, Discovery, discover
from indexer.languages.typescript.modules import TS_EXTENSIONS

DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
CONVENTIONAL_DIRS = ("build", "dist", "lib", "out")
_CONFIG_LIKE = re.compile(r"^(tsconfig|jsconfig)([.-][\w.-]*)?\.json$")
_PACKAGE_FIELDS = ("types", "typings", "main", "module")
# JSONC: strings are kept, comments dropped, a comma before a closing bracket dropped.
_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)
_MAX_EXTENDS = 16


@dataclass(frozen=True)
class OutputDirectory:
    """A repository-relative directory the build writes into, and how we know."""

    path: str
    why: str
    rank: int = 0  # which evidence: 0 a tsconfig, 1 a package.json, 2 a conventional name (the first is named)


def is_declaration(path: str) -> bool:
    return path.endswith(DECLARATION_SUFFIXES)


def is_ts_source(path: str) -> bool:
    """A TypeScript file that is not a declaration file: something a build compiles."""
    return path.endswith(TS_EXTENSIONS) and not is_declaration(path)


def read_jsonc(path: Path) -> dict[str, object] | None:
    """A tsconfig-style JSON file (comments and trailing commas allowed), or None."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    cleaned = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    try:
        data = json.loads(cleaned)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _relative(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` ('/'-separated, normalized), or None outside it or at the root itself."""
    norm = PurePosixPath(posixpath.normpath(path.as_posix()))
    try:
        rel = norm.relative_to(PurePosixPath(posixpath.normpath(root.as_posix()))).as_posix()
    except ValueError:
        return None
    return None if rel in ("", ".") else rel


def _extends(config: Path, value: object, root: Path) -> list[Path]:
    targets = value if isinstance(value, list) else [value]
    out: list[Path] = []
    for t in targets:
        if not isinstance(t, str) or not t:
            continue
        if t.startswith((".", "/")):
            base = config.parent / t
            candidates = [base, base.with_name(base.name + ".json")]
        else:  # a package (``@tsconfig/node20``): node_modules from the config's directory upwards
            candidates = []
            for d in (config.parent, *config.parent.parents):
                base = d / "node_modules" / t
                candidates += [base, base.with_name(base.name + ".json"), base / "tsconfig.json"]
                if d == root:
                    break
        found = next((c for c in candidates if c.is_file()), None)
        if found is not None:
            out.append(found)
    return out


def config_dirs(root: Path, config: Path) -> dict[str, str]:
    """``outDir``/``declarationDir``/``rootDir`` of one config, ``extends`` followed: option -> repository-relative
    dir (``"."`` for the root itself, absent when the option is unset or points outside the repository)."""
    found: dict[str, str] = {}
    pending = [(config, 0)]
    seen: set[Path] = set()
    order: list[Path] = []
    while pending:  # the config first, then what it extends (nearer wins, as the compiler merges them)
        current, depth = pending.pop(0)
        if current in seen or depth > _MAX_EXTENDS:
            continue
        seen.add(current)
        order.append(current)
        data = read_jsonc(current)
        if data is not None and "extends" in data:
            pending += [(p, depth + 1) for p in _extends(current, data["extends"], root)]
    for current in order:
        data = read_jsonc(current)
        options = data.get("compilerOptions") if data else None
        if not isinstance(options, dict):
            continue
        for option in ("outDir", "declarationDir", "rootDir"):
            value = options.get(option)
            if option in found or not isinstance(value, str) or not value:
                continue
            rel = _relative(root, current.parent / value)
            if rel is not None:
                found[option] = rel
            elif posixpath.normpath((current.parent / value).as_posix()) == posixpath.normpath(root.as_posix()):
                found[option] = "."
    return found


def leaves(value: object) -> Iterator[str]:
    """Every string inside a JSON value (the targets of an ``exports`` map, whatever its conditions)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)


def package_output_dirs(root: Path, manifest_dir: str, data: dict[str, object]) -> dict[str, str]:
    """Directories a package.json's entry fields point into: repository-relative dir -> the field."""
    out: dict[str, str] = {}
    fields: list[tuple[str, object]] = [(f, data.get(f)) for f in _PACKAGE_FIELDS]
    fields += [("exports", data.get("exports")), ("typesVersions", data.get("typesVersions"))]
    for name, value in fields:
        for target in leaves(value):
            target = target.split("*", 1)[0]  # a pattern ("./dist/types/*") names its directory
            if not target or is_ts_source(target):
                continue  # a source named directly (``"types": "./src/index.ts"``) is no output
            directory = target if target.endswith("/") else posixpath.dirname(target)
            rel = _relative(root, root / manifest_dir / directory)
            if rel is not None and rel != manifest_dir:
                out.setdefault(rel, name)
    return out


def json_files(root: Path) -> list[str]:
    """Repository-relative ``.json`` files discovery keeps (never vendored, never ignored)."""
    found = discover(root, {".json": "json"}, max_file_bytes=4_194_304)
    return sorted(c.path for c in found.files if not c.skip_reason.startswith("vendored"))


def config_paths(found_json: list[str]) -> list[str]:
    """The tsconfig-like files among repository-relative JSON files."""
    return [p for p in found_json if _CONFIG_LIKE.match(p.rsplit("/", 1)[-1])]


def _under(path: str, directory: str) -> bool:
    return path.startswith(directory + "/")


def output_directories(root: Path, paths: Iterable[str]) -> list[OutputDirectory]:
    """Every output directory of the repository, given its discovered files: the strongest evidence first,
    then the longest path (the first one holding a file names it)."""
    paths = list(paths)
    sources = [p for p in paths if is_ts_source(p)]

    def holds_source(d: str) -> bool:
        return any(_under(s, d) for s in sources)

    def sources_elsewhere(d: str) -> bool:
        return any(not _under(s, d) for s in sources)

    dirs: dict[str, tuple[int, str]] = {}
    found_json = json_files(root)
    for config in config_paths(found_json):
        for option, d in config_dirs(root, root / config).items():
            if option != "rootDir" and d != "." and not holds_source(d):
                dirs.setdefault(d, (0, f"the {option} of {config}"))
    manifests = [p for p in found_json if p.rsplit("/", 1)[-1] == "package.json"]
    for manifest in manifests:
        data = read_jsonc(root / manifest)
        if data is None:
            continue
        manifest_dir = posixpath.dirname(manifest)
        for d, field in package_output_dirs(root, manifest_dir, data).items():
            if not holds_source(d) and sources_elsewhere(d):
                dirs.setdefault(d, (1, f"a directory {field} of {manifest} points into"))
    for base in sorted({"", *(posixpath.dirname(m) for m in manifests)}):
        for name in CONVENTIONAL_DIRS:
            d = f"{base}/{name}" if base else name
            if (root / d).is_dir() and not holds_source(d) and sources_elsewhere(d):
                dirs.setdefault(d, (2, f"a conventional build directory ({name}/) beside TypeScript sources"))
    return sorted(
        (OutputDirectory(d, why, rank) for d, (rank, why) in dirs.items()), key=lambda o: (o.rank, -len(o.path), o.path)
    )


def generated_reason(path: str, outputs: list[OutputDirectory]) -> str:
    """The skip reason of a declaration file under an output directory, else ``""``."""
    if not is_declaration(path):
        return ""
    for o in outputs:
        if _under(path, o.path):
            return f"generated (build output: {o.path}/ is {o.why})"
    return ""


def mark_build_outputs(root: Path, found: Discovery) -> Discovery:
    """``found`` with every declaration file under an output directory skipped as generated."""
    if not any(is_declaration(c.path) and not c.skip_reason for c in found.files):
        return found
    outputs = output_directories(root, [c.path for c in found.files if not c.skip_reason])
    if not outputs:
        return found
    files: list[Candidate] = []
    for c in found.files:
        reason = "" if c.skip_reason else generated_reason(c.path, outputs)
        files.append(replace(c, skip_reason=reason) if reason else c)
    return Discovery(files=files, ignored=found.ignored, via_git=found.via_git)
