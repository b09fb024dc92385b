"""A workspace's crate graph settled before rust-analyzer runs, with the real cargo and a registry on 127.0.0.1.

``dependencies.resolve`` is run on real Cargo workspaces against a crate
registry served by the test (tests/cargo_registry.py: cargo's sparse protocol,
real ``.crate`` tarballs): dependencies missing from the user's cargo cache
are fetched into kivgraph's own cargo home when the network is allowed, and
said so (which setting, or that the registry cannot be reached) when not; a
``[patch]`` to a registered provider that cargo would leave unused is fixed
by unlocking what pulls the other version, or reported. Nothing here runs
rust-analyzer (tests/test_rust_exact.py does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.languages.rust import cargo_shim, dependencies
from indexer.languages.rust import workspace as ws
from tests.cargo_registry import LocalRegistry, closed_port, write_replacement
from tests.helpers import write_repo

CARGO = shutil.which("cargo")
pytestmark = pytest.mark.skipif(CARGO is None, reason="no cargo on PATH: the crate graph cannot be resolved")


def _app(root: Path, deps: str) -> Path:
    return write_repo(
        root,
        {
            "Cargo.toml": f'[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{deps}',
            "src/lib.rs": "pub fn a() {}\n",
        },
    )


def _base(root: Path) -> Path:
    return write_repo(
        root,
        {
            "Cargo.toml": '[package]\nname = "base"\nversion = "1.0.0"\nedition = "2021"\n',
            "src/lib.rs": "pub fn b() {}\n",
        },
    )


@pytest.fixture()
def registry() -> Iterator[LocalRegistry]:
    reg = LocalRegistry()
    reg.add("base", "1.0.0")
    reg.add("base", "1.1.0")
    reg.add("mid", "1.0.0", {"base": "1.0"})
    reg.add("mid", "1.1.0", {"base": "1.1"})
    reg.add("leaf", "0.3.1")
    with reg:
        yield reg


def _cargo(tmp: Path, app: Path, patch: Path | None = None) -> dependencies.Cargo:
    assert CARGO is not None
    return dependencies.Cargo(
        Path(CARGO), app / "Cargo.toml", tmp / "scratch" / "lock" / "Cargo.lock", patch, time.monotonic() + 120
    )


def _locked(lock: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in tomllib.loads(lock.read_text()).get("package", []):
        out.setdefault(p["name"], []).append(p["version"] + ("" if "source" in p else " (path)"))
    return out


def _cached(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "registry" / "cache").glob("*/*.crate"))


def test_missing_dependencies_are_fetched_into_kivgraphs_cargo_home_when_the_network_is_allowed(
    tmp_path: Path, registry: LocalRegistry
) -> None:
    app = _app(tmp_path / "app", 'leaf = "0.3"\n')
    user, ours = registry.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
    before = sorted(p.name for p in app.iterdir())
    got = dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=True)
    assert got.missing == ""
    assert got.home == ours
    assert got.notes == [f"fetched 1 crate of its crate graph into kivgraph's cargo home {ours}"]
    assert _cached(ours) == ["leaf-0.3.1.crate"]
    assert _cached(user) == [], "nothing is written into the user's cargo home"
    assert (ours / "config.toml").read_text() == (user / "config.toml").read_text()  # the mirror applies there too
    assert sorted(p.name for p in app.iterdir()) == before, "no Cargo.lock written into the repository"
    assert _locked(got.lock) == {"app": ["0.1.0 (path)"], "leaf": ["0.3.1"]}
    # the next run finds them there, offline, without asking the registry again
    asked = len(registry.requests)
    again = dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=False)
    assert (again.home, again.missing, again.notes) == (ours, "", [])
    assert len(registry.requests) == asked


def test_without_the_network_it_says_which_setting_would_fetch_them_and_asks_nobody(
    tmp_path: Path, registry: LocalRegistry
) -> None:
    app = _app(tmp_path / "app", 'leaf = "0.3"\n')
    user, ours = registry.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
    got = dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=False)
    assert got.home == user
    assert "no matching package named `leaf` found" in got.missing
    assert "set `allow_network = true` under `[rust]` in kivgraph.toml" in got.missing
    assert str(ours) in got.missing
    assert registry.requests == [] and not ours.exists()


def test_a_broken_manifest_is_reported_as_it_is_and_nothing_is_fetched(tmp_path: Path, registry: LocalRegistry) -> None:
    app = _app(tmp_path / "app", 'nope = { path = "../nope" }\n')  # a path dependency that is not there
    user, ours = registry.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
    got = dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=True)
    assert got.missing.startswith("error:") and "allow_network" not in got.missing
    assert registry.requests == [] and not ours.exists()


def test_an_unreachable_registry_is_said_so_with_cargos_words(tmp_path: Path) -> None:
    app = _app(tmp_path / "app", 'leaf = "0.3"\n')
    user = write_replacement(tmp_path / "user", f"sparse+http://127.0.0.1:{closed_port()}/index/")
    ours = tmp_path / "state" / "cargo-home"
    got = dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=True)
    assert got.missing.startswith("the crate registry could not be reached to fetch the missing dependencies (")
    assert "Could not connect" in got.missing
    assert dependencies.unreachable(got.missing)
    assert not dependencies.unreachable("error: failed to select a version for the requirement `x = ^9`")


def _run_cargo(home: Path, app: Path, subcommand: str) -> None:
    """``cargo SUBCOMMAND`` on the consumer as its author did, with a cargo home of theirs."""
    subprocess.run(
        [CARGO or "cargo", subcommand, "--manifest-path", str(app / "Cargo.toml")],
        env={**os.environ, "CARGO_HOME": str(home)},
        check=True,
        capture_output=True,
        timeout=120,
    )


def _resolve_patched(
    tmp_path: Path, app: Path, base: Path, user: Path, lock: Path | None, *, allow_network: bool
) -> dependencies.Resolved:
    """``resolve`` of the consumer with its ``base`` patched to the registered checkout (base 1.0.0)."""
    return dependencies.resolve(
        _cargo(tmp_path, app, _patch(tmp_path, base)),
        user,
        tmp_path / "state" / "cargo-home",
        lock,
        {"base": ("base", "1.0.0", base)},
        allow_network=allow_network,
    )


def _stale_lock(tmp_path: Path, registry: LocalRegistry, app: Path) -> str:
    """The consumer's own Cargo.lock, made before the provider was registered: base 1.1.0, mid 1.1.0."""
    _run_cargo(registry.user_home(tmp_path / "elsewhere"), app, "generate-lockfile")
    assert _locked(app / "Cargo.lock") == {"app": ["0.1.0 (path)"], "base": ["1.1.0"], "mid": ["1.1.0"]}
    return (app / "Cargo.lock").read_text()


def _patch(tmp_path: Path, base: Path) -> Path:
    patch = tmp_path / "scratch" / "patch.toml"
    patch.parent.mkdir(parents=True, exist_ok=True)
    patch.write_text(f"[patch.crates-io]\nbase = {{ path = {json.dumps(str(base))} }}\n")
    return patch


def test_a_patch_cargo_would_leave_unused_is_fixed_by_unlocking_what_pulls_the_other_version(
    tmp_path: Path, registry: LocalRegistry
) -> None:
    app = _app(tmp_path / "app", 'base = "1"\nmid = "1"\n')
    base = _base(tmp_path / "base")
    locked = _stale_lock(tmp_path, registry, app)
    user, ours = registry.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
    cargo = _cargo(tmp_path, app, _patch(tmp_path, base))
    got = dependencies.resolve(
        cargo, user, ours, app / "Cargo.lock", {"base": ("base", "1.0.0", base)}, allow_network=True
    )
    assert got.missing == "" and got.unused == []
    assert got.notes[-1] == (
        "cargo would have left the patch to the registered base 1.0.0 unused (mid 1.1.0 requires base ^1.1): "
        "pinned mid 1.1.0 → 1.0.0 and released base 1.1.0 in the run's own lockfile, so that cargo uses the "
        "registered one (fetched into kivgraph's cargo home)"
    )
    assert _locked(got.lock) == {"app": ["0.1.0 (path)"], "base": ["1.0.0 (path)"], "mid": ["1.0.0"]}
    assert (app / "Cargo.lock").read_text() == locked, "the repository's own lockfile is left as it was"
    meta, error = cargo.metadata(got.home)
    assert meta is not None, error
    assert {(p["name"], p["version"], p["source"] is None) for p in meta["packages"]} == {  # type: ignore[union-attr]
        ("app", "0.1.0", True),
        ("base", "1.0.0", True),
        ("mid", "1.0.0", False),
    }


def test_without_the_network_an_unused_patch_is_reported_with_who_pulls_the_other_version(
    tmp_path: Path, registry: LocalRegistry
) -> None:
    app = _app(tmp_path / "app", 'base = "1"\nmid = "1"\n')
    base = _base(tmp_path / "base")
    _stale_lock(tmp_path, registry, app)
    user = registry.user_home(tmp_path / "user")
    # the stale graph is in the user's cache (its build fetched it), the older mid is not
    shutil.copytree(tmp_path / "elsewhere", user, dirs_exist_ok=True)
    _run_cargo(user, app, "fetch")
    got = _resolve_patched(tmp_path, app, base, user, app / "Cargo.lock", allow_network=False)
    assert got.missing == "" and got.home == user
    (unused,) = got.unused
    assert (unused.package, unused.provider, unused.provider_version, unused.used_version) == (
        "base",
        "base",
        "1.0.0",
        "1.1.0",
    )
    assert unused.why == (
        "mid 1.1.0 requires base ^1.1; an older release of what requires it accepts the registered one, but the "
        "network is off for Rust"
    )


def test_a_patch_the_workspace_itself_rules_out_stays_unused_and_is_reported(
    tmp_path: Path, registry: LocalRegistry
) -> None:
    app = _app(tmp_path / "app", 'base = "1.1"\n')
    base = _base(tmp_path / "base")
    got = _resolve_patched(tmp_path, app, base, registry.user_home(tmp_path / "user"), None, allow_network=True)
    assert got.missing == ""
    assert [(u.package, u.used_version, u.why) for u in got.unused] == [
        ("base", "1.1.0", "app 0.1.0 requires base ^1.1")
    ]


def test_a_newer_release_of_a_dependency_that_pins_the_patched_crate_is_pinned_back(tmp_path: Path) -> None:
    # serde_bytes 0.11.19 requires serde ^1.0.220 for `cfg(any())`, a platform that never is (serde's way to
    # keep serde and serde_core in step): locked so, the patch to a registered serde 1.0.219 goes unused, and
    # only the release before it accepts the registered one
    reg = LocalRegistry()
    reg.add("base", "1.0.0")
    reg.add("base", "1.1.0")
    reg.add("shim", "0.1.0", {"base": "1.0"})
    reg.add("shim", "0.1.1", {"base": "1.1"}, targets={"base": "cfg(any())"})
    app = _app(tmp_path / "app", 'base = "1"\nshim = "0.1"\n')
    base = _base(tmp_path / "base")
    with reg:
        _run_cargo(reg.user_home(tmp_path / "elsewhere"), app, "generate-lockfile")
        assert _locked(app / "Cargo.lock") == {"app": ["0.1.0 (path)"], "base": ["1.1.0"], "shim": ["0.1.1"]}
        got = _resolve_patched(
            tmp_path, app, base, reg.user_home(tmp_path / "user"), app / "Cargo.lock", allow_network=True
        )
    assert got.missing == "" and got.unused == []
    assert "(shim 0.1.1 requires base ^1.1): pinned shim 0.1.1 → 0.1.0 and released base 1.1.0" in got.notes[-1]
    assert _locked(got.lock) == {"app": ["0.1.0 (path)"], "base": ["1.0.0 (path)"], "shim": ["0.1.0"]}


@pytest.mark.parametrize(
    ("req", "version", "accepts"),
    [
        ("^1.0.220", "1.0.219", False),
        ("^1.0.220", "1.0.229", True),
        ("1.0.63", "1.0.219", True),
        ("^0.11", "0.12.0", False),
        ("~1.2", "1.2.9", True),
        ("~1.2", "1.3.0", False),
        ("=1.0.228", "1.0.228", True),
        ("=1.0.228", "1.0.229", False),
        (">=1.0, <1.0.200", "1.0.199", True),
        (">=1.0, <1.0.200", "1.0.200", False),
        ("1.*", "1.9.0", True),
        ("*", "0.0.1", True),
        ("^0.0.3", "0.0.4", False),
        ("^1", "2.0.0", False),
        ("nonsense", "1.0.0", False),
    ],
)
def test_version_requirements_are_read_the_way_cargo_reads_them(req: str, version: str, accepts: bool) -> None:
    assert dependencies.req_matches(req, version) is accepts


def test_a_registry_copy_of_another_major_version_is_no_unused_patch() -> None:
    assert dependencies.compatible("1.0.215", "1.0.228") and dependencies.compatible("0.3.1", "0.3.9")
    assert not dependencies.compatible("0.3.1", "0.4.0") and not dependencies.compatible("1.0.0", "2.0.0")
    assert not dependencies.compatible("0.0.1", "0.0.2")


def test_the_shim_hands_the_runs_lockfile_and_home_to_workspace_calls_and_the_standard_library_its_own(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real-cargo"
    real.write_text('#!/bin/sh\necho "home=$CARGO_HOME"\n')
    real.chmod(0o755)
    ours_lock = tmp_path / "run" / "Cargo.lock"
    ours_lock.parent.mkdir()
    ours_lock.write_text("# the run's graph\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "KIVGRAPH_CARGO_REAL": str(real),
        "KIVGRAPH_CARGO_REAL_HOME": str(tmp_path / "user-home"),
        "KIVGRAPH_CARGO_WORKSPACE_HOME": str(tmp_path / "kivgraph-home"),
        "KIVGRAPH_CARGO_SYSROOT_HOME": str(tmp_path / "std-home"),
        "KIVGRAPH_CARGO_LOCK": str(ours_lock),
    }

    def call(manifest: str, lock: Path) -> str:
        args = ["metadata", "--manifest-path", manifest, "--lockfile-path", str(lock)]
        proc = subprocess.run(
            [sys.executable, "-I", cargo_shim.__file__, *args], env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    ra_lock = tmp_path / "ra" / "Cargo.lock"
    ra_lock.parent.mkdir()
    ra_lock.write_text("# rust-analyzer's copy of the repository's lockfile\n")
    assert call("/r/Cargo.toml", ra_lock) == f"home={tmp_path / 'kivgraph-home'}"
    assert ra_lock.read_text() == "# the run's graph\n"
    std_lock = tmp_path / "std" / "Cargo.lock"
    std_lock.parent.mkdir()
    std_lock.write_text("# rust-src's lockfile\n")
    sysroot = "/rs/lib/rustlib/src/rust/library/Cargo.toml"
    assert call(sysroot, std_lock) == f"home={tmp_path / 'std-home'}"
    assert std_lock.read_text() == "# rust-src's lockfile\n"
    assert cargo_shim.is_sysroot(sysroot) and not cargo_shim.is_sysroot("/r/Cargo.toml")


def test_index_entries_are_read_from_cargos_index_cache(tmp_path: Path, registry: LocalRegistry) -> None:
    app = _app(tmp_path / "app", 'mid = "1"\n')
    user, ours = registry.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
    assert dependencies.resolve(_cargo(tmp_path, app), user, ours, None, {}, allow_network=True).missing == ""
    entries = dependencies.index_entries([ours], "mid")
    assert sorted((e["vers"], e["deps"][0]["req"]) for e in entries) == [("1.0.0", "1.0"), ("1.1.0", "1.1")]  # type: ignore[index]
    assert dependencies.index_entries([ours, user], "nothing-like-it") == []


def test_the_config_key_lets_rust_reach_the_registry(tmp_path: Path) -> None:
    from indexer import config

    path = tmp_path / "kivgraph.toml"
    path.write_text("version = 1\n\n[rust]\nallow_network = true\n")
    loaded = config.load(path)
    assert loaded.allows_network("rust") and not loaded.allows_network("go")
    assert "[rust]\nallow_network = true" in config.render(loaded.raw)
    path.write_text("version = 1\n\n[rust]\nallow_netwrok = true\n")
    with pytest.raises(config.ConfigError, match=r"unknown key 'rust\.allow_netwrok'"):
        config.load(path)
    assert not config.load(tmp_path / "none.toml", missing_ok=True).allows_network("rust")
    assert Path("rust", "cargo-home") == ws.OWN_CARGO_HOME


def test_the_standard_librarys_dependencies_are_fetched_into_kivgraphs_home_where_setup_did_not_run(
    tmp_path: Path,
) -> None:
    from indexer.languages.rust import toolchain

    machine = ws.real_cargo_home()
    if toolchain.sysroot_library() is None or not list((machine / "registry" / "cache").glob("*/rand_xorshift-*")):
        pytest.skip("no rust-src, or setup has not put the standard library's dependencies in this machine's cache")
    with LocalRegistry(mirror=machine) as reg:  # serves this machine's cached crates, nothing from outside
        user, ours = reg.user_home(tmp_path / "user"), tmp_path / "state" / "cargo-home"
        offline = dependencies.sysroot_home(user, ours, allow_network=False)
        assert offline == (user, "")  # nothing to be had: rust-analyzer will say SYSROOT_NOT_LOADED
        home, note = dependencies.sysroot_home(user, ours, allow_network=True)
        assert home == ours
        assert note == f"fetched the standard library's dependencies into kivgraph's cargo home {ours}"
        assert any(name.startswith("rand_xorshift-") for name in _cached(ours)) and _cached(user) == []
        dependencies._SYSROOT_HOMES.clear()
        assert dependencies.sysroot_home(user, ours, allow_network=False) == (ours, "")  # found there next time


# -- with rust-analyzer, through the real CLI: a machine nobody prepared ------------------------------------


def _registry_with_mid() -> LocalRegistry:
    reg = LocalRegistry(mirror=ws.real_cargo_home())  # the standard library's crates from this machine's cache
    reg.add("base", "1.0.0", lib="pub fn b() -> u32 {\n    1\n}\n")
    reg.add("base", "1.1.0", lib="pub fn b() -> u32 {\n    2\n}\n")
    reg.add("mid", "1.0.0", {"base": "1.0"}, lib="pub fn m() -> u32 {\n    base::b()\n}\n")
    reg.add("mid", "1.1.0", {"base": "1.1"}, lib="pub fn m() -> u32 {\n    base::b()\n}\n")
    return reg


def _indexed_on_a_fresh_machine(tmp_path: Path, app_deps: str) -> tuple[Path, Path, str, Path]:
    """A provider (base 1.0.0) and a consumer whose lockfile was made before base was registered, both
    registered with the network allowed and indexed with an empty cargo home whose registry is the test's;
    (kivgraph home, the consumer, its lockfile as it was, the user's cargo home)."""
    from tests.helpers import run_kivgraph
    from tests.test_rust_exact import _built

    missing = _built()
    if missing:
        pytest.skip(missing)
    base = write_repo(
        tmp_path / "base",
        {
            "Cargo.toml": '[package]\nname = "base"\nversion = "1.0.0"\nedition = "2021"\n',
            "src/lib.rs": "pub fn b() -> u32 {\n    1\n}\n",
        },
    )
    app = _app(tmp_path / "app", app_deps)
    (app / "src" / "lib.rs").write_text("pub fn a() -> u32 {\n    base::b() + mid::m()\n}\n")
    home = tmp_path / "home"
    with _registry_with_mid() as reg:
        locked = _stale_lock(tmp_path, reg, app)
        user = reg.user_home(tmp_path / "user")
        assert (
            run_kivgraph(home, "init", str(base), str(app), "--languages", "rust", CARGO_HOME=str(user)).returncode == 0
        )
        with open(home / "kivgraph.toml", "a", encoding="utf-8") as config:
            config.write("\n[rust]\nallow_network = true\n")
        result = run_kivgraph(home, "index", "--json", timeout=900, CARGO_HOME=str(user))
        assert result.returncode == 0, result.stderr
    return home, app, locked, user


def _rust_reason(gen: object, repository: str) -> str:
    (repo,) = [r for r in gen.repositories() if r.name == repository]  # type: ignore[attr-defined]
    (analysis,) = [a for a in repo.analyses if a.language == "rust"]
    assert analysis.mode == "exact", analysis.reason
    return str(analysis.reason)


def test_on_a_fresh_machine_the_consumer_binds_to_the_registered_provider_after_fetch_and_pin(tmp_path: Path) -> None:
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import open_current
    from snapshot_format.vocab import Confidence

    home, app, locked, user = _indexed_on_a_fresh_machine(tmp_path, 'base = "1"\nmid = "1"\n')
    assert (app / "Cargo.lock").read_text() == locked
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        reason = _rust_reason(gen, "app")
        assert "fetched" in reason and "into kivgraph's cargo home" in reason
        assert "pinned mid 1.1.0 → 1.0.0 and released base 1.1.0" in reason
        (a,) = gen.symbols_by_qualified_name("app::a")
        (b,) = gen.symbols_by_qualified_name("base::b", repository="base")
        assert (b.key, Confidence.EXACT_TYPECHECKED) in {(e.target, e.confidence) for e in gen.edges_out(a.key)}
        reasons = {u.reason for u in gen.unresolved_in("app")}
        assert not reasons & {"CRATE_PATCH_NOT_USED", "CRATE_VERSION_MISMATCH", "DEPENDENCIES_NOT_LOADED"}
    assert _cached(user) == [], "the user's cargo home is never written"


def test_a_patch_that_stays_unused_is_a_blind_spot_on_the_providers_answers(tmp_path: Path) -> None:
    from server.tools.references import find_references
    from server.tools.traversal import get_blast_radius
    from snapshot_format.layout import StateLayout
    from snapshot_format.reader import open_current

    home, _app_root, _locked, _user = _indexed_on_a_fresh_machine(tmp_path, 'base = "1.1"\nmid = "1"\n')
    with open_current(StateLayout(home / "kivgraph.toml", home / "state")) as gen:
        assert (
            "cargo did not use the patch to the registered base (base 1.0.0): app 0.1.0 requires base ^1.1"
            in _rust_reason(gen, "app")
        )
        rows = [u for u in gen.unresolved_in("app") if u.reason == "CRATE_PATCH_NOT_USED"]
        assert {(u.path, u.line, u.name) for u in rows if u.path} >= {("src/lib.rs", 2, "b")}
        selector = {"qualified_name": "base::b", "in_repository": "base", "view": "full"}
        refs = find_references(gen, selector)
        assert "CRATE_PATCH_NOT_USED" in refs["results"].get("unbound", {}), refs["results"]
        assert refs["coverage"]["unresolved_related"] >= 1
        blast = get_blast_radius(gen, selector)
        assert blast["completeness"]["verdict"] == "LOWER_BOUND", blast["completeness"]
        spots = blast["completeness"]["blind_spots"]
        assert any(s["reason"] == "CRATE_PATCH_NOT_USED" for s in spots), spots
