"""The indexer side of the `kivgraph` command: init, index, status, doctor, version."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import lmdb
import msgspec

from indexer import __version__
from indexer.config import Config, ConfigError, RepositoryConfig, load, normalize_languages, upsert_repositories, write
from indexer.fact_cache import read_damage_note
from indexer.progress import PhaseLines, Progress
from indexer.progress import as_json as progress_json
from indexer.publish import PublishError, PublishLock
from indexer.run import run_index
from indexer.staleness import TreeKeptChanging
from snapshot_format import errors as snap_errors
from snapshot_format.atomic import write_atomically
from snapshot_format.layout import StateLayout, list_generations, read_pointer, resolve_layout
from snapshot_format.reader import Generation, open_newest_intact
from snapshot_format.regular import read_regular
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION, MIN_READER_VERSION

if TYPE_CHECKING:
    from indexer.run import Stage

EXIT_FAILURE = 1
EXIT_LOCKED = 3

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (default: $KIVGRAPH_HOME/kivgraph.toml or ~/.config/kivgraph/kivgraph.toml).",
)
state_option = click.option(
    "--state-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="State directory for generations, fact cache and logs (default: $KIVGRAPH_HOME/state or ~/.local/state/kivgraph).",
)


def _layout(config_path: str | None, state_dir: str | None) -> StateLayout:
    return resolve_layout(config_path, state_dir)


def _fail(message: str, code: int = EXIT_FAILURE) -> None:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


# --- init ------------------------------------------------------------------------------------


def _detect_languages(root: Path) -> list[str]:
    from indexer.discover import discover
    from indexer.languages.registry import EXTENSIONS

    ext_map = {ext: lang for lang, exts in EXTENSIONS.items() for ext in exts}
    found = discover(root, ext_map)
    counts = collections.Counter(c.language for c in found.indexable)
    return [lang for lang, _n in counts.most_common()]


def _default_name(root: Path) -> str:
    name = "".join(ch if ch.isalnum() or ch in "._+-" else "-" for ch in root.name).strip("-.")
    return name or "repository"


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--repository", "named", multiple=True, metavar="NAME=PATH", help="Register PATH under NAME (repeatable)."
)
@click.option(
    "--languages", default=None, help="Comma-separated languages for every repository given (default: detected)."
)
@click.option("--force", is_flag=True, help="Replace an existing config instead of adding to it.")
@config_option
@state_option
def init(
    paths: tuple[str, ...],
    named: tuple[str, ...],
    languages: str | None,
    force: bool,
    config_path: str | None,
    state_dir: str | None,
) -> None:
    """Write kivgraph.toml registering the repositories at PATHS.

    Each PATH is registered under its directory name (use --repository NAME=PATH
    to choose the name). Languages are detected from file extensions unless
    --languages is given. An existing config keeps its other entries.
    """
    layout = _layout(config_path, state_dir)
    pairs: list[tuple[str, Path]] = [(_default_name(Path(p).resolve()), Path(p).resolve()) for p in paths]
    for item in named:
        name, sep, raw = item.partition("=")
        if not sep or not name or not raw:
            raise click.UsageError(f"--repository expects NAME=PATH, got {item!r}")
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise click.UsageError(f"--repository {name}: {path} is not a directory")
        pairs.append((name, path))
    langs: list[str] | None = None
    if languages is not None:
        try:
            langs = list(normalize_languages([x for x in languages.split(",")], "--languages"))
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
    existed = layout.config_path.exists()
    try:
        base = Config() if force or not existed else load(layout.config_path).raw
        entries = []
        for name, path in pairs:
            repo_langs = langs or _detect_languages(path)
            if not repo_langs:
                _fail(f"{path}: no source files of a supported language found; pass --languages")
            entries.append(RepositoryConfig(name=name, path=str(path), languages=repo_langs))
        config = upsert_repositories(base, entries)
        write(layout.config_path, config)
    except ConfigError as exc:
        _fail(str(exc))
    click.echo(f"config: {'updated' if existed and not force else 'created'} ({layout.config_path})")
    for entry in entries:
        click.echo(f"repository: {entry.name} {entry.path} [{', '.join(entry.languages)}]")
    if not entries:
        click.echo("no repositories given: register some with `kivgraph init PATH`")


# --- index -----------------------------------------------------------------------------------


class _Reporter:
    """NDJSON on stdout with --json; progress lines with elapsed time on stderr otherwise (every event on a
    terminal, each phase's end elsewhere). Thread-safe: heartbeats report from another thread."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.tty = sys.stderr.isatty() and not as_json
        self._lock = threading.Lock()
        self._lines = PhaseLines(lambda line: click.echo(line, err=True), terminal=self.tty)
        self.started = time.perf_counter()

    def begin(self) -> None:
        """A new run starts (watch runs many): elapsed times count from here."""
        self.started = time.perf_counter()

    def progress(self, p: Progress) -> None:
        if not p.elapsed:
            p = dataclasses.replace(p, elapsed=time.perf_counter() - self.started)
        if self.as_json:
            with self._lock:
                _json_line({"event": "progress", "progress": progress_json(p)})
        else:
            self._lines.event(p)

    def published(self, stage: Stage) -> None:
        """One publication of the run (a CANDIDATE one comes before the exact one)."""
        self._lines.flush()
        summary = {**stage.summary(), "counts": msgspec.structs.asdict(stage.result.manifest.counts)}
        if self.as_json:
            with self._lock:
                _json_line({"event": "published", "published": summary})
        elif stage.name == "candidate":
            click.echo(
                f"index: CANDIDATE {stage.result.name} published in {time.perf_counter() - self.started:.2f}s "
                f"({stage.pending_files} files pending exact analysis)"
            )

    def watching(self, roots: int) -> None:
        """``--watch``: the watcher is live (an edit saved from now on is seen)."""
        if self.as_json:
            with self._lock:
                _json_line({"event": "watching", "watching": {"repositories": roots}})
        click.echo(f"watching {roots} repositories for changes (Ctrl-C to stop)", err=True)

    def result(self, payload: dict[str, Any]) -> None:
        self._lines.flush()
        if self.as_json:
            with self._lock:
                _json_line({"event": "result", "result": payload})


def _json_line(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _parse_register(raw: str) -> list[RepositoryConfig]:
    try:
        entries = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise click.UsageError(f"--register: invalid JSON: {exc}") from None
    if not isinstance(entries, list) or not entries:
        raise click.UsageError("--register expects a non-empty JSON list of {name, path, languages}")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"name", "path", "languages"}:
            raise click.UsageError(f"--register[{i}]: expected exactly the keys name, path, languages")
        try:
            out.append(msgspec.convert(entry, RepositoryConfig))
        except msgspec.ValidationError as exc:
            raise click.UsageError(f"--register[{i}]: {exc}") from None
    return out


@click.command()
@click.option("--json", "as_json", is_flag=True, help="NDJSON progress events and one final result on stdout.")
@click.option(
    "--full",
    is_flag=True,
    help="Rebuild from scratch: read nothing from the fact cache (extract and analyze every file again) and refresh it.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: re-index and publish after file changes (debounced); with --repository, only those repositories' changes.",
)
@click.option(
    "--fact-cache",
    type=click.Choice(["on", "off", "verify"]),
    default=None,
    help="Override indexing.fact_cache: verify re-extracts everything and fails on any disagreement.",
)
@click.option(
    "--repository",
    "only",
    multiple=True,
    metavar="NAME",
    help=(
        "Re-read only NAME from disk (repeatable); other repositories are carried over from the current generation. "
        "With --watch, only NAME is watched and re-indexed."
    ),
)
@click.option(
    "--register",
    "register",
    default=None,
    metavar="JSON",
    help='Upsert [{"name":..,"path":..,"languages":[..]}] into the registry first; restored if indexing fails.',
)
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="PATH",
    help=(
        "With one --repository NAME: build only NAME's part, with its analyzers, and write it as a bundle at PATH "
        "instead of publishing (for `kivgraph publish --bundle`). Its dependencies are read as this environment "
        "installs them (the active virtualenv, node_modules, the Go module cache), not as registered checkouts."
    ),
)
@config_option
@state_option
def index(
    as_json: bool,
    full: bool,
    watch: bool,
    fact_cache: str | None,
    only: tuple[str, ...],
    register: str | None,
    bundle_path: str | None,
    config_path: str | None,
    state_dir: str | None,
) -> None:
    """Index every registered repository and publish a new generation atomically.

    The previous generation keeps serving until the new one is complete and
    validated. Nothing is published for a tree that changed since the run read
    it: the tree is read again at once, and a tree still changing after three
    reads fails the run. Only one indexer publishes at a time: a second one
    exits at once with code 3.

    \b
    In CI, one job per repository builds that repository's bundle where its
    build environment is, and one job publishes them all:
      kivgraph index --repository NAME --bundle NAME.kgbundle
      kivgraph publish --bundle a.kgbundle --bundle b.kgbundle

    Exit codes: 0 published (or nothing changed, or the bundle written); 1 the
    run failed (bad config, an unreadable repository, a tree that kept
    changing); 2 usage error; 3 another indexer holds the state directory.
    """
    if full:
        if fact_cache is not None:
            raise click.UsageError(
                f"--full reads nothing from the fact cache; it cannot be combined with --fact-cache {fact_cache}"
            )
        fact_cache = "refresh"
    if bundle_path is not None:
        if len(only) != 1:
            raise click.UsageError("--bundle builds one repository's part: give exactly one --repository NAME")
        for flag, given in (("--watch", watch), ("--register", register is not None)):
            if given:
                raise click.UsageError(f"--bundle writes one bundle and exits; it cannot be combined with {flag}")
    layout = _layout(config_path, state_dir)
    reporter = _Reporter(as_json)
    _exit_cleanly_on_termination()
    try:
        # One indexer at a time for the whole run (and the whole watch): see PublishLock.
        with PublishLock(layout) as lock:  # the one acquisition: the runs below are passed it
            if bundle_path is not None:
                _bundle_locked(layout, lock, reporter, only[0], Path(bundle_path), fact_cache)
            _index_locked(layout, lock, reporter, watch, fact_cache, only, register)
    except snap_errors.PublishLockedError as exc:
        _finish_failure(reporter, str(exc), EXIT_LOCKED)
    except PublishError as exc:  # the lock file itself is damaged: named, with the fix
        _finish_failure(reporter, str(exc), EXIT_FAILURE)
    except BrokenPipeError:
        # Whoever read our --json stdout is gone (a killed `kivgraph serve`): nobody to report to.
        os._exit(EXIT_FAILURE)
    except _Terminated as stop:
        raise SystemExit(128 + stop.signum) from None
    except KeyboardInterrupt:
        raise SystemExit(128 + signal.SIGINT) from None


def _index_locked(
    layout: StateLayout,
    lock: PublishLock,
    reporter: _Reporter,
    watch: bool,
    fact_cache: str | None,
    only: tuple[str, ...],
    register: str | None,
) -> None:
    original: bytes | None = None
    if register is not None:
        entries = _parse_register(register)
        try:
            base = load(layout.config_path, missing_ok=True).raw  # refuses a FIFO or a directory in its place
            original = read_regular(layout.config_path) if layout.config_path.exists() else b""
            write(layout.config_path, upsert_repositories(base, entries))
        except ConfigError as exc:
            _finish_failure(reporter, str(exc), EXIT_FAILURE)
    selected = frozenset(only) if only else None
    code = EXIT_FAILURE
    try:
        _check_selected(layout, selected)
        code = _index_once(layout, lock, reporter, fact_cache, selected, watching=watch)
    finally:
        # Any way out but success — a failure, SIGINT/SIGTERM, a reader that went away — restores the registry.
        if code != 0 and original is not None:
            _restore_config(layout, original)
    if code != 0 or not watch:
        raise SystemExit(code)
    from indexer.watch import watch_and_index

    later = None if fact_cache == "refresh" else fact_cache  # --full is the first build's, not every rebuild's
    watch_and_index(
        layout,
        lambda: _index_once(layout, lock, reporter, later, selected, watching=True),
        watching=reporter.watching,
        only=selected,
        # an edit costs its repositories: the run rebuilds what the batch touched, the other layers are carried
        reindex_changed=lambda paths: _index_once(
            layout, lock, reporter, later, selected, watching=True, scope_paths=paths
        ),
    )
    if _TERMINATED_BY:  # watchfiles ends its loop on a signal instead of letting the exception through
        raise _Terminated(_TERMINATED_BY[-1])


def _bundle_locked(
    layout: StateLayout, lock: PublishLock, reporter: _Reporter, name: str, out: Path, fact_cache: str | None
) -> None:
    """``index --repository NAME --bundle PATH``: write NAME's bundle, publish nothing; exits."""
    from indexer.bundle import build_bundle, manifest_summary

    _check_selected(layout, frozenset([name]))
    started = time.perf_counter()
    try:
        loaded = load(layout.config_path)
        manifest = build_bundle(
            loaded, layout, name, out, progress=reporter.progress, fact_cache_mode=fact_cache, lock=lock
        )
    except snap_errors.PublishLockedError as exc:
        _finish_failure(reporter, str(exc), EXIT_LOCKED)
    except (ConfigError, OSError, ValueError, RuntimeError) as exc:
        _finish_failure(reporter, f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConfigError) else str(exc), 1)
    reporter.result({"passed": True, "bundle": str(out), "manifest": manifest_summary(manifest), "error": None})
    if not reporter.as_json:
        state = "complete" if manifest.complete else "incomplete: " + "; ".join(manifest.failures)
        click.echo(f"bundle: {out} ({name} at {manifest.commit[:12] or 'no commit'}, {manifest.files} files, {state})")
        click.echo(f"  written in {time.perf_counter() - started:.2f}s, digest {manifest.digest}")
        for run in manifest.analyzers:
            click.echo(
                f"  {run.language}: {run.analyzer} {run.version}".rstrip()
                + (f" failed: {run.failure}" if run.failure else "")
            )
    raise SystemExit(0)


def _check_selected(layout: StateLayout, selected: frozenset[str] | None) -> None:
    """Every --repository NAME is registered (a usage error naming the others)."""
    if selected is None:
        return
    try:
        registered = {r.name for r in load(layout.config_path).repositories}
    except ConfigError:
        return  # the run reports the config's own error
    unknown = sorted(selected - registered)
    if unknown:
        raise click.UsageError(
            f"--repository {', '.join(unknown)}: not registered in {layout.config_path} "
            f"(registered: {', '.join(sorted(registered)) or 'none'})"
        )


_TERMINATED_BY: list[int] = []


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the indexer is so every cleanup runs (lock, scratch, analyzers)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _exit_cleanly_on_termination() -> None:
    from indexer import children

    def handler(signum: int, _frame: object) -> None:
        _TERMINATED_BY.append(signum)
        children.interrupt(_Terminated(signum))  # raised here, or once an analyzer being started is held

    def interrupted(_signum: int, _frame: object) -> None:
        children.interrupt(KeyboardInterrupt())

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)
    signal.signal(signal.SIGINT, interrupted)


def _restore_config(layout: StateLayout, original: bytes) -> None:
    if original:
        write_atomically(layout.config_path, original)
    else:
        with contextlib.suppress(FileNotFoundError):
            layout.config_path.unlink()


def _finish_failure(reporter: _Reporter, message: str, code: int) -> None:
    reporter.result(
        {"passed": False, "generation_id": None, "generation": None, "counts": {}, "index": {}, "error": message}
    )
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


def _index_once(
    layout: StateLayout,
    lock: PublishLock,
    reporter: _Reporter,
    fact_cache: str | None,
    only: frozenset[str] | None,
    *,
    watching: bool = False,
    scope_paths: frozenset[str] | None = None,
) -> int:
    started = time.perf_counter()
    reporter.begin()
    try:
        loaded = load(layout.config_path)
        if not loaded.repositories:
            raise ConfigError(f"{layout.config_path}: no repositories registered; run `kivgraph init PATH`")
        for repo in loaded.repositories:
            if repo.problem:
                click.echo(f"warning: repository {repo.name} is not indexed: {repo.problem}", err=True)
        report, _result = run_index(
            loaded,
            layout,
            progress=reporter.progress,
            fact_cache_mode=fact_cache,
            only=only,
            on_published=reporter.published,
            scope_paths=scope_paths,
            lock=lock,
        )
    except snap_errors.PublishLockedError as exc:
        _report_error(reporter, str(exc))
        return EXIT_LOCKED
    except TreeKeptChanging as exc:  # under --watch not the end: its watcher heard those changes
        _report_error(reporter, f"{exc}" + ("; the watch goes on" if watching else ""))
        return 0 if watching else EXIT_FAILURE
    except BrokenPipeError:
        raise  # the reader of --json is gone: nobody to report to
    except (ConfigError, OSError, ValueError, RuntimeError) as exc:
        _report_error(reporter, f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConfigError) else str(exc))
        return EXIT_FAILURE
    except Exception as exc:  # the indexer must report, not crash with a bare traceback
        _report_error(reporter, f"{type(exc).__name__}: {exc}")
        return EXIT_FAILURE
    payload = {
        "passed": True,
        "generation_id": report.generation_id,
        "generation": report.generation,
        "counts": report.counts,
        "index": report.index,
        "timings": report.timings,
        "cache": report.cache,
        "published": report.published,
        "stages": report.stages,
        "note": report.note,
        "stale": report.stale,
        "error": None,
    }
    reporter.result(payload)
    if not reporter.as_json:
        c = report.counts
        if not report.published:
            click.echo(f"index: PASS, nothing to publish: {report.note} ({time.perf_counter() - started:.2f}s)")
            return 0
        click.echo(f"index: PASS {report.generation} in {time.perf_counter() - started:.2f}s")
        click.echo(
            f"  repositories {c['repositories']}  files {c['files']}  symbols {c['symbols']}  edges {c['edges']}  "
            f"unresolved {c['unresolved']}  failed files {c['failed_files']}  skipped files {c['skipped_files']}"
        )
        cache = report.cache
        click.echo(f"  fact cache {cache['mode']}: {cache['hits']} hits, {cache['misses']} misses")
        if report.stale:
            click.echo(f"  tree read {len(report.stale) + 1} times: it changed under {len(report.stale)} result(s)")
        for lang, counters in report.index.items():
            fields = "  ".join(f"{k} {v}" for k, v in counters.items() if k != "mode")
            click.echo(f"  {lang} ({counters.get('mode') or 'not analysed'}): {fields}")
    return 0


def _report_error(reporter: _Reporter, message: str) -> None:
    reporter.result(
        {"passed": False, "generation_id": None, "generation": None, "counts": {}, "index": {}, "error": message}
    )
    click.echo(f"error: {message}", err=True)


# --- publish -----------------------------------------------------------------------------------


@click.command()
@click.option(
    "--bundle",
    "bundles",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False),
    metavar="PATH",
    help="A bundle written by `kivgraph index --repository NAME --bundle PATH` (repeatable).",
)
@click.option(
    "--allow-commit-mismatch",
    is_flag=True,
    help="Publish a bundle even when its repository's checkout here is at another commit (graph_status shows both).",
)
@click.option("--json", "as_json", is_flag=True, help="NDJSON progress events and one final result on stdout.")
@config_option
@state_option
def publish(
    bundles: tuple[str, ...], allow_commit_mismatch: bool, as_json: bool, config_path: str | None, state_dir: str | None
) -> None:
    """Link bundles with the current generation and publish one new generation atomically.

    Each bundle is verified first (its format version, its digest, and, where
    its repository is registered here with a git checkout, that the bundle was
    built at the checkout's commit); a bad bundle refuses the publication and
    nothing is written. Uses of one repository's packages by another are bound
    across the bundles and the current generation's other repositories, which
    stay as they are. Same lock and guarantees as `kivgraph index`: the previous
    generation serves until the new one is complete and validated.

    \b
    Exit codes: 0 published; 1 a bundle was refused or publication failed;
    2 usage error; 3 another indexer holds the state directory.
    """
    from indexer.bundle import BundleError
    from indexer.link import publish_bundles

    layout = _layout(config_path, state_dir)
    reporter = _Reporter(as_json)
    _exit_cleanly_on_termination()
    started = time.perf_counter()
    try:
        loaded = load(layout.config_path, missing_ok=True)
        report = publish_bundles(
            loaded,
            layout,
            [Path(b) for b in bundles],
            allow_commit_mismatch=allow_commit_mismatch,
            progress=reporter.progress,
        )
    except snap_errors.PublishLockedError as exc:
        _finish_failure(reporter, str(exc), EXIT_LOCKED)
    except BundleError as exc:
        _finish_failure(reporter, f"{exc}; nothing was published", EXIT_FAILURE)
    except (ConfigError, PublishError, OSError, ValueError, RuntimeError) as exc:
        _finish_failure(reporter, f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConfigError) else str(exc), 1)
    except _Terminated as stop:
        raise SystemExit(128 + stop.signum) from None
    except KeyboardInterrupt:
        raise SystemExit(128 + signal.SIGINT) from None
    result = report.result
    counts = msgspec.structs.asdict(result.manifest.counts)
    reporter.result(
        {
            "passed": True,
            "generation_id": result.generation_id,
            "generation": result.name,
            "counts": counts,
            "repositories": [dataclasses.asdict(r) for r in report.repositories],
            "timings": report.timings,
            "error": None,
        }
    )
    if not as_json:
        click.echo(f"publish: PASS {result.name} in {time.perf_counter() - started:.2f}s")
        click.echo(
            f"  repositories {counts['repositories']}  files {counts['files']}  symbols {counts['symbols']}  "
            f"edges {counts['edges']}  unresolved {counts['unresolved']}"
        )
        for r in report.repositories:
            note = f" (checkout here at {r.checkout_commit[:12]})" if r.checkout_commit else ""
            click.echo(f"  {r.name}: {r.source} at {r.commit[:12] or 'no commit'}{note}")


# --- status ------------------------------------------------------------------------------------


_SKIPPED_PATHS_SHOWN = 20


def status_payload(layout: StateLayout) -> dict[str, Any]:
    """What the newest intact generation holds, per repository and language, and what was refused on the way.

    The content digest of the generation shown is recomputed (a full read), so damage is reported
    here rather than discovered by a server: ``status`` is ``ready`` when CURRENT names an intact
    generation, ``degraded`` when another one serves instead, ``unavailable`` when none can.
    """
    pointer = read_pointer(layout)
    try:
        gen, refused = open_newest_intact(layout)
    except snap_errors.NoGenerationError as exc:
        if list_generations(layout):
            return {"status": "unavailable", "state_dir": str(layout.state_dir), "error": str(exc)}
        return {"status": "empty", "state_dir": str(layout.state_dir)}
    try:
        payload = _generation_status(gen)
    except lmdb.Error as exc:
        return {
            "status": "unavailable",
            "state_dir": str(layout.state_dir),
            "error": f"generation {gen.name} passed its digest check but cannot be read: {exc}",
        }
    payload["refused"] = refused
    payload["current_pointer"] = pointer.name or pointer.problem or "missing"
    damage = read_damage_note(layout.state_dir)
    if damage is not None and os.path.lexists(damage.moved_to):
        payload["fact_cache_damage"] = vars(damage)
    if gen.name != pointer.name or refused:
        payload["status"] = "degraded"
    return payload


def _generation_status(gen: Generation) -> dict[str, Any]:
    with gen:
        m = gen.manifest
        counts = msgspec.structs.asdict(gen.counts())
        breakdown = gen.breakdown()
        repos = []
        for repo in gen.repositories():
            by_lang: dict[str, dict[str, int]] = collections.defaultdict(lambda: collections.Counter())
            skipped: dict[str, dict[str, Any]] = {}
            for f in gen.files(repo.name):
                entry = by_lang[f.language]
                entry[f.status] += 1
                entry["symbols"] += f.symbols
                if f.status == "skipped":  # which files were left out, and why (a few paths per reason)
                    group = skipped.setdefault(f.reason, {"count": 0, "paths": []})
                    group["count"] += 1
                    if len(group["paths"]) < _SKIPPED_PATHS_SHOWN:
                        group["paths"].append(f.path)
                entry["test"] += int(f.test)
            unresolved = collections.Counter(u.reason for u in gen.unresolved_in(repo.name))
            repos.append(
                {
                    "name": repo.name,
                    "root": repo.root,
                    "commit": repo.commit,
                    "branch": repo.branch,
                    "dirty": repo.dirty,
                    "files": repo.files,
                    "symbols": repo.symbols,
                    "languages": {lang: dict(v) for lang, v in sorted(by_lang.items())},
                    "analyses": [msgspec.structs.asdict(a) for a in repo.analyses],
                    "unresolved_by_reason": dict(sorted(unresolved.items())),
                    "skipped": dict(sorted(skipped.items())),
                }
            )
        return {
            "status": "ready",
            "generation": gen.name,
            "generation_id": m.id,
            "built_at": m.built_at,
            "format_version": m.format_version,
            "feature_version": m.feature_version,
            "counts": counts,
            "edges_by_kind": {e.key: e.count for e in breakdown.edges_by_kind},
            "edges_by_confidence": {e.key: e.count for e in breakdown.edges_by_confidence},
            "unresolved_by_reason": {e.key: e.count for e in breakdown.unresolved_by_reason},
            "symbols_by_language": {e.key: e.count for e in breakdown.symbols_by_language},
            "test_files": sum(st.get("test", 0) for r in repos for st in r["languages"].values()),
            "analyzers": m.analyzers,
            "repositories": repos,
        }


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
@config_option
@state_option
def status(as_json: bool, config_path: str | None, state_dir: str | None) -> None:
    """Show what the newest published generation holds, per repository and language."""
    layout = _layout(config_path, state_dir)
    payload = status_payload(layout)
    if as_json:
        click.echo(json.dumps(payload, indent=2))
        if payload["status"] in ("degraded", "unavailable"):
            raise SystemExit(EXIT_FAILURE)
        return
    if payload["status"] == "empty":
        click.echo(f"graph: empty (no generation in {payload['state_dir']}); run `kivgraph index`")
        return
    if payload["status"] == "unavailable":
        _fail(f"{payload['error']}; run `kivgraph index` to publish a good generation")
    if payload["status"] == "degraded":
        click.echo(
            f"warning: CURRENT ({payload['current_pointer']}) is not usable; servers answer from "
            f"{payload['generation']}: " + "; ".join(payload["refused"]),
            err=True,
        )
    c = payload["counts"]
    click.echo(f"graph: {payload['generation']} built {payload['built_at']} (format v{payload['format_version']})")
    click.echo(
        f"  repositories {c['repositories']}  files {c['files']} (partial files {c['partial_files']}, test files "
        f"{payload['test_files']})  symbols {c['symbols']}  edges {c['edges']}  unresolved {c['unresolved']}  "
        f"failed files {c['failed_files']}  skipped files {c['skipped_files']}"
    )
    if payload["edges_by_confidence"]:
        click.echo("  edges by confidence: " + ", ".join(f"{k} {v}" for k, v in payload["edges_by_confidence"].items()))
    for repo in payload["repositories"]:
        head = f"{repo['commit'][:12]}{' (dirty)' if repo['dirty'] else ''}" if repo["commit"] else "not a git checkout"
        click.echo(f"{repo['name']}: {repo['root']}  {head}")
        for lang, st in repo["languages"].items():
            click.echo(
                f"  {lang}: {st.get('indexed', 0)} indexed, {st.get('partial', 0)} partial, "
                f"{st.get('parse_failed', 0)} failed, "
                f"{st.get('skipped', 0)} skipped ({st.get('test', 0)} test files), {st.get('symbols', 0)} symbols"
            )
        for a in repo["analyses"]:
            click.echo(f"  {a['language']} analysis: {a['mode']}" + (f" ({a['reason']})" if a.get("reason") else ""))
        if repo["unresolved_by_reason"]:
            click.echo("  unresolved: " + ", ".join(f"{k} {v}" for k, v in repo["unresolved_by_reason"].items()))
        for reason, group in repo["skipped"].items():
            more = group["count"] - len(group["paths"])
            click.echo(
                f"  skipped {group['count']}, {reason}: "
                + ", ".join(group["paths"])
                + (f" and {more} more" if more else "")
            )
    if "fact_cache_damage" in payload:
        d = payload["fact_cache_damage"]
        click.echo(
            f"fact cache: found damaged at {d['found_at']} ({d['reason']}) and rebuilt from the sources; "
            f"the damaged copy is {d['moved_to']}"
        )
    if payload["status"] == "degraded":
        raise SystemExit(EXIT_FAILURE)


# --- version -------------------------------------------------------------------------------------


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Versions as JSON.")
def version(as_json: bool) -> None:
    """Print the kivgraph version and the generation format it writes and reads."""
    info = {
        "kivgraph": __version__,
        "format_version": FORMAT_VERSION,
        "feature_version": FEATURE_VERSION,
        "min_reader_version": MIN_READER_VERSION,
        "python": sys.version.split()[0],
    }
    if as_json:
        click.echo(json.dumps(info))
    else:
        click.echo(f"kivgraph {__version__} (generation format v{FORMAT_VERSION}, features v{FEATURE_VERSION})")


# --- doctor --------------------------------------------------------------------------------------


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Checks as JSON.")
@click.option("--deep", is_flag=True, help="Also recompute the current generation's content digest.")
@config_option
@state_option
def doctor(as_json: bool, deep: bool, config_path: str | None, state_dir: str | None) -> None:
    """Check Python, packages, analyzers, configuration and state; exit 1 when a check fails."""
    from indexer.doctor import run_checks

    layout = _layout(config_path, state_dir)
    checks = run_checks(layout, deep=deep)
    failed = any(c.status == "FAIL" for c in checks)
    if as_json:
        click.echo(json.dumps({"passed": not failed, "checks": [vars(c) for c in checks]}, indent=2))
    else:
        for c in checks:
            click.echo(f"{c.name}: {c.status}" + (f" ({c.detail})" if c.detail else ""))
        click.echo(f"doctor: {'FAIL' if failed else 'PASS'}")
    if failed:
        raise SystemExit(EXIT_FAILURE)
