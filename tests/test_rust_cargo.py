"""What the exact Rust pass gives rust-analyzer and reads back, without running it.

The cargo shim's rewrite, the Cargo workspaces of a repository, the
``[patch]`` table for registered providers, and the naming of a provider's
declarations under rust-analyzer's symbols (tests/test_rust_exact.py runs the
real thing).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from indexer.languages.rust import cargo_shim, monikers
from indexer.languages.rust import workspace as ws
from indexer.languages.rust.monikers import ImplKey, ItemKey
from tests.helpers import write_repo
from tests.rust_corpus import build_rust_corpus


def test_the_lockfile_flag_cargo_dropped_becomes_its_setting_right_after_the_subcommand() -> None:
    args, lock = cargo_shim.rewrite(
        [
            "metadata",
            "--format-version",
            "1",
            "--manifest-path",
            "/r/Cargo.toml",
            "--lockfile-path",
            "/tmp/ra-1/Cargo.lock",
            "-Zunstable-options",
        ],
        "/s/patch.toml",
    )
    assert lock == "/tmp/ra-1/Cargo.lock"
    assert args == [
        "metadata",
        "-Zlockfile-path",
        "--config",
        'resolver.lockfile-path="/tmp/ra-1/Cargo.lock"',
        "--config",
        "/s/patch.toml",
        "--format-version",
        "1",
        "--manifest-path",
        "/r/Cargo.toml",
        "-Zunstable-options",
    ]


def test_options_before_the_subcommand_are_skipped_and_a_bare_cargo_call_is_left_alone() -> None:
    args, _ = cargo_shim.rewrite(["-Z", "unstable-options", "config", "get", "--format", "toml"], "/p.toml")
    assert args == ["-Z", "unstable-options", "config", "--config", "/p.toml", "get", "--format", "toml"]
    assert cargo_shim.rewrite(["--version"], "/p.toml") == (["--version"], "")
    assert cargo_shim.rewrite(["check", "--lockfile-path=/l/Cargo.lock"])[0] == [
        "check",
        "-Zlockfile-path",
        "--config",
        'resolver.lockfile-path="/l/Cargo.lock"',
    ]


def test_the_shim_runs_the_real_cargo_offline_in_the_users_cargo_home_and_logs_the_call(tmp_path: Path) -> None:
    real = tmp_path / "real-cargo"
    real.write_text(
        '#!/bin/sh\necho "home=$CARGO_HOME offline=$CARGO_NET_OFFLINE args=$*"\n'
        'echo "error: no matching package named \\`nope\\` found" >&2\nexit 7\n'
    )
    real.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    env = {
        "PATH": "/usr/bin:/bin",
        "CARGO_HOME": str(tmp_path / "ours"),
        "KIVGRAPH_CARGO_REAL": str(real),
        "KIVGRAPH_CARGO_REAL_HOME": str(tmp_path / "user-home"),
        "KIVGRAPH_CARGO_LOG": str(log),
    }
    proc = subprocess.run(
        [sys.executable, "-I", cargo_shim.__file__, "metadata", "--lockfile-path", "/t/Cargo.lock"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 7
    assert proc.stdout.strip() == (
        f"home={tmp_path / 'user-home'} offline=true args=metadata -Zlockfile-path "
        '--config resolver.lockfile-path="/t/Cargo.lock"'
    )
    assert "no matching package" in proc.stderr
    (call,) = ws.read_calls(log)
    assert call.subcommand == "metadata" and call.code == 7
    assert call.error() == "error: no matching package named `nope` found"


def test_a_failed_metadata_of_the_workspace_or_of_the_standard_library_is_told_apart(tmp_path: Path) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text("")
    sysroot = "/rs/lib/rustlib/src/rust/library/Cargo.toml"
    calls = [
        ws.CargoCall(("metadata", "--no-deps", "--manifest-path", str(manifest)), 0, ()),
        ws.CargoCall(("metadata", "--manifest-path", sysroot), 101, ("error: no matching package named `rand`",)),
        ws.CargoCall(("metadata", "--manifest-path", str(manifest)), 101, ("warning: x", "error: offline: `y`")),
        ws.CargoCall(("check", "--manifest-path", "/elsewhere/Cargo.toml"), 101, ("error: other",)),
    ]
    problems = ws.load_problems(calls, manifest)
    assert problems == ws.LoadProblems(
        dependencies="error: offline: `y`", build_scripts="", sysroot="error: no matching package named `rand`"
    )


def _toml(text: str) -> str:
    tomllib.loads(text)  # the fixture itself must be valid TOML
    return text


def test_workspaces_are_a_workspace_root_or_each_package_in_none(tmp_path: Path) -> None:
    root = write_repo(
        tmp_path / "repo",
        {
            "Cargo.toml": _toml('[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/out"]\n'),
            "crates/a/Cargo.toml": _toml('[package]\nname = "a"\nversion = "0.1.0"\n'),
            "crates/a/src/lib.rs": "",
            "crates/b/Cargo.toml": _toml('[package]\nname = "b-kit"\nversion = "0.2.0"\n[lib]\nname = "bk"\n'),
            "crates/b/src/lib.rs": "",
            "crates/out/Cargo.toml": _toml('[package]\nname = "out"\nversion = "1.0.0"\n'),
            "crates/out/src/main.rs": "",
            "loose.rs": "",
        },
    )
    found = ws.workspaces(root, ["crates/a/src/lib.rs", "crates/b/src/lib.rs", "crates/out/src/main.rs", "loose.rs"])
    assert [(w.directory, [(p.directory, p.name, p.version, p.lib_name) for p in w.packages]) for w in found] == [
        ("", [("crates/a", "a", "0.1.0", "a"), ("crates/b", "b-kit", "0.2.0", "bk")]),
        ("crates/out", [("crates/out", "out", "1.0.0", "out")]),
    ]


def test_registry_dependencies_are_patched_to_the_one_registered_provider(tmp_path: Path) -> None:
    app = write_repo(
        tmp_path / "app",
        {
            "Cargo.toml": _toml(
                '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\ngeo-kit = "0.1"\n'
                'renamed = { version = "1", package = "shared" }\nlocal = { path = "../local" }\n'
                'git-dep = { git = "https://example.invalid/x" }\n\n[dev-dependencies]\ntwice = "1"\n'
            ),
            "src/main.rs": "fn main() {}\n",
        },
    )
    files = {"src/lib.rs": "pub fn f() {}\n"}
    geo = write_repo(tmp_path / "geo", {"Cargo.toml": '[package]\nname = "geo-kit"\nversion = "0.1.3"\n', **files})
    one = write_repo(tmp_path / "one", {"Cargo.toml": '[package]\nname = "twice"\nversion = "1.0.0"\n', **files})
    two = write_repo(tmp_path / "two", {"Cargo.toml": '[package]\nname = "twice"\nversion = "1.0.1"\n', **files})
    built = build_rust_corpus([("app", app), ("geo", geo), ("one", one), ("two", two)])
    (space,) = ws.workspaces(app, ["src/main.rs"])
    wanted = ws.registry_dependencies(app, space)
    assert wanted == {"geo-kit", "shared", "twice"}
    patches = ws.Providers.of(built.corpus).patches("app", wanted)
    assert sorted(patches) == ["geo-kit"]  # `twice` has two providers: nobody provides it
    table = tomllib.loads(ws.patch_config(patches))
    assert table == {"patch": {"crates-io": {"geo-kit": {"path": str(geo.resolve())}}}}


def test_the_shim_stub_is_written_into_the_state_directory_only_when_it_changed(tmp_path: Path) -> None:
    home = ws.cargo_home(tmp_path)
    stub = home / "bin" / "cargo"
    assert home == tmp_path / "rust" / "cargo-home"
    text, mtime = stub.read_text(), stub.stat().st_mtime_ns
    assert cargo_shim.__file__ in text and sys.executable in text
    assert ws.cargo_home(tmp_path) == home and stub.stat().st_mtime_ns == mtime


# -- rust-analyzer's names of a provider's declarations ------------------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "key"),
    [
        ("rust-analyzer cargo serde 1.0.215 crate/", ItemKey((), (), "/")),
        ("rust-analyzer cargo serde 1.0.215 de/value/", ItemKey(("de", "value"), (), "/")),
        ("rust-analyzer cargo serde 1.0.215 de/Visitor#visit_str().", ItemKey(("de",), ("Visitor", "visit_str"), "()")),
        ("rust-analyzer cargo serde 1.0.215 de/Unexpected#Bool#", ItemKey(("de",), ("Unexpected", "Bool"), "#")),
        (
            "rust-analyzer cargo serde 1.0.215 macros/forward_to_deserialize_any!",
            ItemKey(("macros",), ("forward_to_deserialize_any",), "!"),
        ),
        (
            "rust-analyzer cargo serde 1.0.215 de/value/impl#[`MapDeserializer<'de, I, E>`][`Deserializer<'de>`]"
            "deserialize_any().",
            ImplKey(("de", "value"), "MapDeserializer", "Deserializer", "deserialize_any", "()"),
        ),
        ("rust-analyzer cargo a 0.1.0 impl#[Meters]new().", ImplKey((), "Meters", "", "new", "()")),
        ("rust-analyzer cargo a 0.1.0 impl#[`&'a str`][Tr]Item#", ImplKey((), "str", "Tr", "Item", "#")),
        ("rust-analyzer cargo a 0.1.0 impl#[Meters]", None),
    ],
)
def test_a_symbol_is_read_as_module_path_members_or_impl(symbol: str, key: object) -> None:
    parsed = monikers.parse(symbol)
    assert parsed is not None
    assert monikers.key_of_descriptors(parsed.descriptors) == key


def test_a_providers_declarations_are_named_the_way_rust_analyzer_names_them(tmp_path: Path) -> None:
    root = write_repo(
        tmp_path / "lib",
        {
            "Cargo.toml": '[package]\nname = "geo-kit"\nversion = "0.1.0"\n',
            "src/lib.rs": (
                '#[macro_use]\nmod macros;\npub mod shapes;\n#[path = "private/mod.rs"]\npub mod __private;\n'
                "pub mod inline {\n    pub fn deep() {}\n}\n"
            ),
            "src/macros.rs": "#[macro_export]\nmacro_rules! twice { ($e:expr) => { $e * 2 }; }\n",
            "src/shapes.rs": (
                "pub trait Area {\n    fn area(&self) -> u64;\n}\n\npub struct Rect {\n    pub w: u64,\n}\n\n"
                "impl Rect {\n    pub fn new() -> Rect { Rect { w: 0 } }\n}\n\n"
                "impl Area for Rect {\n    fn area(&self) -> u64 { self.w }\n}\n"
            ),
            "src/private/mod.rs": "pub fn hidden() {}\n",
            "tests/t.rs": "pub fn not_the_library() {}\n",
        },
    )
    built = build_rust_corpus([("lib", root)])
    (repo,) = built.corpus.repositories
    files = monikers.files_of_package(root, repo.files, "")
    table = monikers.table(files, "src/lib.rs", monikers.declarations_by_kind(repo.files))
    named = {key: decl.qualified_name for key, _path, decl in monikers.iter_keys(table)}

    def qn(symbol: str) -> list[str]:
        parsed = monikers.parse(f"rust-analyzer cargo geo-kit 0.1.0 {symbol}")
        assert parsed is not None
        key = monikers.key_of_descriptors(parsed.descriptors)
        assert key is not None
        return [d.qualified_name for _p, d in table.lookup(key)]

    assert qn("crate/") == ["geo_kit"]
    assert qn("shapes/Area#area().") == ["geo_kit::shapes::Area::area"]
    assert qn("shapes/Rect#w.") == ["geo_kit::shapes::Rect::w"]
    assert qn("shapes/impl#[Rect]new().") == ["geo_kit::shapes::Rect::new"]
    assert qn("shapes/impl#[Rect][Area]area().") == ["geo_kit::shapes::Rect::<Area>::area"]
    assert qn("shapes/impl#[_][Area]area().") == ["geo_kit::shapes::Rect::<Area>::area"]
    assert qn("macros/twice!") == ["geo_kit::twice"]  # exported to the crate root, named where it is defined
    assert qn("__private/hidden().") == ["geo_kit::private::hidden"]  # the #[path] module's own name
    assert qn("inline/deep().") == ["geo_kit::inline::deep"]
    assert not any("not_the_library" in v for v in named.values())  # a test crate is no part of the library
    assert json.dumps(sorted(map(str, named)))  # every key prints (no unhashable parts)
