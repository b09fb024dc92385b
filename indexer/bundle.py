"""Bundles: one repository's part of the graph, built where its build environment is (``kivgraph index --bundle``).

A bundle is one file, self-describing and checked before anything of it is used::

    KIVGRAPH-BUNDLE\\n  <8-byte big-endian manifest length>  <manifest: JSON>  <payload: msgpack>

The manifest says what the bundle is (repository, commit and branch, the analyzers that ran and their
versions, the bundle and generation format versions, the package identities the repository exports and
the packages it imports, whether every analyzer ran, and the failures) and carries the payload's length
and BLAKE2b-256 digest. The payload is the repository's facts: its file list with content hashes, each
file's extracted declarations and reference sites, each file's lexical terms, and per language the joined
output of its exact analyzer run (or why the analyzer failed there). Paths are repository-relative; nothing
names the building machine's directories.

The analyzer ran with only this repository registered and its dependencies as the job installed them
(``Corpus.installed``), so a use of another repository's package is recorded by that package's identity
(Python: module namespace and member; Go: import path, qualified name and kind; TypeScript: the package's
name and its published declaration). ``kivgraph publish`` (``indexer.link``) binds those to the provider's
declarations when both bundles, or a bundle and a repository of the current generation, are linked.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from indexer import __version__
from indexer.config import LoadedConfig
from indexer.corpus import Corpus, RepositoryFacts
from indexer.discover import Discovery
from indexer.exact_pass import AnalyzeFn
from indexer.fact_cache import FactCache
from indexer.facts import FileFacts
from indexer.gitstate import read_git_state
from indexer.languages import registry
from indexer.languages.spec import ExactAdapter
from indexer.lexicon import LexiconBuilder
from indexer.pipeline import Build, Timer, discover_phase, extract_phase, key_phase, resolve_phase
from indexer.progress import Heartbeat, Progress, ProgressFn
from indexer.publish import PublishLock
from indexer.scratch import scratch_directory
from snapshot_format.atomic import write_atomically
from snapshot_format.layout import StateLayout
from snapshot_format.names import repository_name_problem
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION

MAGIC = b"KIVGRAPH-BUNDLE\n"
BUNDLE_FORMAT = 1  # 1: first bundle layout (manifest JSON + msgpack payload)
_LENGTH = struct.Struct(">Q")
_MAX_MANIFEST_BYTES = 16 << 20


class BundleError(Exception):
    """A bundle that cannot be used: the message names the file and what is wrong with it."""


class PackageIdentity(msgspec.Struct, frozen=True, kw_only=True):
    """A package as linking knows it: language, name (import path, module, npm name), version, descriptor."""

    language: str
    name: str
    version: str = ""
    descriptor: str = ""  # where it comes from: "registered", "go.mod", "package.json", "site-packages", ...


class AnalyzerRun(msgspec.Struct, frozen=True, kw_only=True):
    """One language's exact analyzer as the bundle's builder ran it."""

    language: str
    analyzer: str
    version: str = ""  # the analyzer's own version ("" when it did not run)
    extractor_version: str = ""  # kivgraph's extractor of the language: facts are read only by the same one
    failure: str = ""  # why it did not produce facts ("" when it did)


class BundleManifest(msgspec.Struct, frozen=True, kw_only=True):
    """What a bundle is (JSON, read first)."""

    bundle_format: int
    format_version: int
    feature_version: int
    indexer_version: str
    repository: str
    languages: tuple[str, ...]
    commit: str = ""
    branch: str = ""
    dirty: bool = False
    built_at: str = ""
    analyzers: tuple[AnalyzerRun, ...] = ()
    exports: tuple[PackageIdentity, ...] = ()
    imports: tuple[PackageIdentity, ...] = ()
    complete: bool = True  # every language was analysed exactly
    failures: tuple[str, ...] = ()
    files: int = 0
    payload_bytes: int = 0
    digest: str = ""  # BLAKE2b-256 hex of the payload bytes


class BundledFile(msgspec.Struct, array_like=True, frozen=True):
    """A discovered file: skipped ones keep their reason; the others their content hash."""

    path: str
    language: str
    size: int
    skip_reason: str = ""
    content_hash: str = ""


class BundledTerms(msgspec.Struct, array_like=True, frozen=True):
    """One file's lexical terms, in the order the builder added them to its lexicon."""

    path: str
    language: str
    counts: dict[str, int]


class BundledRun(msgspec.Struct, array_like=True, frozen=True):
    """One language's analyzer output for the repository: the adapter's encoded facts, or why it failed."""

    language: str
    facts: bytes = b""
    failure: str = ""


class BundledSource(msgspec.Struct, array_like=True, frozen=True):
    """A file linking reads (repository-relative): a source, a project file, an installed package's declaration."""

    path: str
    data: bytes


class BundlePayload(msgspec.Struct, frozen=True, kw_only=True):
    """The repository's facts."""

    repository: str
    languages: tuple[str, ...]
    files: tuple[BundledFile, ...] = ()
    facts: tuple[FileFacts, ...] = ()
    terms: tuple[BundledTerms, ...] = ()
    runs: tuple[BundledRun, ...] = ()
    # What the resolvers and binders read besides the facts (a go.mod, a package.json, the sources a provider's
    # published build maps to, a consumer's installed packages): ``kivgraph publish`` links over these, not over
    # a checkout, so the machine that publishes needs none.
    sources: tuple[BundledSource, ...] = ()


_NOT_WALKED = frozenset({".git", "node_modules", "target", "__pycache__", ".venv", "venv"})


def named_files(root: Path, wanted: Callable[[str], bool]) -> list[str]:
    """Repository-relative paths of the files under ``root`` whose name ``wanted`` accepts (dependency, build and
    version-control directories left out): what a language's ``linking_inputs`` starts from."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _NOT_WALKED)
        out += [Path(dirpath, n).relative_to(root).as_posix() for n in sorted(filenames) if wanted(n)]
    return out


def link_inputs(
    root: Path, discovery: Discovery, languages: tuple[str, ...], max_file_bytes: int
) -> tuple[BundledSource, ...]:
    """The files of ``root`` linking reads: every discovered file, the ignore files discovery reads, and what each
    language's folder names (``linking_inputs`` in its ``identities.py``: a go.mod, a package.json, a consumer's
    installed packages)."""
    wanted: dict[str, None] = {c.path: None for c in discovery.files if c.size <= max_file_bytes}
    wanted.update(dict.fromkeys(named_files(root, lambda name: name == ".gitignore")))
    folders: set[str] = set()
    for language in languages:
        spec = registry.spec_for(language)
        if spec is None or spec.name in folders:
            continue  # typescript and javascript share one folder
        folders.add(spec.name)
        hook = _identities_hook(language, "linking_inputs")
        if hook is not None:
            wanted.update(dict.fromkeys(hook(root, max_file_bytes)))
    out: list[BundledSource] = []
    for rel in sorted(wanted):
        try:
            out.append(BundledSource(rel, (root / rel).read_bytes()))
        except OSError:
            continue  # gone since discovery: linking reads it as absent, as a checkout would
    return tuple(out)


def materialize(bundle: Bundle, into: Path) -> Path:
    """Write the files linking reads of ``bundle`` under ``into`` (a scratch directory); returns that root."""
    into.mkdir(parents=True, exist_ok=True)
    for source in bundle.payload.sources:
        if source.path.startswith("/") or ".." in source.path.split("/"):
            raise BundleError(f"{bundle.path}: field 'sources': {source.path!r} is not a path inside the repository")
        target = into / source.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.data)
    return into


@dataclasses.dataclass(frozen=True)
class Bundle:
    """A bundle read and verified."""

    path: Path
    manifest: BundleManifest
    payload: BundlePayload


_payload_encoder = msgspec.msgpack.Encoder()
_payload_decoder = msgspec.msgpack.Decoder(BundlePayload)
_manifest_decoder = msgspec.json.Decoder(BundleManifest)


def encode_bundle(manifest: BundleManifest, payload: BundlePayload) -> bytes:
    """The bundle file's bytes; the manifest's length and digest are filled in from the payload."""
    body = _payload_encoder.encode(payload)
    manifest = msgspec.structs.replace(
        manifest, payload_bytes=len(body), digest=hashlib.blake2b(body, digest_size=32).hexdigest()
    )
    head = msgspec.json.format(msgspec.json.encode(manifest), indent=2)
    return MAGIC + _LENGTH.pack(len(head)) + head + body


def write_bundle(path: Path, manifest: BundleManifest, payload: BundlePayload) -> BundleManifest:
    """Write the bundle atomically (a reader never sees half of it); returns the manifest written."""
    data = encode_bundle(manifest, payload)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data)
    return read_manifest_bytes(data, path)


def read_manifest_bytes(data: bytes, path: Path) -> BundleManifest:
    """The manifest of a bundle's bytes (its payload not checked)."""
    if not data.startswith(MAGIC):
        raise BundleError(f"{path}: not a kivgraph bundle (no {MAGIC.strip().decode()} header)")
    if len(data) < len(MAGIC) + _LENGTH.size:
        raise BundleError(f"{path}: truncated bundle ({len(data)} bytes: the manifest length is cut off)")
    (n,) = _LENGTH.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _LENGTH.size
    if n > _MAX_MANIFEST_BYTES or start + n > len(data):
        raise BundleError(f"{path}: truncated bundle (its manifest of {n} bytes is cut off at {len(data)} bytes)")
    try:
        return _manifest_decoder.decode(data[start : start + n])
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{path}: malformed bundle manifest: {exc}") from None


def read_bundle(path: Path) -> Bundle:
    """Read and verify a bundle: header, versions, length, digest, and that its payload is the named repository's.

    Every refusal is a ``BundleError`` naming the file and the field.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BundleError(f"{path}: no such bundle") from None
    except IsADirectoryError:
        raise BundleError(f"{path}: a directory, not a bundle file") from None
    except OSError as exc:
        raise BundleError(f"{path}: cannot read: {exc.strerror}") from None
    m = read_manifest_bytes(data, path)
    if m.bundle_format != BUNDLE_FORMAT:
        raise BundleError(
            f"{path}: bundle_format {m.bundle_format}, this kivgraph {__version__} reads bundle format "
            f"{BUNDLE_FORMAT}; build the bundle again with this version"
        )
    if (m.format_version, m.feature_version) != (FORMAT_VERSION, FEATURE_VERSION):
        raise BundleError(
            f"{path}: built for generation format {m.format_version}.{m.feature_version}, this kivgraph writes "
            f"{FORMAT_VERSION}.{FEATURE_VERSION}; build the bundle again with this version"
        )
    problem = repository_name_problem(m.repository)
    if problem:
        raise BundleError(f"{path}: field 'repository': {problem}")
    (n,) = _LENGTH.unpack_from(data, len(MAGIC))
    body = data[len(MAGIC) + _LENGTH.size + n :]
    if len(body) != m.payload_bytes:
        raise BundleError(
            f"{path}: truncated bundle: payload of {len(body)} bytes, the manifest says {m.payload_bytes}"
        )
    digest = hashlib.blake2b(body, digest_size=32).hexdigest()
    if digest != m.digest:
        raise BundleError(f"{path}: digest mismatch: the payload hashes to {digest}, the manifest says {m.digest}")
    try:
        payload = _payload_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{path}: malformed bundle payload: {exc}") from None
    if payload.repository != m.repository:
        raise BundleError(
            f"{path}: field 'repository': the manifest names {m.repository!r} but the facts are "
            f"{payload.repository!r}'s"
        )
    for run in m.analyzers:
        module = registry.module_for(run.language)
        ours = module.EXTRACTOR_VERSION if module else ""
        if run.extractor_version != ours:
            raise BundleError(
                f"{path}: field 'analyzers': its {run.language} facts come from extractor "
                f"{run.extractor_version or 'none'}, this kivgraph's is {ours or 'none'}; build the bundle again"
            )
    return Bundle(path, m, payload)


# --- building -------------------------------------------------------------------------------------


def _exports_imports(
    payload: BundlePayload, root: Path
) -> tuple[tuple[PackageIdentity, ...], tuple[PackageIdentity, ...]]:
    """The package identities the repository exports (what its files declare) and those it imports, as each
    language's folder names them (``identities.py`` there: a module, a go.mod, a package.json), or by package."""
    exports: dict[tuple[str, str], PackageIdentity] = {}
    imports: dict[tuple[str, str], PackageIdentity] = {}
    by_lang: dict[str, list[FileFacts]] = {}
    for ff in payload.facts:
        by_lang.setdefault(ff.language, []).append(ff)
    for language, files in sorted(by_lang.items()):
        hook = _identities_hook(language)
        if hook is not None:
            found_out, found_into = hook(language, files, root)
            out = [PackageIdentity(language=a, name=b, version=c, descriptor=d) for a, b, c, d in found_out]
            into = [PackageIdentity(language=a, name=b, version=c, descriptor=d) for a, b, c, d in found_into]
        else:
            out = [
                PackageIdentity(language=language, name=pkg, descriptor="package")
                for pkg in sorted({ff.package for ff in files if ff.package})
            ]
            into = []
        for p in out:
            exports.setdefault((p.language, p.name), p)
        for p in into:
            imports.setdefault((p.language, p.name), p)
    return tuple(exports[k] for k in sorted(exports)), tuple(imports[k] for k in sorted(imports))


def _identities_hook(language: str, name: str = "package_identities") -> Any:
    """``name`` in the language's folder (``indexer/languages/<folder>/identities.py``), or None."""
    spec = registry.spec_for(language)
    if spec is None:
        return None
    try:
        module = importlib.import_module(f"indexer.languages.{spec.name}.identities")
    except ModuleNotFoundError:
        return None
    return getattr(module, name, None)


def manifest_summary(m: BundleManifest) -> dict[str, object]:
    """The manifest as JSON-ready data (``--json`` results, logs)."""
    return msgspec.to_builtins(m)


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_bundle_name(repository: str, commit: str) -> str:
    """``NAME-<commit12>.kgbundle``: the file name the docs' CI jobs upload."""
    return f"{repository}-{commit[:12] or 'nocommit'}.kgbundle"


def single_repository(loaded: LoadedConfig, name: str) -> LoadedConfig:
    """The config with only ``name`` registered: a bundle sees no other repository."""
    repo = next(r for r in loaded.repositories if r.name == name)
    return dataclasses.replace(loaded, repositories=(repo,))


class _RecordingLexicon(LexiconBuilder):
    """A lexicon that also keeps each file's terms in order (a bundle carries them)."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[BundledTerms] = []

    def add(self, repository: str, path: str, language: str, counts: dict[str, int]) -> None:
        super().add(repository, path, language, counts)
        self.added.append(BundledTerms(path, language, dict(counts)))


def _heartbeat_analyze(progress: ProgressFn) -> AnalyzeFn:
    """The adapter's whole-repository run, reported while it lasts (a heartbeat) and when it ends, with its time."""

    def analyze(adapter: ExactAdapter[Any], repo: RepositoryFacts, corpus: Corpus, _key: bytes, timeout: float) -> Any:
        phase = f"analyze.{corpus.language}"
        started = time.perf_counter()
        with Heartbeat(progress, Progress(phase, repo.name, adapter.analyzer, 0, 1)):
            facts = adapter.analyze(repo, corpus, timeout=timeout)
        progress(Progress(phase, repo.name, f"{adapter.analyzer}: {time.perf_counter() - started:.1f}s", 1, 1))
        return facts

    return analyze


def build_bundle(
    loaded: LoadedConfig,
    layout: StateLayout,
    name: str,
    out: Path,
    *,
    progress: ProgressFn,
    fact_cache_mode: str | None = None,
) -> BundleManifest:
    """Build repository ``name``'s part with its analyzers, alone, and write it as a bundle at ``out``.

    Only ``name`` is registered for the run, and its dependencies are seen as this environment installs them
    (``Corpus.installed``). The fact cache of the state directory is used and filled as by ``kivgraph index``;
    nothing is published. Holds the state directory's indexer lock (one indexer per state directory).
    """
    names = [r.name for r in loaded.repositories]
    if name not in names:
        raise ValueError(f"--repository {name}: not registered in {loaded.path} (registered: {', '.join(names)})")
    single = single_repository(loaded, name)
    repo = single.repositories[0]
    if repo.problem:
        raise ValueError(f"repository {name} cannot be read: {repo.problem}")
    mode = fact_cache_mode or loaded.indexing.fact_cache
    timer = Timer()
    with PublishLock(layout), scratch_directory(layout), FactCache(layout.fact_cache_dir, mode) as cache:
        b = Build(single, cache, progress, timer)
        b.installed, b.keep_runs = True, True
        b.analyze = _heartbeat_analyze(progress)
        lexicon = b.lexicon = _RecordingLexicon()
        discover_phase(b)
        extract_phase(b)
        key_phase(b)
        resolve_phase(b)
        cache.prune()
    (w,) = b.work
    git = read_git_state(w.root)
    files = tuple(
        BundledFile(c.path, c.language, c.size, c.skip_reason, "" if c.skip_reason else w.hashes.get(c.path, ""))
        for c in w.discovery.files
    )
    facts = tuple(ff for lang in w.facts for ff in w.facts[lang])  # the builder's order: row order follows it
    runs: dict[str, BundledRun] = {}
    analyzers: list[AnalyzerRun] = []
    failures: list[str] = []
    for language in sorted(w.facts):
        module = registry.module_for(language)
        adapter = registry.adapter_for(language)
        extractor = module.EXTRACTOR_VERSION if module else ""
        exact = b.exact_passes.get(language)
        kept = exact.runs_kept.get(name) if exact is not None else None
        if adapter is None or kept is None:
            analyzers.append(AnalyzerRun(language=language, analyzer="tree-sitter", extractor_version=extractor))
            continue
        if isinstance(kept, str):
            runs[language] = BundledRun(language, failure=kept)
            failures.append(f"{language}: {adapter.analyzer} failed: {kept}")
            analyzers.append(
                AnalyzerRun(language=language, analyzer=adapter.analyzer, extractor_version=extractor, failure=kept)
            )
            continue
        runs[language] = BundledRun(language, facts=kept)
        version = str(getattr(adapter.decode(kept), "analyzer_version", "")).partition(" ")[2]
        analyzers.append(
            AnalyzerRun(language=language, analyzer=adapter.analyzer, version=version, extractor_version=extractor)
        )
    for lang in repo.languages:
        if registry.module_for(lang) is None:
            failures.append(f"{lang}: no extractor in kivgraph {__version__}")
    progress(Progress("bundle", name, "reading the files linking needs", 0, 1))
    payload = BundlePayload(
        repository=name,
        languages=repo.languages,
        files=files,
        facts=facts,
        terms=tuple(lexicon.added),
        runs=tuple(runs[k] for k in sorted(runs)),
        sources=link_inputs(w.root, w.discovery, repo.languages, loaded.indexing.max_file_bytes),
    )
    exports, imports = _exports_imports(payload, w.root)
    manifest = BundleManifest(
        bundle_format=BUNDLE_FORMAT,
        format_version=FORMAT_VERSION,
        feature_version=FEATURE_VERSION,
        indexer_version=__version__,
        repository=name,
        languages=repo.languages,
        commit=git.commit,
        branch=git.branch,
        dirty=git.dirty,
        built_at=now_iso(),
        analyzers=tuple(analyzers),
        exports=exports,
        imports=imports,
        complete=not failures,
        failures=tuple(failures),
        files=sum(1 for f in files if not f.skip_reason),
    )
    progress(Progress("bundle", name, f"writing {out}", 0, 1))
    written = write_bundle(out, manifest, payload)
    progress(Progress("bundle", name, f"{out} ({written.payload_bytes} bytes)", 1, 1))
    return written
