"""The exact Go adapter: our go/types helper in batch per repository, bound to the graph's keys.

The helper (``helper/main.go``, standard library only) is built once with the
local toolchain into ``$KIVGRAPH_CACHE/analyzers/kivgraph-gotypes-<source
hash>/`` (rebuilt when its source changes) and run once per repository:
``go list -deps -test`` then go/types over every package (test variants and external
test packages included, so ``_test.go`` files are exact too) in one fresh universe. It
prints each resolved identifier with its enclosing declaration, its
syntactic class (call, callback, assign, return, type, embed, ref) and its
target as (import path, qualified name, kind), plus type-level and
method-level IMPLEMENTS from ``types.Implements`` and
``types.LookupFieldOrMethod``. Generic declarations are paired too
(``helper/generic.go``: the method signatures are unified, the instantiations
found checked by go/types); a pair it cannot decide is an ``undecided`` use,
bound here as a ``DISPATCH_UNDECIDED`` row on the type or method (never an
edge), so the answers about both sides say they may miss that dispatch. A
call of a method of an interface literal (a constraint such as ``[C
interface{ Get(string) int }]``, a type assertion) binds to no declaration:
an ``UNNAMED_INTERFACE_METHOD`` row named by the method, so every method of
that name is a LOWER_BOUND with the call as its blind spot.

Interfaces outside the graph (``helper/external.go``: the standard library's, the
universe's ``error``, a module no registered repository provides) have no
declaration to bind to, so the helper pairs the module's types with them too: each
implementing method is an ``EXTERNAL_IMPLEMENTS`` row naming the interface method,
each use written against such a method an ``EXTERNAL_INTERFACE_CALL`` (or ``_VALUE``)
row named the same way, and the server joins the two into dispatch rows. Where the
module converts a value of its type to such an interface, an ``EXTERNAL_CONVERSION``
row at that site names the method code outside the graph may then call (a blind spot).

Hermetic: ``GOPROXY=off``, ``GOFLAGS=-mod=readonly``, ``GOTOOLCHAIN=local``,
``CGO_ENABLED=0``. When the repository's go.mod requires a module another
registered repository provides, a ``go.work`` using both is written in the
state directory (``<state>/go/workspaces/``), never in a repository, so the
consumer type-checks against the provider's registered source.

Binding: a target's import path maps to the one registered repository whose
module path is its longest prefix, and the declaration is looked up there by
package (its import path), qualified name and kind: exactly the key the provider
publishes for itself. Standard-library targets settle the site with no edge
(a method of one of their interfaces: a row, as above).
A missing ``go`` (``$KIVGRAPH_GO`` points elsewhere), a failed build, a failed
``go list`` or a timeout raise ``AnalyzerFailed``: the repository stays on
the CANDIDATE fallback with the reason in status and doctor.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

import msgspec

from indexer import children
from indexer.corpus import Corpus, RepositoryFacts
from indexer.facts import UnresolvedFact
from indexer.languages.go import sites as S
from indexer.languages.go.modules import LANGUAGE, module_qualified_name
from indexer.languages.go.resolve import ModuleRegistry, read_module_path
from indexer.languages.npm_tool import cache_root
from indexer.languages.spec import AnalyzerFailed, ExactOutcome
from indexer.scip.route import Binding, BoundTarget, ProviderHooks, bind_foreign
from snapshot_format.layout import resolve_layout
from snapshot_format.vocab import (
    DISPATCH_UNDECIDED,
    EXTERNAL_CONVERSION,
    EXTERNAL_IMPLEMENTS,
    EXTERNAL_INTERFACE_CALL,
    EXTERNAL_INTERFACE_VALUE,
    EdgeKind,
    Provenance,
    outside_name,
)

ANALYZER = "go/types"
HELPER_NAME = "kivgraph-gotypes"
ADAPTER_VERSION = "go-types-bind-6"  # part of the cache key: bump on any change to the facts below
GO_ENV = "KIVGRAPH_GO"
HELPER_DIR = Path(__file__).parent / "helper"

# -- toolchain and helper --------------------------------------------------------------------------


def go_executable() -> Path:
    """The go command: ``$KIVGRAPH_GO`` when set, else ``go`` on PATH."""
    override = os.environ.get(GO_ENV)
    found = override or shutil.which("go")
    if not found or not Path(found).is_file():
        where = f"{GO_ENV}={override}" if override else "PATH"
        raise AnalyzerFailed(f"go toolchain not found ({where}): Go stays on tree-sitter CANDIDATE edges")
    return Path(found)


def helper_source_hash() -> str:
    h = hashlib.blake2b(digest_size=8)
    for path in sorted(HELPER_DIR.glob("*")):
        if path.suffix in (".go", ".mod"):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def executable() -> Path:
    """Where the helper built from the current source lives (outside every repository)."""
    return cache_root() / "analyzers" / f"{HELPER_NAME}-{helper_source_hash()}" / HELPER_NAME


def _go_env(extra: Mapping[str, str] = ()) -> dict[str, str]:  # type: ignore[assignment]
    env = dict(os.environ)
    env.pop(GO_ENV, None)
    env.update(
        {"GOPROXY": "off", "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOWORK": "off"}
    )
    env.update(extra)
    return env


OWN_MODULE_CACHE = Path("go") / "modcache"  # under the state directory
NOT_FETCHED = "set allow_network = true under [go] to fetch it from the module proxy into kivgraph's module cache"


@functools.cache
def _user_go_env() -> tuple[str, str]:
    """The user's own module cache and proxy list (``go env``), read once."""
    try:
        proc = subprocess.run(
            [str(go_executable()), "env", "GOMODCACHE", "GOPROXY"],
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != GO_ENV},
        )
        modcache, proxy = ([*proc.stdout.splitlines(), "", ""])[:2]
    except (OSError, subprocess.TimeoutExpired, AnalyzerFailed):
        modcache, proxy = "", ""
    return modcache.strip(), proxy.strip()


def network_env() -> dict[str, str]:
    """``[go] allow_network``: the module proxy may be asked for what the module cache lacks.

    Modules go into kivgraph's own module cache (never the user's); the user's cache is read first, as a
    ``file://`` proxy, so nothing it holds is fetched again. ``direct`` (version control) is left out of the
    proxy list: only the module proxy is asked. No checksum database is consulted: ``-mod=readonly`` refuses
    any module ``go.sum`` does not list, and the go command checks every module against ``go.sum``.
    """
    modcache, user_proxy = _user_go_env()
    proxies = [p for p in user_proxy.replace("|", ",").split(",") if p and p not in ("direct", "off")]
    if modcache:
        proxies.insert(0, Path(modcache, "cache", "download").as_uri())
    proxies = proxies if len(proxies) > (1 if modcache else 0) else [*proxies, "https://proxy.golang.org"]
    own = resolve_layout().state_dir / OWN_MODULE_CACHE
    own.mkdir(parents=True, exist_ok=True)
    return {
        "GOPROXY": ",".join(proxies),
        "GOMODCACHE": str(own),
        "GOSUMDB": "off",
        "GOFLAGS": "-mod=readonly -modcacherw",
    }


def build_helper(timeout: float = 300) -> Path:
    """Build the helper with the local toolchain unless this source's build exists; returns its path."""
    exe = executable()
    if exe.exists():
        return exe
    go = go_executable()
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{HELPER_NAME}.{os.getpid()}")
    try:
        proc = subprocess.run(
            [str(go), "build", "-trimpath", "-o", str(tmp), "."],
            cwd=HELPER_DIR,
            env=_go_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerFailed(f"building {HELPER_NAME} failed: {exc}") from None
    if proc.returncode != 0 or not tmp.exists():
        raise AnalyzerFailed(f"building {HELPER_NAME} failed: {_tail(proc.stderr or proc.stdout)}")
    os.replace(tmp, exe)
    return exe


def install() -> str:
    """Build the helper into the cache (setup); a one-line status."""
    try:
        exe = executable()
        existed = exe.exists()
        build_helper()
        return f"{HELPER_NAME} ({ANALYZER}): {'already built' if existed else 'built'} in {exe.parent}"
    except AnalyzerFailed as exc:
        return f"{HELPER_NAME} ({ANALYZER}): NOT built ({exc})"


def identity() -> str:
    """What the cache key knows of the analyzer: the go binary (path, size, mtime) and the helper source."""
    go = go_executable()
    st = go.resolve().stat()
    return f"{ANALYZER}|{go.resolve()}|{st.st_size}|{st.st_mtime_ns}|{helper_source_hash()}"


def version(timeout: float = 60) -> str:
    """``go version`` of the toolchain the helper is built and run with."""
    go = go_executable()
    try:
        proc = subprocess.run(
            [str(go), "env", "GOVERSION"], capture_output=True, text=True, timeout=timeout, env=_go_env()
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerFailed(f"go env GOVERSION failed: {exc}") from None
    if proc.returncode != 0:
        raise AnalyzerFailed(f"go env GOVERSION exited {proc.returncode}: {_tail(proc.stderr)}")
    return f"{HELPER_NAME} on {proc.stdout.strip()}"


def _tail(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text[-n:] if text else "no output"


# -- running ---------------------------------------------------------------------------------------


class GoUse(msgspec.Struct, array_like=True, frozen=True):
    path: str  # repository-relative
    line: int
    col: int
    source_qn: str  # "" = the file's module symbol
    source_kind: str
    # call | callback | assign | return | type | embed | ref | implements | undecided | unnamed | local | converted
    use: str
    package: str = ""  # the target's import path ("builtin" for the universe's error.Error)
    qualified_name: str = ""
    kind: str = ""
    standard: bool = False
    # undecided: why go/types could not tell whether the source implements the target; converted: the sentence
    detail: str = ""
    interface: bool = False  # the target is a method of a named interface
    # implements / undecided of a registered provider's type with this module's interface: the provider's name
    # (``path`` is then relative to its root); "" for this repository
    repository: str = ""


class GoPackageProblem(msgspec.Struct, array_like=True, frozen=True):
    package: str
    reason: str  # PACKAGE_NOT_LOADED (a package of this repository) | MODULE_NOT_LOADED (a dependency)
    detail: str


class RepositoryGoFacts(msgspec.Struct, frozen=True):
    """The helper's output for one repository, relative paths, ready for the fact cache."""

    analyzer_version: str
    uses: tuple[GoUse, ...] = ()
    problems: tuple[GoPackageProblem, ...] = ()
    packages: int = 0
    type_errors: int = 0
    workspace: str = ""
    # (package as go list names it, type errors) of each target package whose bodies were checked
    package_errors: tuple[tuple[str, int], ...] = ()
    # A bundle build (``Corpus.installed``): the modules required from the module cache, and the uses a second run
    # found about them with each one a module of the workspace (its types paired with this module's interfaces).
    # ``uses`` are the run with each one outside, as ``kivgraph index`` sees a module no repository provides;
    # binding takes a module's uses from the second run once a registered repository provides it (``_linked``).
    installed_modules: tuple[str, ...] = ()
    installed_uses: tuple[GoUse, ...] = ()
    # Every exported declaration of the repository's packages as go/types prints it, with its type ("import
    # path<TAB>declaration"): what an importer can see of it (``GoTypesAdapter.interface``).
    exports: tuple[str, ...] = ()


def workspace_dir() -> Path:
    """Where synthetic go.work files live: the state directory, never a repository."""
    return resolve_layout().state_dir / "go" / "workspaces"


def _requirements(root: Path) -> tuple[str, list[str]]:
    """(go version, required module paths) of a go.mod."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", []
    go_version, required, in_block = "", [], False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if in_block:
            if line == ")":
                in_block = False
            else:
                required.append(line.split()[0])
            continue
        parts = line.split()
        if parts[0] == "go" and len(parts) > 1:
            go_version = parts[1]
        elif parts[0] == "require":
            if parts[1:] == ["("]:
                in_block = True
            elif len(parts) > 1:
                required.append(parts[1])
    return go_version, required


def _workspace(
    repo: RepositoryFacts, corpus: Corpus, registry: ModuleRegistry, *, installed: bool = False
) -> Path | None:
    """A go.work in the state directory using this repository and the registered providers it requires (with
    ``installed``, also the module cache's copy of each other module it requires)."""
    root = Path(repo.root).resolve()
    go_version, required = _requirements(root)
    uses: list[Path] = []
    versions = [go_version] if go_version else []
    for other in corpus.repositories:
        mod = registry.module_of.get(other.name)
        if other.name == repo.name or not mod or len(registry.providers.get(mod, [])) != 1:
            continue
        if mod in required:
            other_root = Path(other.root).resolve()
            uses.append(other_root)
            v, _ = _requirements(other_root)
            if v:
                versions.append(v)
    if installed:
        # A bundle build: each required module as the module cache holds it is a module of the workspace, so
        # go/types pairs its types with this module's interfaces as it does a registered provider's (the
        # pairing is recorded under the module's identity and bound to its repository when bundles are linked).
        for where, name in sorted(installed_modules(root).items()):
            module = name[len(INSTALLED_MODULE) :]
            if len(registry.providers.get(module, [])) != 1:
                uses.append(where)
    if not uses:
        return None
    top = max(versions, key=lambda v: tuple(int(p) if p.isdigit() else 0 for p in v.split("."))) if versions else ""
    body = (f"go {top}\n\n" if top else "") + "use (\n" + "".join(f"\t{p}\n" for p in [root, *uses]) + ")\n"
    digest = hashlib.blake2b(body.encode(), digest_size=6).hexdigest()
    target = workspace_dir() / f"{repo.name}-{digest}" / "go.work"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or target.read_text() != body:
        target.write_text(body)
    return target


def run_helper(
    root: Path,
    *,
    timeout: float,
    gowork: Path | None = None,
    emit: list[Path] | None = None,
    allow_network: bool = False,
) -> dict[str, object]:
    """Run the helper over the module at ``root``; its decoded JSON output.

    With ``emit``, only the packages in those directories are printed with their uses (the others are
    type-checked without function bodies, so IMPLEMENTS is still computed over the whole module).
    """
    go = go_executable()
    exe = build_helper()
    env = _go_env({**({"GOWORK": str(gowork)} if gowork else {}), **(network_env() if allow_network else {})})
    cmd = [str(exe), "-go", str(go), "-dir", str(root), "-target", str(root)]
    with contextlib.ExitStack() as stack:
        if emit is not None:
            listing = stack.enter_context(tempfile.NamedTemporaryFile("w", suffix=".emit", delete=False))
            listing.write("".join(f"{d}\n" for d in emit))
            listing.close()
            stack.callback(os.unlink, listing.name)
            cmd += ["-emit", listing.name]
        return _run([*cmd, "./..."], root, env, timeout)


def _run(cmd: list[str], root: Path, env: dict[str, str], timeout: float) -> dict[str, object]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            with children.spawned(cmd, cwd=root, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL) as proc:
                code = proc.wait(timeout=timeout)
        except OSError as exc:
            raise AnalyzerFailed(f"{HELPER_NAME} could not start: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AnalyzerFailed(f"{HELPER_NAME} timed out after {timeout:g}s") from None
        err.seek(0)
        if code != 0:
            raise AnalyzerFailed(f"{HELPER_NAME} exited {code}: {_tail(err.read().decode(errors='replace'))}")
        out.seek(0)
        try:
            return json.loads(out.read())
        except ValueError as exc:
            raise AnalyzerFailed(f"{HELPER_NAME} printed unreadable output: {exc}") from None


def module_roots(repo: RepositoryFacts) -> list[Path]:
    """The modules owning the repository's Go files: for each file, the nearest go.mod at or under the root."""
    root = Path(repo.root).resolve()
    owner: dict[Path, Path | None] = {}

    def module_of(directory: Path) -> Path | None:
        if directory not in owner:
            if (directory / "go.mod").is_file():
                owner[directory] = directory
            elif directory == root or root not in directory.parents:
                owner[directory] = None
            else:
                owner[directory] = module_of(directory.parent)
        return owner[directory]

    found = {module_of((root / ff.path).parent) for ff in repo.files}
    return sorted(m for m in found if m is not None)


def analyze_repository(repo: RepositoryFacts, corpus: Corpus, *, timeout: float) -> RepositoryGoFacts:
    """Type-check every module of one repository (the root one with registered providers in a state-dir workspace).

    ``./...`` never crosses into a nested module, so each module is loaded on its own; a nested module
    that cannot be loaded is reported as a MODULE_NOT_LOADED problem while the others still count.
    """
    root = Path(repo.root).resolve()
    roots = module_roots(repo)
    if not roots:
        raise AnalyzerFailed(f"no go.mod at or under {root}: the module cannot be loaded (MODULE_NOT_LOADED)")
    parts: list[RepositoryGoFacts] = []
    failed: list[GoPackageProblem] = []
    workspace = ""
    for module_root in roots:
        gowork = _workspace(repo, corpus, ModuleRegistry(corpus)) if module_root == root else None
        try:
            raw = run_helper(module_root, timeout=timeout, gowork=gowork, allow_network=corpus.allow_network)
        except AnalyzerFailed as exc:
            if len(roots) == 1:
                raise
            where = module_root.relative_to(root).as_posix() or "."
            failed.append(GoPackageProblem(where, "MODULE_NOT_LOADED", str(exc)[:300]))
            continue
        if gowork:
            workspace = str(gowork)
        parts.append(facts_from_output(raw, root, providers=provider_roots(repo, corpus), network=corpus.allow_network))
    if not parts:
        raise AnalyzerFailed("no module of the repository could be loaded: " + "; ".join(p.detail for p in failed))
    linked: tuple[tuple[str, ...], tuple[GoUse, ...]] = ((), ())
    if corpus.installed and root in roots:
        linked = _installed_run(repo, corpus, root, timeout)
    return RepositoryGoFacts(
        analyzer_version=parts[0].analyzer_version,
        uses=tuple(u for p in parts for u in p.uses),
        problems=tuple(pr for p in parts for pr in p.problems) + tuple(failed),
        packages=sum(p.packages for p in parts),
        type_errors=sum(p.type_errors for p in parts),
        workspace=workspace,
        package_errors=tuple(sorted(e for p in parts for e in p.package_errors)),
        installed_modules=linked[0],
        installed_uses=linked[1],
        exports=tuple(sorted({e for p in parts for e in p.exports})),
    )


def _installed_run(
    repo: RepositoryFacts, corpus: Corpus, root: Path, timeout: float
) -> tuple[tuple[str, ...], tuple[GoUse, ...]]:
    """The required modules of the module cache, and the uses about them of a run with each one a module of the
    workspace (none when no required module is in the module cache or that run fails)."""
    found = installed_modules(root)
    modules = tuple(sorted(name[len(INSTALLED_MODULE) :] for name in found.values()))
    gowork = _workspace(repo, corpus, ModuleRegistry(corpus), installed=True) if modules else None
    if gowork is None:
        return modules, ()
    try:
        raw = run_helper(root, timeout=timeout, gowork=gowork, allow_network=corpus.allow_network)
    except AnalyzerFailed:
        return modules, ()
    facts = facts_from_output(
        raw, root, providers=provider_roots(repo, corpus, installed=True), network=corpus.allow_network
    )
    return modules, tuple(u for u in facts.uses if _concern(u, modules))


def _concern(u: GoUse, modules: Collection[str]) -> str:
    """The required module a use is about: the one its type lives in, or its target's; "" for none of them."""
    if u.repository.startswith(INSTALLED_MODULE):
        return u.repository[len(INSTALLED_MODULE) :]
    best = ""
    for m in modules:
        if u.use == "converted":  # the use names this module's method; the interface is in the sentence
            about = f" through {m}." in u.detail or f" through {m}/" in u.detail
        else:
            about = u.package == m or u.package.startswith(m + "/")
        if about and len(m) > len(best):
            best = m
    return best


def _linked(facts: RepositoryGoFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> list[GoUse]:
    """The uses to bind: a required module a registered repository provides is seen as ``kivgraph index`` sees a
    registered provider (the second run's uses about it, each type recorded under the module's identity given
    to that repository), every other one as outside the graph (the first run's)."""
    if not facts.installed_modules:
        return list(facts.uses)
    provided = {m for m in facts.installed_modules if len(modules.registry.provider(m)[1]) == 1}
    if not provided:
        return list(facts.uses)
    uses = [u for u in facts.uses if _concern(u, facts.installed_modules) not in provided]
    for u in facts.installed_uses:
        if _concern(u, facts.installed_modules) in provided:
            owner, at = (
                _installed_owner(u.repository, u.path, corpus, modules)
                if u.repository.startswith(INSTALLED_MODULE)
                else (u.repository, u.path)
            )
            uses.append(msgspec.structs.replace(u, repository=owner, path=at))
    return sorted(uses, key=use_order)


def provider_roots(repo: RepositoryFacts, corpus: Corpus, *, installed: bool = False) -> dict[Path, str]:
    """The roots of the other registered repositories (whose types the helper pairs with this module's
    interfaces when it loads them), resolved, by name; with ``corpus.installed`` (a bundle build) also each
    required module's directory in the module cache, named by its identity (``INSTALLED_MODULE`` + module path)
    so that linking gives a pairing with a provider's type to the repository that provides the module."""
    out = {Path(r.root).resolve(): r.name for r in corpus.repositories if r.name != repo.name}
    if installed:
        out.update(installed_modules(Path(repo.root)))
    return out


INSTALLED_MODULE = "go-module:"  # GoUse.repository of a module cache file: the module's identity, bound at link time


def _escaped(module: str) -> str:
    """A module path as the module cache spells it (an upper-case letter is "!" and the lower-case one)."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module)


def installed_modules(root: Path) -> dict[Path, str]:
    """The directories in the module cache of the modules ``root``'s go.mod requires, by identity."""
    from indexer.languages.go.identities import go_requirements

    cache = os.environ.get("GOMODCACHE") or _user_go_env()[0]
    if not cache:
        return {}
    out: dict[Path, str] = {}
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    for module, version in go_requirements(text):
        where = Path(cache) / f"{_escaped(module)}@{version}"
        if where.is_dir():
            out[where.resolve()] = f"{INSTALLED_MODULE}{module}"
    return out


def _installed_owner(owner: str, path: str, corpus: Corpus, modules: ModuleTable) -> tuple[str, str]:
    """(repository, repository-relative path) of a module cache file recorded by module identity: the one
    registered repository providing the module, else the identity unchanged (nothing binds to it)."""
    module = owner[len(INSTALLED_MODULE) :]
    _mod, providers, _rest = modules.registry.provider(module)
    if len(providers) != 1:
        return owner, path
    (provider,) = providers
    for r in corpus.repositories:
        if r.name != provider:
            continue
        for ff in r.files:  # where the module's directory is in the repository (nested modules)
            if ff.package == module or ff.package.startswith(module + "/"):
                sub = ff.package[len(module) :].strip("/")
                directory = ff.path.rpartition("/")[0]
                if sub and not directory.endswith(sub):
                    continue
                prefix = directory[: len(directory) - len(sub)].strip("/")
                return provider, f"{prefix}/{path}" if prefix else path
    return provider, path


def _owner(path: Path, root: Path, providers: Mapping[Path, str]) -> tuple[str, str] | None:
    """(repository, relative path) of a file the helper printed: "" for the analysed one, else a provider's."""
    for base, name in ((root, ""), *providers.items()):
        try:
            return name, path.relative_to(base).as_posix()
        except ValueError:
            continue
    return None


def facts_from_output(
    raw: dict[str, object],
    root: Path,
    workspace: str = "",
    *,
    providers: Mapping[Path, str] = {},
    network: bool = False,
) -> RepositoryGoFacts:
    """The helper's JSON as facts, with file paths relative to ``root`` (the repository's root); a type relation
    whose type lies in a provider (``providers``: other registered roots by name) keeps that provider's name."""
    files: list[tuple[str, str] | None] = [
        _owner(Path(f).resolve(), root, providers)
        for f in raw.get("files", [])  # type: ignore[union-attr]
    ]
    uses = []
    for u in raw.get("uses", []):  # type: ignore[union-attr]
        owner = files[u[0]]
        if owner is None or (owner[0] and u[5] not in ("implements", "undecided")):
            continue
        other, path = owner
        detail = str(u[10]) if len(u) > 10 else ""
        interface = len(u) > 11 and bool(u[11])
        uses.append(GoUse(path, u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], bool(u[9]), detail, interface, other))
    problems, n_packages, n_errors, errors = [], 0, 0, []
    for p in raw.get("packages", []):  # type: ignore[union-attr]
        if p.get("target"):
            n_packages += 1
            n_errors += p.get("type_error_count", 0)
            if p.get("emitted", True):
                errors.append((p["path"], p.get("type_error_count", 0)))
        if p.get("load_error"):
            reason = "PACKAGE_NOT_LOADED" if p.get("target") else "MODULE_NOT_LOADED"
            detail = " ".join(str(p["load_error"]).split())[:300]
            if reason == "MODULE_NOT_LOADED" and not network and "GOPROXY=off" in detail:
                detail = f"{detail}; {NOT_FETCHED}"  # the one way out of hermetic mode, named where it is needed
            problems.append(GoPackageProblem(p["path"], reason, detail))
    return RepositoryGoFacts(
        analyzer_version=f"{ANALYZER} {raw.get('go_version', '')}".strip(),
        uses=tuple(sorted(uses, key=use_order)),
        problems=tuple(problems),
        packages=n_packages,
        type_errors=n_errors,
        workspace=workspace,
        package_errors=tuple(sorted(errors)),
        exports=tuple(sorted(set(raw.get("exports") or ()))),  # type: ignore[arg-type]
    )


def use_order(u: GoUse) -> tuple[object, ...]:
    """One order for uses whichever packages a run printed: a partial run's merge equals a whole run."""
    return (
        u.repository,
        u.path,
        u.line,
        u.col,
        u.use,
        u.source_qn,
        u.source_kind,
        u.package,
        u.qualified_name,
        u.kind,
        u.standard,
    )


def cache_key(
    repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], analyzer_identity: str, allow_network: bool = False
) -> bytes:
    """Adapter, toolchain and helper identity + every Go file of the corpus + each module's go.mod/go.sum + whether
    the module proxy may be asked (a run that could not load a module may now)."""
    h = hashlib.blake2b(digest_size=20)
    for part in ("go", ADAPTER_VERSION, analyzer_identity, repo.name, repo.root, f"network={allow_network}"):
        h.update(part.encode() + b"\0")
    for module_root in module_roots(repo) or [Path(repo.root)]:
        for name in ("go.mod", "go.sum"):
            h.update(str(module_root).encode() + b"\0")
            try:
                h.update(hashlib.sha256((module_root / name).read_bytes()).digest())
            except OSError:
                h.update(b"-")
    for name in sorted(hashes):
        for path, digest in sorted(hashes[name].items()):
            h.update(f"{name}\0{path}\0{digest}\n".encode())
    return h.digest()


def reachable_hashes(
    repo: RepositoryFacts, hashes: Mapping[str, Mapping[str, str]], corpus: Corpus
) -> Mapping[str, Mapping[str, str]]:
    """The file hashes a repository's go/types run can read: its own, and those of the registered modules its
    imports reach, transitively (a provider's types that implement its interfaces come with them). An edit in
    a repository nothing of ``repo`` imports leaves ``repo``'s run cached (issue 24: an edit costs its
    repositories). Every repository's when a registered one has no module path to match imports against."""
    modules: dict[str, str] = {}  # module path -> repository
    for r in corpus.repositories:
        if not r.files:
            continue
        paths = [read_module_path(root) for root in module_roots(r) or [Path(r.root)]]
        if not all(paths):
            return hashes
        modules.update({path: r.name for path in paths})
    by_name = {r.name: r for r in corpus.repositories}

    def provider(import_path: str) -> str:
        found = ""
        for module in modules:
            if (import_path == module or import_path.startswith(module + "/")) and len(module) > len(found):
                found = module
        return modules.get(found, "")

    seen = {repo.name}
    todo = [repo]
    while todo:
        current = todo.pop()
        for ff in current.files:
            for site in ff.sites:
                if site.kind != S.IMPORT:
                    continue
                name = provider(site.name)
                if name and name not in seen and name in by_name:
                    seen.add(name)
                    todo.append(by_name[name])
    return {name: files for name, files in hashes.items() if name in seen}


def probe(timeout: float = 120) -> str:
    """Run the helper on a two-package module; a detail line, or AnalyzerFailed."""
    with tempfile.TemporaryDirectory(prefix="kivgraph-goprobe-") as tmp:
        root = Path(tmp)
        (root / "go.mod").write_text("module example.com/probe\n\ngo 1.21\n")
        (root / "a").mkdir()
        (root / "a" / "a.go").write_text("package a\n\nfunc Target() int { return 1 }\n")
        (root / "b").mkdir()
        (root / "b" / "b.go").write_text(
            'package b\n\nimport "example.com/probe/a"\n\nfunc Caller() int { return a.Target() }\n'
        )
        facts = facts_from_output(run_helper(root, timeout=timeout), root.resolve())
        for u in facts.uses:
            if (
                u.path == "b/b.go"
                and u.use == "call"
                and u.package == "example.com/probe/a"
                and u.qualified_name == "Target"
            ):
                return f"{facts.analyzer_version} resolved a cross-package call"
        raise AnalyzerFailed(f"{HELPER_NAME} ran but did not resolve the probe's cross-package call")


# -- bind ------------------------------------------------------------------------------------------


class ModuleTable:
    """Registered Go repositories: module paths, and declarations by (repository, package import path)."""

    def __init__(self, corpus: Corpus) -> None:
        self.registry = ModuleRegistry(corpus)
        self.declared: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
        for repo in corpus.repositories:
            for ff in repo.files:
                table = self.declared.setdefault((repo.name, ff.package), {})
                for s in ff.symbols:
                    table.setdefault((s.qualified_name, s.kind), ff.path)


_EDGES = {
    "call": (EdgeKind.CALLS_DIRECT, Provenance.GO_AST_CALL),
    "callback": (EdgeKind.PASSES_AS_CALLBACK, Provenance.GO_AST_CALLBACK),
    "assign": (EdgeKind.ASSIGNS_FUNCTION, Provenance.GO_AST_CALLBACK),
    "return": (EdgeKind.RETURNS_FUNCTION, Provenance.GO_AST_CALLBACK),
    "type": (EdgeKind.TYPE_USES, Provenance.GO_TYPES_USE),
    "embed": (EdgeKind.EMBEDS, Provenance.GO_TYPES_USE),
    "ref": (EdgeKind.REFERENCES, Provenance.GO_TYPES_USE),
    "implements": (EdgeKind.IMPLEMENTS, Provenance.GO_TYPES_DEF),
}


def bind(facts: RepositoryGoFacts, repo: str, corpus: Corpus, modules: ModuleTable) -> ExactOutcome:
    """EXACT_TYPECHECKED edges for every use whose target one registered repository declares."""
    out = ExactOutcome(repository=repo)
    bound = Binding(repo, corpus, out, GO_HOOKS, modules)
    for p in facts.problems:
        out.unresolved.append(
            UnresolvedFact(
                name=p.package, reason=p.reason, repository=repo, language=LANGUAGE, package=p.package, detail=p.detail
            )
        )
    for u in _linked(facts, repo, corpus, modules):
        owner = u.repository or repo  # a provider's type paired with this module's interface
        source_qn = u.source_qn or module_qualified_name(u.path)
        source = corpus.key_of(owner, u.path, source_qn, u.source_kind)
        if source is None:
            continue
        if u.use == "undecided":
            out.unresolved.append(_undecided(u, owner, source))
            continue
        if u.use == "unnamed":
            out.settle(source, u.path, u.line, u.col)
            out.unresolved.append(_unnamed(u, repo, source))
            continue
        if u.use == "converted":
            out.unresolved.append(_unresolved(u, repo, source, EXTERNAL_CONVERSION, u.detail))
            continue
        if u.use != "implements":
            out.settle(source, u.path, u.line, u.col)
        if u.use == "local":
            continue
        target = bind_foreign(GO_HOOKS, u, source, bound)
        if target is None or target.key is None:
            continue
        kind, provenance = _EDGES.get(u.use, _EDGES["ref"])
        if u.use == "callback" and u.kind not in ("func", "method"):
            kind, provenance = _EDGES["ref"]
        out.edge(kind, source, target.key, provenance, u.line, u.col, cross=target.repository != owner)
    return out


class GoHooks(ProviderHooks[GoUse]):
    """How a go/types use of another package binds (the SCIP route's ``bind_foreign``): one registered
    repository provides its module (the repository itself among them: a module two repositories hold is
    AMBIGUOUS_MODULE_PROVIDER even there), and declares it in the package the helper names. A relation
    (``implements``) that does not bind is no row."""

    language = LANGUAGE
    analyzer = ANALYZER
    prefer_own = False

    def providers(self, use: GoUse, modules: ModuleTable) -> list[tuple[str, str]]:
        return [] if use.standard else [(r, "") for r in modules.registry.provider(use.package)[1]]

    def unprovided(self, use: GoUse, source: str, bound: Binding) -> None:
        if use.interface or (use.use == "implements" and use.kind == "method"):
            # an interface outside the graph: its implementations and the uses written against it meet at
            # query time (vocab.EXTERNAL_RELATIONS)
            bound.out.unresolved.append(_outside(use, bound.repo, source))
        elif not use.standard and use.use != "implements":
            detail = f"no registered repository provides {use.package}"
            bound.out.unresolved.append(_unresolved(use, bound.repo, source, "MODULE_PROVIDER_NOT_FOUND", detail))

    def ambiguous(self, use: GoUse, source: str, repositories: list[str], bound: Binding) -> None:
        if use.use != "implements":
            module = bound.modules.registry.provider(use.package)[0]
            detail = f"{module} is provided by " + ", ".join(sorted(repositories))
            bound.out.unresolved.append(_unresolved(use, bound.repo, source, "AMBIGUOUS_MODULE_PROVIDER", detail))

    def declaration(self, use: GoUse, source: str, provider: tuple[str, str], bound: Binding) -> BoundTarget | None:
        modules: ModuleTable = bound.modules
        repository = provider[0]
        path = modules.declared.get((repository, use.package), {}).get((use.qualified_name, use.kind))
        target = bound.corpus.key_of(repository, path, use.qualified_name, use.kind) if path else None
        if target is None:
            if use.use != "implements":
                detail = (
                    f"go/types resolved {use.package}.{use.qualified_name}, which {repository} does not declare in "
                    "an indexed file"
                )
                bound.out.unresolved.append(_unresolved(use, bound.repo, source, "DECLARATION_NOT_RESOLVED", detail))
            return None
        return BoundTarget(repository, target, use.kind)


GO_HOOKS = GoHooks()


def _unresolved(u: GoUse, repo: str, source: str, reason: str, detail: str) -> UnresolvedFact:
    """The row of a use (or relation) that binds to no edge, at the use, naming its target."""
    return UnresolvedFact(
        name=u.qualified_name,
        reason=reason,
        repository=repo,
        path=u.path,
        line=u.line,
        col=u.col,
        language=LANGUAGE,
        source=source,
        package=u.package,
        detail=detail,
    )


def _outside(u: GoUse, repo: str, source: str) -> UnresolvedFact:
    """A relation to, or a use of, a method of an interface outside the graph, named by it (vocab.EXTERNAL_*)."""
    target = outside_name(u.package, u.qualified_name)
    where = "the standard library" if u.standard else f"{u.package}, which no registered repository provides"
    if u.use == "implements":
        return _unresolved(
            u,
            repo,
            source,
            EXTERNAL_IMPLEMENTS,
            f"{u.source_qn} implements {target} ({where}): the calls written against {target} in the registered "
            "repositories are dispatch callers of it; code outside the graph may call it through that interface too",
        )
    reason = EXTERNAL_INTERFACE_CALL if u.use == "call" else EXTERNAL_INTERFACE_VALUE
    return _unresolved(
        u,
        repo,
        source,
        reason,
        f"{target} is a method of an interface outside the graph ({where}): the use reaches the methods of the "
        "registered repositories that implement it (dispatch rows)",
    )


def _undecided(u: GoUse, repo: str, source: str) -> UnresolvedFact:
    """A relation go/types could not decide: recorded on the implementing side, naming the interface (member)."""
    owner = "type" if u.kind == "type" else "method"
    detail = (
        f"go/types could not decide whether {owner} {u.source_qn} implements {u.package}.{u.qualified_name}: "
        f"{u.detail or 'no reason given'}"
    )
    return _unresolved(u, repo, source, DISPATCH_UNDECIDED, detail)


def _unnamed(u: GoUse, repo: str, source: str) -> UnresolvedFact:
    """A use of a method of an interface literal: no declaration to bind, any type with the method may run."""
    detail = (
        f"{u.qualified_name} is a method of {u.detail}, an interface no declaration names: go/types binds the use "
        f"to no declared method, and any type with a method {u.qualified_name} of that signature may run"
    )
    return _unresolved(u, repo, source, "UNNAMED_INTERFACE_METHOD", detail)
