"""TypeScript projects of a repository: which tsconfig claims each source file, as the compiler itself says.

Discovery: every ``tsconfig.json`` / ``jsconfig.json`` the repository's
discovery rules keep (git ignore rules, no vendored directories such as
``node_modules``), plus every config reached through ``references`` (a
``tsconfig.build.json`` named by a solution), followed transitively by the
compiler. ``extends`` chains are followed by the compiler too.

Listing: a small Node script asks the pinned ``typescript`` 5.9.3
(``ts.getParsedCommandLineOfConfigFile``) for each config's file list,
resolved references, extended files and output directories, so
``files``/``include``/``exclude`` mean exactly what they mean to ``tsc``.

Assignment (``assign``), like tsserver's default project: from the file's
directory upwards, the nearest ``tsconfig.json`` (then ``jsconfig.json``)
whose project or one of its referenced projects (depth first, in reference
order) lists the file; a file no project claims, or only a project whose
``extends`` names a config that cannot be read, goes to the inferred project
(``None``).

Cache inputs (``config_inputs``): the content of every tsconfig-like file
(``tsconfig*.json``, ``jsconfig*.json``) discovery keeps, plus the targets of
their ``extends`` that live in ``node_modules`` (``@tsconfig/...``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from indexer.discover import discover
from indexer.languages.typescript.modules import EXTENSIONS

CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
_CONFIG_LIKE = re.compile(r"^(tsconfig|jsconfig)([.-][\w.-]*)?\.json$")
_EXTENDS = re.compile(r'"extends"\s*:\s*(\[[^\]]*\]|"[^"]*")')

# Run by Node: argv = [typescript module path, input JSON path]; prints one JSON object.
LIST_PROJECTS_JS = r"""
const fs = require('fs');
const path = require('path');
const ts = require(process.argv[2]);
const input = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const JSCONFIG = {allowJs: true, maxNodeModuleJsDepth: 2, allowSyntheticDefaultImports: true, skipLibCheck: true,
                  noEmit: true};
const text = d => ts.flattenDiagnosticMessageText(d.messageText, '\n');
const out = {typescript: ts.version, projects: {}};
const queue = input.configs.map(c => path.resolve(c));
while (queue.length) {
  const file = queue.shift();
  if (Object.prototype.hasOwnProperty.call(out.projects, file)) continue;
  const errors = [];
  const host = {...ts.sys, onUnRecoverableConfigFileDiagnostic: d => errors.push(text(d))};
  let parsed;
  try {
    const existing = path.basename(file) === 'jsconfig.json' ? JSCONFIG : {};
    parsed = ts.getParsedCommandLineOfConfigFile(file, existing, host);
  } catch (e) {
    errors.push(String(e));
  }
  if (!parsed) {
    out.projects[file] = {fileNames: [], references: [], extended: [], errors};
    continue;
  }
  for (const d of parsed.errors) if (d.code !== 18003) errors.push(text(d));
  const refs = (parsed.projectReferences || []).map(r => path.resolve(ts.resolveProjectReferencePath(r)));
  queue.push(...refs);
  const o = parsed.options;
  out.projects[file] = {
    fileNames: parsed.fileNames.map(f => path.resolve(f)), references: refs,
    extended: ((o.configFile && o.configFile.extendedSourceFiles) || []).map(f => path.resolve(f)),
    errors, outDir: o.outDir || '', declarationDir: o.declarationDir || '', rootDir: o.rootDir || '',
    typeRoots: o.typeRoots || null, allowJs: !!o.allowJs,
  };
}
process.stdout.write(JSON.stringify(out));
"""


class ProjectsFailed(Exception):
    """Node or the compiler could not list the projects; the message says why."""


@dataclass
class Project:
    """One tsconfig as the compiler parsed it (absolute, '/'-separated paths)."""

    config: str
    file_names: frozenset[str]
    references: tuple[str, ...] = ()
    extended: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    out_dirs: tuple[str, ...] = ()  # outDir / declarationDir: where its .d.ts outputs go
    root_dir: str = ""  # rootDir, else the config's directory
    type_roots: tuple[str, ...] | None = None  # None = the compiler's default (node_modules/@types upwards)

    @property
    def unreadable(self) -> bool:
        """A config it extends cannot be read (a published tarball's ``extends: ../../tsconfig.json``):
        the analyzer would refuse the project, so its files are checked in the inferred project instead."""
        return any(e.startswith("Cannot read file") for e in self.errors)


@dataclass
class Plan:
    """Which project checks which corpus file; ``inferred`` are the files no tsconfig claims."""

    projects: dict[str, Project] = field(default_factory=dict)
    assigned: dict[str, list[str]] = field(default_factory=dict)  # config -> repository-relative files
    inferred: list[str] = field(default_factory=list)
    typescript: str = ""

    def files(self, root: str) -> list[str]:
        """Repository-relative files of every project (both languages, declaration files too)."""
        roots = {os.path.normpath(root), os.path.realpath(root)}
        out: set[str] = set(self.inferred)
        for p in self.projects.values():
            for f in p.file_names:
                rel = next((r for r in (_relative(x, f) for x in roots) if r), None)
                if rel is not None and "node_modules/" not in rel:
                    out.add(rel)
        return sorted(out)

    def output_redirects(self, root: str) -> list[tuple[str, str]]:
        """(output directory, source root) pairs, repository-relative: a referenced project's ``.d.ts``
        output maps back to its source, as the language service does for project references."""
        out: list[tuple[str, str]] = []
        for p in self.projects.values():
            for d in p.out_dirs:
                rel_out, rel_src = _relative(root, d), _relative(root, p.root_dir)
                if rel_out is not None and rel_src is not None and rel_out != rel_src:
                    out.append((rel_out, rel_src))
        return sorted(set(out), key=lambda pair: -len(pair[0]))


def _relative(root: str, path: str) -> str | None:
    try:
        rel = PurePosixPath(path).relative_to(PurePosixPath(root)).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def config_files(root: str | Path) -> list[str]:
    """Repository-relative tsconfig-like files discovery keeps (no vendored directory, no ignored path)."""
    found = discover(Path(root), {".json": "json"}, max_file_bytes=4_194_304)
    return sorted(
        c.path
        for c in found.files
        if not c.skip_reason.startswith("vendored") and _CONFIG_LIKE.match(c.path.rsplit("/", 1)[-1])
    )


def config_inputs(root: str | Path) -> list[tuple[str, str]]:
    """(path, sha256) of every config the projects can read: discovered configs + their node_modules bases."""
    root = Path(root)
    out: dict[str, str] = {}
    pending = [root / p for p in config_files(root)]
    while pending:
        path = Path(os.path.normpath(pending.pop()))
        key = path.as_posix()
        if key in out:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            out[key] = "missing"
            continue
        out[key] = hashlib.sha256(data).hexdigest()
        for target in _extends_targets(data.decode("utf-8", "replace")):
            found = _resolve_extends(path.parent, target, root)
            if found is not None:
                pending.append(found)
    return sorted(
        (Path(k).relative_to(root).as_posix() if Path(k).is_relative_to(root) else k, v) for k, v in out.items()
    )


def source_inputs(root: str | Path, known: Iterable[str]) -> list[tuple[str, str]]:
    """(path, sha256) of the repository's TypeScript/JavaScript sources not in ``known``: the other language's
    files, which the checker reads too (a ``.ts`` file importing a ``.js`` one and back)."""
    root = Path(root)
    skip = set(known)
    out: list[tuple[str, str]] = []
    for c in discover(root, dict.fromkeys(EXTENSIONS, "ts")).files:
        if c.path in skip or c.skip_reason.startswith("vendored"):
            continue
        try:
            out.append((c.path, hashlib.sha256((root / c.path).read_bytes()).hexdigest()))
        except OSError:
            out.append((c.path, "missing"))
    return out


def _extends_targets(text: str) -> list[str]:
    match = _EXTENDS.search(text)
    if match is None:
        return []
    value = match.group(1)
    return re.findall(r'"([^"]*)"', value) if value.startswith("[") else [value.strip('"')]


def _resolve_extends(directory: Path, target: str, root: Path) -> Path | None:
    if target.startswith((".", "/")):
        base = directory / target
        for candidate in (base, base.with_name(base.name + ".json")):
            if candidate.is_file():
                return candidate
        return None
    for d in (directory, *directory.parents):  # a package: node_modules upwards
        base = d / "node_modules" / target
        for candidate in (base, base.with_name(base.name + ".json"), base / "tsconfig.json"):
            if candidate.is_file():
                return candidate
        if d == root.parent:
            break
    return None


def list_projects(node: str, typescript_module: str, configs: Iterable[str], *, timeout: float) -> Plan:
    """Ask the compiler for each config's (and each referenced config's) files, references and options."""
    configs = list(configs)
    plan = Plan()
    if not configs:
        return plan
    with tempfile.TemporaryDirectory(prefix="kivgraph-tsprojects-") as tmp:
        script, request = Path(tmp, "list_projects.js"), Path(tmp, "request.json")
        script.write_text(LIST_PROJECTS_JS)
        request.write_text(json.dumps({"configs": configs}))
        try:
            proc = subprocess.run(
                [node, str(script), typescript_module, str(request)],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ProjectsFailed(f"listing tsconfig projects failed: {exc}") from None
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout).split())[-300:] or "no output"
        raise ProjectsFailed(f"listing tsconfig projects exited {proc.returncode}: {tail}")
    try:
        data = json.loads(proc.stdout)
    except ValueError as exc:
        raise ProjectsFailed(f"listing tsconfig projects printed no JSON: {exc}") from None
    plan.typescript = str(data.get("typescript", ""))
    for config, p in data["projects"].items():
        config_dir = str(PurePosixPath(config).parent)
        type_roots = p.get("typeRoots")
        plan.projects[config] = Project(
            config=config,
            file_names=frozenset(p.get("fileNames", ())),
            references=tuple(p.get("references", ())),
            extended=tuple(p.get("extended", ())),
            errors=tuple(p.get("errors", ())),
            out_dirs=tuple(d for d in (p.get("outDir"), p.get("declarationDir")) if d),
            root_dir=p.get("rootDir") or config_dir,
            type_roots=tuple(type_roots) if type_roots is not None else None,
        )
    return plan


def assign(plan: Plan, root: str, files: Iterable[str]) -> Plan:
    """Fill ``plan.assigned``/``plan.inferred``: each file's default project, tsserver-style."""
    roots = {os.path.normpath(root), os.path.realpath(root)}

    def absolute(rel: str) -> list[str]:
        return [Path(r, rel).as_posix() for r in roots]

    def search(config: str, targets: list[str], seen: set[str]) -> str | None:
        if config in seen or config not in plan.projects:
            return None
        seen.add(config)
        project = plan.projects[config]
        if any(t in project.file_names for t in targets) and not project.unreadable:
            return config
        for ref in project.references:
            hit = search(ref, targets, seen)
            if hit is not None:
                return hit
        return None

    for rel in files:
        targets = absolute(rel)
        owner: str | None = None
        parent = PurePosixPath(rel).parent
        seen: set[str] = set()
        for d in (parent, *parent.parents):
            for name in CONFIG_NAMES:
                for r in roots:
                    config = Path(r, d, name).as_posix() if str(d) != "." else Path(r, name).as_posix()
                    owner = search(config, targets, seen)
                    if owner is not None:
                        break
                if owner is not None:
                    break
            if owner is not None:
                break
        if owner is None:
            plan.inferred.append(rel)
        else:
            plan.assigned.setdefault(owner, []).append(rel)
    return plan


def plan_projects(root: str, files: list[str], *, node: str, typescript_module: str, timeout: float) -> Plan:
    """Discover the repository's tsconfigs, list them with the compiler and assign ``files`` to projects."""
    base = Path(root)
    configs = [(base / p).as_posix() for p in config_files(root) if p.rsplit("/", 1)[-1] in CONFIG_NAMES]
    plan = list_projects(node, typescript_module, configs, timeout=timeout)
    return assign(plan, root, files)


def type_roots_for(project: Project, root: str) -> list[str]:
    """The ``@types`` directories the compiler would use for a config in the project's own directory
    (a generated config elsewhere must name them, or ambient ``@types`` packages are lost)."""
    if project.type_roots is not None:
        return list(project.type_roots)
    out: list[str] = []
    directory = PurePosixPath(project.config).parent
    for d in (directory, *directory.parents):
        candidate = Path(d, "node_modules", "@types")
        if candidate.is_dir():
            out.append(candidate.as_posix())
        if str(d) == str(PurePosixPath(root).parent):
            break
    return out
