"""Build outputs are not sources: the declaration files and JavaScript a TypeScript repository's own sources produce.

A repository that commits (or, for a published npm tarball, ships) its build
next to its sources would otherwise declare every symbol once more per output
(``build/legacy/x.d.ts``, ``x.d.cts``, ``x.js``, ``x.cjs``, ``build/modern/...``):
names AMBIGUOUS three times over, compiled copies in every lexical answer, a
second analyzer run for the JavaScript. An emitted file (a declaration file
``.d.ts``/``.d.mts``/``.d.cts``, or JavaScript ``.js``/``.mjs``/``.cjs``/``.jsx``)
is skipped as generated when it lies in an output directory, found three ways:

- the ``outDir`` or ``declarationDir`` of a ``tsconfig*.json``/``jsconfig*.json``
  (``extends`` chains followed; a path resolves against the config that
  writes it, as ``tsc`` resolves it);
- a directory ``package.json`` points into (``types``, ``typings``, ``main``,
  ``module``, every leaf of ``exports`` and ``typesVersions``), when the
  repository has TypeScript sources outside it;
- a conventional ``build/``, ``dist/``, ``lib/`` or ``out/`` at the repository
  root or next to a ``package.json``, on the same condition;

or when it mirrors a TypeScript source's path: ``src/a.js`` beside
``src/a.ts`` (``tsc`` without an ``outDir``), ``v4/core/api.cjs`` or
``index.d.cts`` beside the ``package.json`` whose ``src/v4/core/api.ts`` or
``src/index.ts`` it is (a build that writes next to the manifest, as zod's
does), ``build/modern/x.js`` for ``src/x.ts``.

JavaScript asks for more than a declaration file does, because a repository
with TypeScript sources may well hold hand-written JavaScript: under a
directory only ``package.json`` or a conventional name makes an output, a
``.js`` is generated only when some emitted file in that directory mirrors a
TypeScript source (the directory holds what the sources compile to, bundler
chunks included); under a tsconfig's ``outDir`` the compiler's own word is
enough. Test files (``*.test.ts``, ``test/``, ``index.test-d.ts``) and the
like do not count as the TypeScript sources an output needs: a JavaScript
library with typed tests keeps its hand-written ``.js`` and ``.d.ts``.

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
from indexer.languages.registry import is_test_path
from indexer.languages.typescript.modules import JS_EXTENSIONS, LANGUAGE, TS_EXTENSIONS, strip_extension

DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
CONVENTIONAL_DIRS = ("build", "dist", "lib", "out")
_CONFIG_LIKE = re.compile(r"^(tsconfig|jsconfig)([.-][\w.-]*)?\.json$")
_PACKAGE_FIELDS = ("types", "typings", "main", "module")
# JSONC: strings are kept, comments dropped, a comma before a closing bracket dropped.
_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)
_MAX_EXTENDS = 16
# A bundler's content hash after the chunk name: rollup, tsup, tsdown, vite and esbuild write ``-`` and 8
# base64url characters (``subscribable-D2lAzdDi``), webpack and parcel ``.`` and hex (``main.3f2a9c1d``). A word is
# no hash: the 8 characters must hold a digit or three capitals (``foo-useQuery``, ``foo-Resource`` keep their names).
_CHUNK_HASH = re.compile(r"-(?=[A-Za-z_-]*[0-9]|(?:[^A-Z]*[A-Z]){3})[A-Za-z0-9_-]{8}$|\.(?=[a-f]*[0-9])[0-9a-f]{8,20}$")


@dataclass(frozen=True)
class OutputDirectory:
    """A repository-relative directory the build writes into, and how we know."""

    path: str
    why: str
    rank: int = 0  # which evidence: 0 a tsconfig, 1 a package.json, 2 a conventional name (the first is named)
    sources: str = ""  # the directory whose sources it holds the outputs of, by the same relative path


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


def under(path: str, directory: str) -> bool:
    """Whether a repository-relative path lies inside a directory (``""``: the repository root)."""
    return directory == "" or path.startswith(directory + "/")


def unhashed(name: str) -> str | None:
    """A bundler chunk's file name without its content hash (``subscribable-D2lAzdDi`` -> ``subscribable``), or None
    when the name carries none."""
    m = _CHUNK_HASH.search(name)
    return name[: m.start()] if m and m.start() > 0 else None


def relative_stems(rel: str, *, formats: bool = True) -> Iterator[str]:
    """The paths under the source root a file inside an output directory may be the output of, most specific
    first: its own (extension dropped), without a chunk's hash, then (``formats``) without leading format
    directories (``legacy/``, ``esm/``, ``modern/``)."""
    parts = strip_extension(rel).split("/")
    last = unhashed(parts[-1])
    for i in range(len(parts) if formats else 1):
        yield "/".join(parts[i:])
        if last is not None:
            yield "/".join([*parts[i:-1], last])


def _top(directory: str) -> str:
    """``config_dirs``' ``"."`` (the repository root) as every other path here spells it: ``""``."""
    return "" if directory == "." else directory


def _join(directory: str, rel: str) -> str:
    return f"{directory}/{rel}" if directory not in ("", ".") else rel


def is_emitted(path: str) -> bool:
    """A file a TypeScript build writes: a declaration file or JavaScript."""
    return is_declaration(path) or path.endswith(JS_EXTENSIONS)


def _source_root(root: Path, base: str) -> str:
    """Where the sources of a package at ``base`` live by convention: its ``src/`` when it has one, else itself."""
    src = _join(base, "src")
    return src if (root / src).is_dir() else base


def output_directories(root: Path, paths: Iterable[str], found_json: list[str] | None = None) -> list[OutputDirectory]:
    """Every output directory of the repository, given its discovered files: the strongest evidence first,
    then the longest path (the first one holding a file names it)."""
    paths = list(paths)
    sources = [p for p in paths if is_ts_source(p)]
    compiled = [p for p in sources if not is_test_path(LANGUAGE, p)]

    def holds_source(d: str) -> bool:
        return any(under(s, d) for s in sources)

    def sources_elsewhere(d: str) -> bool:
        return any(not under(s, d) for s in compiled)

    dirs: dict[str, tuple[int, str, str]] = {}
    found_json = json_files(root) if found_json is None else found_json
    for config in config_paths(found_json):
        options = config_dirs(root, root / config)
        root_dir = options.get("rootDir")
        sources_of = _top(root_dir) if root_dir is not None else _source_root(root, posixpath.dirname(config))
        for option, d in options.items():
            if option != "rootDir" and d != "." and not holds_source(d):
                dirs.setdefault(d, (0, f"the {option} of {config}", sources_of))
    manifests = [p for p in found_json if p.rsplit("/", 1)[-1] == "package.json"]
    for manifest in manifests:
        data = read_jsonc(root / manifest)
        if data is None:
            continue
        manifest_dir = posixpath.dirname(manifest)
        for d, field in package_output_dirs(root, manifest_dir, data).items():
            if not holds_source(d) and sources_elsewhere(d):
                dirs.setdefault(
                    d, (1, f"a directory {field} of {manifest} points into", _source_root(root, manifest_dir))
                )
    for base in sorted({"", *(posixpath.dirname(m) for m in manifests)}):
        for name in CONVENTIONAL_DIRS:
            d = _join(base, name)
            if (root / d).is_dir() and not holds_source(d) and sources_elsewhere(d):
                dirs.setdefault(
                    d,
                    (
                        2,
                        f"a conventional build directory ({name}/) beside TypeScript sources",
                        _source_root(root, base),
                    ),
                )
    return sorted(
        (OutputDirectory(d, why, rank, src) for d, (rank, why, src) in dirs.items()),
        key=lambda o: (o.rank, -len(o.path), o.path),
    )


class BuildOutputs:
    """Which emitted files of one repository its own build generated, and why (``reason``)."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        paths = list(paths)
        found_json = json_files(root)
        self.directories = output_directories(root, paths, found_json)
        self.paths = paths
        self._emitted = [p for p in paths if is_emitted(p)]
        self._stems: dict[str, str] = {}  # a TypeScript source without its extension -> the source
        for p in paths:
            if is_ts_source(p):
                self._stems.setdefault(strip_extension(p), p)
        # (where a build writes beside a package, where that package's sources are): zod's index.cjs, src/index.ts
        bases = {"", *(posixpath.dirname(m) for m in found_json if m.rsplit("/", 1)[-1] == "package.json")}
        self._bases = [(b, src) for b in sorted(bases) if (src := _source_root(root, b)) != b]
        for config in config_paths(found_json):
            src = config_dirs(root, root / config).get("rootDir")
            if src is not None and _top(src) != posixpath.dirname(config):
                self._bases.append((posixpath.dirname(config), _top(src)))
        self._corroborated: dict[str, bool] = {}

    @property
    def sources(self) -> list[str]:
        """The files that are no build output."""
        return [p for p in self.paths if not self.reason(p)]

    def mirror(self, path: str) -> tuple[str, str] | None:
        """The TypeScript source an emitted file's path mirrors, and the reason that says how, or None."""
        if not is_emitted(path):
            return None
        stem = strip_extension(path)
        if stem in self._stems:
            return self._stems[stem], "generated (build output: beside the TypeScript source of the same name)"
        for base, src in self._bases:
            if under(stem, base):
                found = self._stems.get(_join(src, stem[len(base) + 1 :] if base else stem))
                if found is not None:
                    return found, f"generated (build output: mirrors a TypeScript source under {src}/)"
        return None

    def mirror_in(self, path: str, o: OutputDirectory) -> str | None:
        """The source a file under an output directory is the output of, by its path inside it (``relative_stems``:
        format directories and a chunk's hash dropped, so weaker evidence than ``mirror``)."""
        for rel in relative_stems(path[len(o.path) + 1 :]):
            found = self._stems.get(_join(o.sources, rel))
            if found is not None:
                return found
        return None

    def _holds_outputs(self, o: OutputDirectory) -> bool:
        """Whether an output directory found by a name only holds what the sources compile to: an emitted file
        in it mirrors a source's path, a declaration file in it is a source's output (compiled JavaScript ships
        with its declarations), or its JavaScript is the output of two sources by path inside it. A lone
        hand-written ``plugins/index.js`` is none of these, whatever its name."""
        if o.path not in self._corroborated:
            inside = [p for p in self._emitted if under(p, o.path)]
            if any(self.mirror(p) or (is_declaration(p) and self.mirror_in(p, o)) for p in inside):
                self._corroborated[o.path] = True
            else:
                compiled = {self.mirror_in(p, o) for p in inside} - {None}
                self._corroborated[o.path] = len(compiled) > 1
        return self._corroborated[o.path]

    def reason(self, path: str) -> str:
        """The skip reason of an emitted file the build generated, else ``""``."""
        if not is_emitted(path):
            return ""
        for o in self.directories:
            if under(path, o.path) and (is_declaration(path) or o.rank == 0 or self._holds_outputs(o)):
                return f"generated (build output: {o.path}/ is {o.why})"
        found = self.mirror(path)
        return found[1] if found is not None else ""


def mark_build_outputs(root: Path, found: Discovery) -> Discovery:
    """``found`` with every emitted file the repository's own build generated skipped, with the reason."""
    live = [c.path for c in found.files if not c.skip_reason]
    if not any(map(is_emitted, live)) or not any(map(is_ts_source, live)):
        return found  # nothing emitted, or no TypeScript source that could have emitted it
    outputs = BuildOutputs(root, live)
    files: list[Candidate] = []
    for c in found.files:
        reason = "" if c.skip_reason else outputs.reason(c.path)
        files.append(replace(c, skip_reason=reason) if reason else c)
    return Discovery(files=files, ignored=found.ignored, via_git=found.via_git)
