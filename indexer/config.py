"""Strict TOML configuration: ``kivgraph.toml`` (tomllib reads, msgspec validates).

Unknown keys and bad values are errors that name the key and the file. The
repositories registered for indexing live in the same file as
``[[repository]]`` tables.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from indexer.languages import registry
from snapshot_format.atomic import write_atomically
from snapshot_format.languages import ALIASES as LANGUAGE_ALIASES
from snapshot_format.languages import IDS as LANGUAGES
from snapshot_format.names import repository_name_problem
from snapshot_format.regular import IrregularFileError, read_regular

CONFIG_VERSION = 1


class ConfigError(Exception):
    """The configuration is invalid; the message names the file and the key."""


class RepositoryConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: str
    path: str
    languages: list[str]
    exclude: list[str] = []
    # None = the [indexing] setting; true indexes this repository's TypeScript build outputs too
    include_build_outputs: bool | None = None
    # A SCIP index of this repository written by any SCIP indexer (relative to the repository): its occurrences
    # are EXACT edges (indexer/scip/external.py); with it, ``languages`` may be empty
    scip: str = ""


class IndexingConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    max_file_bytes: int = 1_048_576
    fact_cache: Literal["on", "off", "verify"] = "on"
    retain_generations: int = 3
    analyzer_timeout_seconds: float = 900.0
    # TypeScript declaration files built from the repository's own sources (outDir, dist/...) are skipped
    # as generated unless this is true (indexer.languages.typescript.outputs)
    include_build_outputs: bool = False


def _section(spec_name: str, language: str, defaults: Mapping[str, bool | int | float | str]) -> type[msgspec.Struct]:
    """The schema of a language's section of kivgraph.toml, from its folder's ``[settings]`` (language.toml)."""
    return msgspec.defstruct(
        f"{spec_name.title()}Settings",
        [(key, type(value), value) for key, value in defaults.items()],
        forbid_unknown_fields=True,
        kw_only=True,
        frozen=True,
    )


# language id -> the schema of its section (``[go]``, ``[rust]``, ``[java]``: whichever folders declare settings)
SECTIONS: dict[str, type[msgspec.Struct]] = {
    spec.ids[0]: _section(spec.name, spec.ids[0], spec.settings) for spec in registry.LANGUAGES if spec.settings
}


class _Config(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The file's own keys; each language section is a field of ``Config`` (built from ``SECTIONS``)."""

    version: int = CONFIG_VERSION
    indexing: IndexingConfig = msgspec.field(default_factory=IndexingConfig)
    repository: list[RepositoryConfig] = []


# a subclass of _Config (bases=), which defstruct's annotation cannot say
Config: type[_Config] = msgspec.defstruct(  # type: ignore[assignment]
    "Config",
    [(language, section, msgspec.field(default_factory=section)) for language, section in SECTIONS.items()],
    bases=(_Config,),
    forbid_unknown_fields=True,
    kw_only=True,
)


def section(config: _Config, language: str) -> msgspec.Struct | None:
    """A language's section of the config (its defaults when the file has none), or None when it has none."""
    found = getattr(config, language, None) if language in SECTIONS else None
    return found if isinstance(found, msgspec.Struct) else None


def with_section(config: _Config, language: str, **values: bool | int | float | str) -> _Config:
    """The config with some keys of a language's section set (``Config(go=...)`` for a section built at import)."""
    current = section(config, language)
    if current is None:
        raise KeyError(f"no [{language}] section: the language declares no settings")
    return msgspec.structs.replace(config, **{language: msgspec.structs.replace(current, **values)})


@dataclass(frozen=True)
class Repository:
    """A validated, registered repository."""

    name: str
    root: Path
    languages: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    include_build_outputs: bool = False  # the repository's own setting, else [indexing]'s
    # Why the repository cannot be read now (moved, deleted, unreadable): indexing skips it and says so
    # instead of failing every other repository.
    problem: str = ""
    scip: Path | None = None  # the SCIP index it names (RepositoryConfig.scip), resolved


@dataclass(frozen=True)
class LoadedConfig:
    path: Path
    raw: _Config
    repositories: tuple[Repository, ...]

    @property
    def indexing(self) -> IndexingConfig:
        return self.raw.indexing

    def allows_network(self, language: str) -> bool:
        """Whether the config lets this language's analyzer reach a package registry (``allow_network`` in its
        section, for a language whose folder declares that setting)."""
        return bool(getattr(section(self.raw, language), "allow_network", False))


def _key_path(message: str) -> tuple[str, str]:
    """Split msgspec's "... - at `$.a[0].b`" into (reason, key path)."""
    match = re.search(r" - at `\$\.?(.*)`$", message)
    if not match:
        return message, ""
    return message[: match.start()], match.group(1)


def normalize_languages(values: list[str], where: str) -> tuple[str, ...]:
    """Canonical language names; ConfigError on unknown or duplicate entries."""
    if not values:
        raise ConfigError(f"{where}: at least one language is required (one of {', '.join(LANGUAGES)})")
    out: list[str] = []
    for raw in values:
        lang = LANGUAGE_ALIASES.get(raw.strip().lower())
        if lang is None:
            raise ConfigError(f"{where}: unknown language {raw!r} (expected one of {', '.join(LANGUAGES)})")
        if lang in out:
            raise ConfigError(f"{where}: language {raw!r} listed twice")
        out.append(lang)
    return tuple(out)


def validate_repository_name(name: str, where: str) -> None:
    problem = repository_name_problem(name)
    if problem:
        raise ConfigError(f"{where}: {problem}")


def resolve_repository_path(raw: str, base: Path, where: str) -> Path:
    """Expand ~ and $VARS, resolve against ``base``; the directory must exist and be readable."""
    expanded = os.path.expandvars(os.path.expanduser(raw))
    if "$" in expanded:
        raise ConfigError(f"{where}: unset environment variable in {raw!r}")
    path = Path(expanded)
    if not path.is_absolute():
        path = base / path
    path = Path(os.path.normpath(path))
    if not path.exists():
        raise ConfigError(f"{where}: {path} does not exist")
    if not path.is_dir():
        raise ConfigError(f"{where}: {path} is not a directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise ConfigError(f"{where}: {path} is not readable")
    return path.resolve()


def validate(config: _Config, path: Path) -> LoadedConfig:
    """Semantic checks msgspec cannot express; returns the resolved registry."""
    if config.version != CONFIG_VERSION:
        raise ConfigError(f"{path}: key 'version': unsupported version {config.version} (expected {CONFIG_VERSION})")
    idx = config.indexing
    if idx.max_file_bytes <= 0:
        raise ConfigError(f"{path}: key 'indexing.max_file_bytes': must be > 0, got {idx.max_file_bytes}")
    if idx.retain_generations < 1:
        raise ConfigError(f"{path}: key 'indexing.retain_generations': must be >= 1, got {idx.retain_generations}")
    if idx.analyzer_timeout_seconds <= 0:
        raise ConfigError(f"{path}: key 'indexing.analyzer_timeout_seconds': must be > 0")
    repos: list[Repository] = []
    seen_names: dict[str, str] = {}
    for i, entry in enumerate(config.repository):
        where = f"{path}: key 'repository[{i}]"
        validate_repository_name(entry.name, f"{where}.name'")
        folded = entry.name.casefold()
        if folded in seen_names:
            raise ConfigError(f"{where}.name': {entry.name!r} collides with repository {seen_names[folded]!r}")
        seen_names[folded] = entry.name
        problem = ""
        try:
            root = resolve_repository_path(entry.path, path.parent, f"{where}.path'")
        except ConfigError as exc:
            if "unset environment variable" in str(exc):
                raise
            root, problem = Path(os.path.normpath(path.parent / os.path.expanduser(entry.path))), str(exc)
        languages = (
            () if entry.scip and not entry.languages else normalize_languages(entry.languages, f"{where}.languages'")
        )
        scip_index: Path | None = None
        if entry.scip:
            scip_index = Path(os.path.expandvars(os.path.expanduser(entry.scip)))
            scip_index = scip_index if scip_index.is_absolute() else root / scip_index
            if not problem and not scip_index.is_file():
                raise ConfigError(f"{where}.scip': {scip_index} is not a file (a SCIP index, e.g. index.scip)")
        for ex in entry.exclude:
            if ex.startswith("/") or ".." in Path(ex).parts:
                raise ConfigError(f"{where}.exclude': {ex!r} must be a path inside the repository")
        include_outputs = (
            idx.include_build_outputs if entry.include_build_outputs is None else entry.include_build_outputs
        )
        repos.append(
            Repository(
                entry.name,
                root,
                languages,
                tuple(e.rstrip("/") for e in entry.exclude),
                include_outputs,
                problem,
                scip_index,
            )
        )
    for a in repos:
        for b in repos:
            if a is not b and not a.problem and not b.problem and (a.root == b.root or a.root in b.root.parents):
                raise ConfigError(
                    f"{path}: repositories {a.name!r} ({a.root}) and {b.name!r} ({b.root}) overlap; "
                    "a repository may not contain another"
                )
    return LoadedConfig(path=path, raw=config, repositories=tuple(repos))


def parse(text: str, path: Path) -> LoadedConfig:
    """Parse and validate configuration text that came from ``path``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        reason, key = _key_path(str(exc))
        unknown = re.match(r"Object contains unknown field `(.+)`", reason)
        if unknown:
            full = f"{key}.{unknown.group(1)}" if key else unknown.group(1)
            raise ConfigError(f"{path}: unknown key '{full}'") from None
        raise ConfigError(f"{path}: key '{key or '(top level)'}': {reason}") from None
    return validate(config, path)


_MAX_CONFIG_BYTES = 16 << 20


def load(path: Path, *, missing_ok: bool = False) -> LoadedConfig:
    """Load the config file; a missing file is an error unless ``missing_ok`` (then: empty registry)."""
    try:
        text = read_regular(path, limit=_MAX_CONFIG_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except IrregularFileError as exc:
        raise ConfigError(f"{exc}; the configuration must be a TOML file") from None
    except FileNotFoundError:
        if missing_ok:
            return LoadedConfig(path=path, raw=Config(), repositories=())
        raise ConfigError(f"{path}: no configuration; run `kivgraph init PATH...` to register repositories") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(text) > _MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {_MAX_CONFIG_BYTES} bytes; is it the configuration?")
    return parse(text, path)


# --- writing -------------------------------------------------------------------------------


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return _toml_str(value) if isinstance(value, str) else repr(value)


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def render(config: _Config) -> str:
    """The TOML text of a config (only the keys kivgraph knows)."""
    defaults = IndexingConfig()
    lines = ["# kivgraph configuration: see `kivgraph init --help`.", f"version = {config.version}", ""]
    idx = config.indexing
    lines.append("[indexing]")
    lines.append(f"max_file_bytes = {idx.max_file_bytes}")
    lines.append(f"fact_cache = {_toml_str(idx.fact_cache)}  # on | off | verify")
    lines.append(f"retain_generations = {idx.retain_generations}")
    if idx.analyzer_timeout_seconds != defaults.analyzer_timeout_seconds:
        lines.append(f"analyzer_timeout_seconds = {idx.analyzer_timeout_seconds}")
    if idx.include_build_outputs != defaults.include_build_outputs:
        lines.append(f"include_build_outputs = {str(idx.include_build_outputs).lower()}")
    for language, schema in SECTIONS.items():  # a section's keys that are not their defaults
        given, default = section(config, language), schema()
        changed = [
            (key, getattr(given, key))
            for key in schema.__struct_fields__
            if getattr(given, key) != getattr(default, key)
        ]
        if changed:
            lines += ["", f"[{language}]", *(f"{key} = {_toml_value(value)}" for key, value in changed)]
    for repo in config.repository:
        lines += ["", "[[repository]]", f"name = {_toml_str(repo.name)}", f"path = {_toml_str(repo.path)}"]
        lines.append(f"languages = {_toml_list(repo.languages)}")
        if repo.exclude:
            lines.append(f"exclude = {_toml_list(repo.exclude)}")
        if repo.include_build_outputs is not None:
            lines.append(f"include_build_outputs = {str(repo.include_build_outputs).lower()}")
        if repo.scip:
            lines.append(f"scip = {_toml_str(repo.scip)}")
    return "\n".join(lines) + "\n"


def write(path: Path, config: _Config) -> None:
    """Validate, then write the config atomically."""
    text = render(config)
    validate(config, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text.encode("utf-8"))


def upsert_repositories(config: _Config, entries: list[RepositoryConfig]) -> _Config:
    """Register entries: identical is a no-op, same name+path replaces languages, same name elsewhere fails."""
    repos = list(config.repository)
    for entry in entries:
        for i, existing in enumerate(repos):
            if existing.name == entry.name:
                if os.path.realpath(existing.path) != os.path.realpath(entry.path):
                    raise ConfigError(
                        f"project {entry.name!r} is already registered at {existing.path!r}; "
                        "choose another name or remove that entry"
                    )
                repos[i] = RepositoryConfig(
                    name=existing.name,
                    path=existing.path,
                    languages=entry.languages,
                    exclude=existing.exclude,
                    include_build_outputs=existing.include_build_outputs,
                )
                break
        else:
            repos.append(entry)
    return msgspec.structs.replace(config, repository=repos)
