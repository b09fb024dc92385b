"""Rust extraction: qualified names, kinds, docs, module paths from Cargo.toml, sites, partial files."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.facts import SymbolFact
from indexer.languages.rust import extract, package_for, package_for_root
from indexer.languages.rust import sites as S
from indexer.languages.rust.modules import manifest_for

SOURCE = b"""//! The crate's shapes.

use std::fmt;
use crate::units::{self, Meter as M, scale::*};
pub use self::inner::deep;

/// A shape.
///
/// More text.
#[derive(Debug, Clone)]
pub struct Square {
    pub side: u32,
    len: u32,
}

pub enum Kind { Flat, Deep(u8), Named { label: String } }

pub union Bits { i: u32, f: f32 }

pub trait Area: fmt::Debug {
    type Unit;
    const SIDES: u32;
    fn area(&self) -> u32;
    fn twice(&self) -> u32 { self.area() * 2 }
}

impl Square {
    pub const MAX: u32 = 10;
    pub fn len(&self) -> u32 { self.len }
}

impl Area for Square {
    type Unit = u32;
    const SIDES: u32 = 4;
    fn area(&self) -> u32 { self.side * self.side }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "{}", helper(self.side)) }
}

impl From<u8> for Square {
    fn from(v: u8) -> Self { Square { side: v as u32, len: 0 } }
}

impl From<u16> for Square {
    fn from(v: u16) -> Self { Square { side: v as u32, len: 0 } }
}

impl<T: Area> Area for Wrapper<T> {
    type Unit = T::Unit;
    const SIDES: u32 = T::SIDES;
    fn area(&self) -> u32 { self.0.area() }
}

impl<T: fmt::Debug> Describe for T {
    fn describe(&self) -> String { format!("{:?}", self) }
}

pub struct Wrapper<T>(pub T);

pub trait Describe { fn describe(&self) -> String; }

mod inner {
    pub fn deep() {}
}

#[cfg(unix)]
pub fn platform() -> u32 { 1 }
#[cfg(not(unix))]
pub fn platform() -> u32 { 2 }

pub fn outer(shape: &dyn Area, items: Vec<Square>) -> u32 {
    fn helper(x: u32) -> u32 { x }
    struct Local;
    let sq = Square::from(3u8);
    let w = Wrapper(sq);
    for item in items.iter() {
        item.area();
    }
    shape.area() + w.0.side + helper(LIMIT)
}

pub const LIMIT: u32 = 3;
pub static NAME: &str = "x";
pub type Alias = Wrapper<Square>;

#[macro_export]
macro_rules! square { ($e:expr) => { $e * $e }; }
macro_rules! private_macro { () => {}; }
"""


def _symbols(package: str = "shapes::geo") -> dict[tuple[str, str], SymbolFact]:
    facts = extract("src/geo.rs", SOURCE, package)
    assert facts.status == "indexed", facts.reason
    return {(s.qualified_name, s.kind): s for s in facts.symbols}


def test_declarations_are_rust_paths_under_the_module_with_their_kinds() -> None:
    rows = set(_symbols())
    assert rows >= {
        ("shapes::geo", "module"),
        ("shapes::geo::Square", "struct"),
        ("shapes::geo::Square::side", "field"),
        ("shapes::geo::Kind", "enum"),
        ("shapes::geo::Kind::Flat", "enum_member"),
        ("shapes::geo::Kind::Named::label", "field"),
        ("shapes::geo::Bits", "union"),
        ("shapes::geo::Bits::f", "field"),
        ("shapes::geo::Area", "trait"),
        ("shapes::geo::Area::Unit", "associated_type"),
        ("shapes::geo::Area::SIDES", "const"),
        ("shapes::geo::Area::area", "method"),
        ("shapes::geo::Area::twice", "method"),
        ("shapes::geo::inner", "module"),
        ("shapes::geo::inner::deep", "function"),
        ("shapes::geo::LIMIT", "const"),
        ("shapes::geo::NAME", "static"),
        ("shapes::geo::Alias", "type_alias"),
        ("shapes::geo::private_macro", "macro"),
    }


def test_impl_members_belong_to_the_type_and_a_trait_impl_names_its_trait() -> None:
    rows = set(_symbols())
    assert rows >= {
        ("shapes::geo::Square::MAX", "const"),
        ("shapes::geo::Square::len", "method"),
        ("shapes::geo::Square::<Area>::Unit", "associated_type"),
        ("shapes::geo::Square::<Area>::area", "method"),
        ("shapes::geo::Square::<Display>::fmt", "method"),
        # two impls of one generic trait stay apart by the trait's arguments
        ("shapes::geo::Square::<From<u8>>::from", "method"),
        ("shapes::geo::Square::<From<u16>>::from", "method"),
        # a generic impl names the base type; a blanket impl has none and is named by its header
        ("shapes::geo::Wrapper::<Area>::area", "method"),
        ("shapes::geo::<impl Describe for T>::describe", "method"),
    }


def test_a_field_and_a_method_of_one_name_are_two_declarations_told_apart_by_kind() -> None:
    symbols = _symbols()
    assert ("shapes::geo::Square::len", "field") in symbols and ("shapes::geo::Square::len", "method") in symbols
    assert not any(qn.endswith("len#2") for qn, _ in symbols)


def test_cfg_alternatives_in_one_file_are_numbered_and_body_items_nest_under_their_function() -> None:
    rows = set(_symbols())
    assert {
        ("shapes::geo::platform", "function"),
        ("shapes::geo::platform#2", "function"),
        ("shapes::geo::outer::helper", "function"),
        ("shapes::geo::outer::Local", "struct"),
    } <= rows


def test_an_exported_macro_lives_at_the_crate_root() -> None:
    symbols = _symbols()
    exported = symbols[("shapes::square", "macro")]
    assert exported.exported and exported.container == ""
    assert not symbols[("shapes::geo::private_macro", "macro")].exported


def test_docs_signatures_containers_and_visibility() -> None:
    symbols = _symbols()
    square = symbols[("shapes::geo::Square", "struct")]
    assert square.doc == "A shape."  # attributes between doc and item are skipped
    assert square.signature == "pub struct Square" and square.exported
    assert symbols[("shapes::geo", "module")].doc == "The crate's shapes."
    area = symbols[("shapes::geo::Square::<Area>::area", "method")]
    assert area.signature == "fn area(&self) -> u32"
    assert area.container == "shapes::geo::Square"
    assert symbols[("shapes::geo::Area::area", "method")].container == "shapes::geo::Area"
    assert not symbols[("shapes::geo::Square::len", "field")].exported
    assert symbols[("shapes::geo::Square::side", "field")].exported
    assert symbols[("shapes::geo::Alias", "type_alias")].signature == "pub type Alias = Wrapper<Square>"


def test_use_trees_become_one_site_per_leaf_with_its_full_path() -> None:
    facts = extract("src/geo.rs", SOURCE, "shapes::geo")
    uses = [(s.name, s.extra[1], s.extra[2], s.extra[3]) for s in facts.sites if s.kind == S.USE]
    assert uses == [
        ("fmt", "std::fmt", "", ""),
        ("units", "crate::units", "", ""),  # ``self`` in a group is the module itself
        ("Meter", "crate::units::Meter", "M", ""),
        ("*", "crate::units::scale", "", ""),
        ("deep", "self::inner::deep", "", "pub"),
    ]


def test_receivers_carry_what_the_syntax_says_about_their_type() -> None:
    facts = extract("src/geo.rs", SOURCE, "shapes::geo")
    calls = {(s.name, s.line): s.extra for s in facts.sites if s.kind == S.CALL and s.extra[2] == S.RECV}
    line = SOURCE.decode().splitlines().index("    shape.area() + w.0.side + helper(LIMIT)") + 1
    assert calls[("area", line)][3] == "bound:Area"  # &dyn Area
    item_line = SOURCE.decode().splitlines().index("        item.area();") + 1
    assert calls[("area", item_line)][3] == ""  # a loop variable: unknown, never guessed
    twice = next(s for s in facts.sites if s.kind == S.CALL and s.enclosing == "shapes::geo::Area::twice")
    assert twice.extra[3] == "bound:Area"  # self in a provided method
    # a local built by a call keeps the call, for the resolver to read the callee's declared return type
    bindings = {s.extra[3] for s in facts.sites if s.name == "side" and s.kind == S.FIELD}
    assert "type:Square" in bindings


def test_calls_inside_macro_arguments_are_kept_as_blind_spots() -> None:
    facts = extract("src/geo.rs", SOURCE, "shapes::geo")
    hidden = {(s.name, s.extra[0]) for s in facts.sites if s.kind == S.MACRO_ARG}
    assert ("helper", "write") in hidden  # write!(f, "{}", helper(..))
    assert not any(name == "f" for name, _ in hidden)  # a parameter is local: no blind spot
    assert not any(s.kind == S.CALL and s.name == "helper" and s.enclosing.endswith("fmt") for s in facts.sites)


def test_locals_and_type_parameters_are_never_sites() -> None:
    facts = extract("src/geo.rs", SOURCE, "shapes::geo")
    names = {
        s.name
        for s in facts.sites
        if s.kind in (S.REF, S.TYPE, S.CALL, S.CALLBACK) and s.extra[2] == S.PATH and not s.extra[1]
    }
    assert not names & {"sq", "w", "item", "items", "shape", "T", "v"}
    assert {"Square", "LIMIT", "helper", "Wrapper"} <= names


def test_a_syntax_error_makes_the_file_partial_and_keeps_the_rest() -> None:
    source = b"pub fn good() -> u32 { 1 }\n\npub fn broken(a: u32 -> u32 {\n    a\n}\n\npub struct After;\n"
    facts = extract("src/bad.rs", source, "c::bad")
    assert facts.status == "partial" and "line 3" in facts.reason
    rows = {(s.qualified_name, s.kind) for s in facts.symbols}
    assert {("c::bad::good", "function"), ("c::bad::After", "struct"), ("c::bad", "module")} <= rows
    assert ("c::bad::broken", "function") not in rows
    assert any(name == "broken" for name, _line, _col in facts.unparsed)


def _crate(root: Path, directory: str, toml: str) -> None:
    (root / directory).mkdir(parents=True, exist_ok=True)
    (root / directory / "Cargo.toml").write_text(toml)


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("src/lib.rs", "geo_kit"),
        ("src/main.rs", "geo_kit"),
        ("src/shapes.rs", "geo_kit::shapes"),
        ("src/shapes/mod.rs", "geo_kit::shapes"),
        ("src/shapes/round/circle.rs", "geo_kit::shapes::round::circle"),
        ("src/bin/tool.rs", "tool"),
        ("src/bin/tool/main.rs", "tool"),
        ("src/bin/tool/args.rs", "tool::args"),
        ("tests/integration.rs", "integration"),
        ("tests/common/mod.rs", "common"),
        ("examples/demo.rs", "demo"),
        ("build.rs", "build_script_build"),
    ],
)
def test_the_package_is_the_module_path_from_cargo_toml(tmp_path: Path, path: str, module: str) -> None:
    _crate(tmp_path, "", '[package]\nname = "geo-kit"\nversion = "0.1.0"\n')
    assert package_for_root(tmp_path, path, frozenset()) == module


def test_a_lib_name_and_a_workspace_member_name_their_crates(tmp_path: Path) -> None:
    _crate(tmp_path, "", '[workspace]\nmembers = ["crates/*"]\n')
    _crate(
        tmp_path,
        "crates/core",
        '[package]\nname = "kit-core"\n\n[lib]\nname = "kitcore"\npath = "lib.rs"\n'
        '\n[dependencies]\nserde-json = "1"\n\n[dev-dependencies]\nitoa = "1"\n',
    )
    assert package_for_root(tmp_path, "crates/core/lib.rs", frozenset()) == "kitcore"
    assert package_for_root(tmp_path, "crates/core/util.rs", frozenset()) == "kitcore::util"
    manifest = manifest_for(tmp_path, "crates/core/lib.rs")
    assert manifest is not None and manifest.dependencies == {"serde_json", "itoa"}


def test_without_a_manifest_the_crate_is_named_after_the_directory_holding_src(tmp_path: Path) -> None:
    assert package_for_root(tmp_path, "my-crate/src/a/b.rs", frozenset()) == "my_crate::a::b"
    assert package_for("src/lib.rs", frozenset()) == "crate"
    assert package_for("src/a/mod.rs", frozenset()) == "crate::a"
