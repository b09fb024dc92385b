"""The Rust join on a SCIP index written here, byte by byte: symbols rust-analyzer gives to two definitions.

rust-analyzer names an impl's members after the impl's self type and trait as
they print, so ``impl de::Error for Error { fn custom }`` and
``impl ser::Error for Error { fn custom }`` share
``error/impl#[Error][Error]custom().`` (it warns "Duplicate symbol"). The index
below is what it writes for such a file (the same occurrences, encoded as SCIP
wire bytes and read back by the real decoder); the join must bind a use that
names the trait to that trait's impl and label every other use ambiguous, never
binding it to one of the two. tests/annotated/rust_exact/duplicate_symbols.rs.txt
runs the same case through the real rust-analyzer.
"""

from __future__ import annotations

from pathlib import Path

from indexer.exact_pass import ExactPass, merge
from indexer.facts import UnresolvedFact
from indexer.languages.rust import analyzer
from indexer.languages.rust import workspace as ws
from indexer.languages.rust.resolve import resolve as resolve_rust
from indexer.scip.decode import decode_index
from snapshot_format.vocab import Confidence, EdgeKind
from tests.helpers import write_repo
from tests.rust_corpus import build_rust_corpus

PKG = "rust-analyzer cargo main 0.1.0 "
DUP = PKG + "error/impl#[Error][Error]custom()."

FILES = {
    "Cargo.toml": '[package]\nname = "main"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub mod de;\npub mod error;\npub mod ser;\n",
    "src/de.rs": "pub trait Error: Sized {\n    fn custom(msg: &str) -> Self;\n}\n",
    "src/ser.rs": "pub trait Error: Sized {\n    fn custom(msg: &str) -> Self;\n}\n",
    "src/error.rs": (
        "use crate::{de, ser};\n"
        "\n"
        "pub struct Error;\n"
        "\n"
        "impl de::Error for Error {\n"
        "    fn custom(_msg: &str) -> Self {\n"
        "        Error\n"
        "    }\n"
        "}\n"
        "\n"
        "impl ser::Error for Error {\n"
        "    fn custom(msg: &str) -> Self {\n"
        "        de::Error::custom(msg)\n"
        "    }\n"
        "}\n"
        "\n"
        "pub fn from_ser(msg: &str) -> Error {\n"
        "    <Error as ser::Error>::custom(msg)\n"
        "}\n"
        "\n"
        "pub fn by_type_path(msg: &str) -> Error {\n"
        "    Error::custom(msg)\n"
        "}\n"
    ),
}

# (path, line, token, its n-th occurrence on the line, symbol, definition?) as rust-analyzer 0.0.320 writes them
OCCURRENCES = [
    ("src/de.rs", 0, "Error", 1, "de/Error#", True),
    ("src/de.rs", 1, "custom", 1, "de/Error#custom().", True),
    ("src/ser.rs", 0, "Error", 1, "ser/Error#", True),
    ("src/ser.rs", 1, "custom", 1, "ser/Error#custom().", True),
    ("src/error.rs", 2, "Error", 1, "error/Error#", True),
    ("src/error.rs", 4, "de", 1, "de/", False),
    ("src/error.rs", 4, "Error", 1, "de/Error#", False),
    ("src/error.rs", 4, "Error", 2, "error/Error#", False),
    ("src/error.rs", 5, "custom", 1, "error/impl#[Error][Error]custom().", True),
    ("src/error.rs", 6, "Error", 1, "error/Error#", False),
    ("src/error.rs", 10, "ser", 1, "ser/", False),
    ("src/error.rs", 10, "Error", 1, "ser/Error#", False),
    ("src/error.rs", 10, "Error", 2, "error/Error#", False),
    ("src/error.rs", 11, "custom", 1, "error/impl#[Error][Error]custom().", True),
    ("src/error.rs", 12, "de", 1, "de/", False),
    ("src/error.rs", 12, "Error", 1, "de/Error#", False),
    ("src/error.rs", 12, "custom", 1, "error/impl#[Error][Error]custom().", False),
    ("src/error.rs", 16, "from_ser", 1, "error/from_ser().", True),
    ("src/error.rs", 16, "Error", 1, "error/Error#", False),
    ("src/error.rs", 17, "Error", 1, "error/Error#", False),
    ("src/error.rs", 17, "ser", 1, "ser/", False),
    ("src/error.rs", 17, "Error", 2, "ser/Error#", False),
    ("src/error.rs", 17, "custom", 1, "error/impl#[Error][Error]custom().", False),
    ("src/error.rs", 20, "by_type_path", 1, "error/by_type_path().", True),
    ("src/error.rs", 20, "Error", 1, "error/Error#", False),
    ("src/error.rs", 21, "Error", 1, "error/Error#", False),
    ("src/error.rs", 21, "custom", 1, "error/impl#[Error][Error]custom().", False),
]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _column(text: str, token: str, nth: int) -> int:
    at = -1
    for _ in range(nth):
        while True:
            at = text.index(token, at + 1)
            before = text[at - 1] if at else " "
            after = text[at + len(token)] if at + len(token) < len(text) else " "
            if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
                break
    return at


def _index() -> bytes:
    """The SCIP wire bytes of the index: one document per file, its occurrences (symbol roles 1 = definition)."""
    docs = b""
    for path in ("src/lib.rs", "src/de.rs", "src/ser.rs", "src/error.rs"):
        lines = FILES[path].split("\n")
        module = "crate/" if path == "src/lib.rs" else Path(path).stem + "/"
        occ = _field(1, b"".join(_varint(v) for v in (0, 0, len(lines) - 1, 0))) + _field(2, (PKG + module).encode())
        body = _field(2, occ + _varint(3 << 3) + _varint(1))
        for p, line, token, nth, symbol, definition in OCCURRENCES:
            if p != path:
                continue
            col = _column(lines[line], token, nth)
            rng = _field(1, b"".join(_varint(v) for v in (line, col, col + len(token))))
            roles = _varint(3 << 3) + _varint(1) if definition else b""
            body += _field(2, rng + _field(2, (PKG + symbol).encode()) + roles)
        docs += _field(2, _field(1, path.encode()) + _field(4, b"rust") + body)
    return docs


def _joined(
    tmp_path: Path,
) -> tuple[analyzer.RepositoryRustFacts, list[tuple[str, str, str, str, int]], list[UnresolvedFact]]:
    root = write_repo(tmp_path / "main", FILES)
    built = build_rust_corpus([("main", root)])
    (repo,) = built.corpus.repositories
    run = analyzer.WorkspaceRun(ws.Workspace("", ()), decode_index(_index()))
    facts = analyzer.join_repository([run], repo)
    outcome = analyzer.bind(facts, "main", built.corpus, analyzer.ModuleTable(built.corpus))
    merged = merge(resolve_rust(built.corpus), ExactPass("rust", outcomes=[outcome]))
    edges = [
        (*built.edge_row(e), Confidence(e.confidence).name, e.line)
        for e in merged.edges
        if e.kind == EdgeKind.CALLS_DIRECT
    ]
    return facts, edges, merged.unresolved


def test_a_use_that_names_the_trait_binds_to_that_traits_impl(tmp_path: Path) -> None:
    _facts, edges, _rows = _joined(tmp_path)
    assert (
        "CALLS_DIRECT",
        "main::error::Error::<Error>::custom#2",
        "main::error::Error::<Error>::custom",
        "EXACT_TYPECHECKED",
        13,
    ) in edges  # `de::Error::custom(msg)` in the ser impl: the de impl's
    assert (
        "CALLS_DIRECT",
        "main::error::from_ser",
        "main::error::Error::<Error>::custom#2",
        "EXACT_TYPECHECKED",
        18,
    ) in edges  # `<Error as ser::Error>::custom(msg)`: the ser impl's
    wrong = [e for e in edges if e[1] == "main::error::from_ser" and e[2] != "main::error::Error::<Error>::custom#2"]
    assert wrong == []


def test_a_use_that_does_not_name_the_trait_is_ambiguous_and_binds_to_neither(tmp_path: Path) -> None:
    facts, edges, rows = _joined(tmp_path)
    assert [e for e in edges if e[1] == "main::error::by_type_path"] == []  # no exact edge, nor the fallback's guess
    (row,) = [u for u in rows if u.line == 22]
    assert (row.reason, row.name, row.path, row.col) == ("AMBIGUOUS_MEMBER", "custom", "src/error.rs", 11)
    assert "rust-analyzer gives one symbol to 2 definitions" in row.detail
    assert "main::error::Error::<Error>::custom at src/error.rs:6" in row.detail
    assert "main::error::Error::<Error>::custom#2 at src/error.rs:12" in row.detail
    assert [a.line for a in facts.ambiguous] == [22]


def test_the_index_really_holds_one_symbol_for_both_definitions() -> None:
    index = decode_index(_index())
    (error,) = [d for d in index.documents if d.relative_path == "src/error.rs"]
    assert [o.range[:2] for o in error.occurrences if o.symbol == DUP and o.is_definition] == [(5, 7), (11, 7)]


def test_a_method_of_an_impl_of_a_trait_outside_the_graph_is_a_blind_spot_of_itself(tmp_path: Path) -> None:
    """``impl fmt::Display for V { fn fmt }`` and ``impl Add for V { fn add }``: format! and ``a + b`` call
    them, which no analyzer records as a use; each gets one EXTERNAL_OVERRIDE row on itself naming the trait.
    A method of an impl of a trait the graph declares gets none (its callers come through IMPLEMENTS)."""
    write_repo(
        tmp_path / "r",
        {
            "Cargo.toml": '[package]\nname = "r"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": (
                "use std::fmt;\nuse std::ops::Add;\n\npub struct V(pub i32);\n\n"
                "impl fmt::Display for V {\n"
                "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n"
                '        write!(f, "{}", self.0)\n    }\n}\n\n'
                "impl Add for V {\n    type Output = V;\n    fn add(self, o: V) -> V {\n        V(self.0 + o.0)\n    }\n}\n\n"
                "pub trait Shape {\n    fn area(&self) -> i32;\n}\n\n"
                "impl Shape for V {\n    fn area(&self) -> i32 {\n        self.0\n    }\n}\n"
            ),
        },
    )
    built = build_rust_corpus([("r", tmp_path / "r")])
    resolution = resolve_rust(built.corpus)
    rows = sorted(
        (u.name, u.line, u.package, built.declarations[u.source].qualified_name)
        for u in resolution.unresolved
        if u.reason == "EXTERNAL_OVERRIDE"
    )
    assert rows == [("add", 14, "Add", "r::V::<Add>::add"), ("fmt", 7, "fmt::Display", "r::V::<Display>::fmt")]
    assert all("outside the graph" in u.detail for u in resolution.unresolved if u.reason == "EXTERNAL_OVERRIDE")
