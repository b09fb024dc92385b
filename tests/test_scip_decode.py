"""The SCIP decoder and join helpers: hand-encoded wire bytes and a real scip-python index."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.facts import SymbolFact
from indexer.languages.python import analyzer as scip_python
from indexer.scip.decode import ScipDecodeError, decode_index
from indexer.scip.join import ColumnMap, FileDeclarations, descriptor_path, parse_symbol


def _varint(n: int) -> bytes:
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _packed(field: int, values: list[int]) -> bytes:
    return _len(field, b"".join(_varint(v) for v in values))


def _hand_index() -> bytes:
    tool = _len(1, b"hand") + _len(2, b"1.2") + _len(3, b"--flag")
    metadata = _int(1, 0) + _len(2, tool) + _len(3, b"file:///r") + _int(4, 1)
    rel = _len(1, b"s pkg 1 m/Base#") + _int(3, 1) + _int(5, 1)
    info = _len(1, b"s pkg 1 m/Impl#") + _len(4, rel) + _int(5, 7) + _len(6, b"Impl") + _len(8, b"")
    occ_def = _packed(1, [0, 6, 10]) + _len(2, b"s pkg 1 m/Impl#") + _int(3, 1) + _packed(7, [0, 0, 2, 8])
    # an unpacked range with a 4-element form, a negative symbol_roles, and an unknown fixed64 field
    occ_ref = (
        _int(1, 3)
        + _int(1, 4)
        + _int(1, 5)
        + _int(1, 9)
        + _len(2, b"local 1")
        + _int(3, -1)
        + _varint(9 << 3 | 1)
        + b"\0" * 8
        + _int(5, 15)
    )
    doc = _len(1, b"m.py") + _len(4, b"python") + _len(2, occ_def) + _len(2, occ_ref) + _len(3, info) + _int(6, 2)
    external = _len(1, b"s pkg 1 ext/f().") + _len(6, b"f")
    return _len(1, metadata) + _len(2, doc) + _len(3, external)


def test_hand_encoded_index_decodes_every_field_kivgraph_reads():
    index = decode_index(_hand_index())
    assert index.metadata.tool_name == "hand"
    assert index.metadata.tool_version == "1.2"
    assert index.metadata.tool_arguments == ("--flag",)
    assert index.metadata.project_root == "file:///r"
    assert index.metadata.text_document_encoding == 1
    (doc,) = index.documents
    assert (doc.relative_path, doc.language, doc.position_encoding) == ("m.py", "python", 2)
    first, second = doc.occurrences
    assert first.range == (0, 6, 0, 10)  # three-element range: end line = start line
    assert first.enclosing_range == (0, 0, 2, 8)
    assert first.is_definition and not first.is_import
    assert second.range == (3, 4, 5, 9)
    assert second.symbol_roles == -1
    assert second.syntax_kind == 15
    assert second.enclosing_range is None
    (info,) = doc.symbols
    assert (info.symbol, info.kind, info.display_name) == ("s pkg 1 m/Impl#", 7, "Impl")
    (rel,) = info.relationships
    assert rel.symbol == "s pkg 1 m/Base#"
    assert (rel.is_reference, rel.is_implementation, rel.is_type_definition, rel.is_definition) == (
        False,
        True,
        False,
        True,
    )
    (ext,) = index.external_symbols
    assert (ext.symbol, ext.display_name) == ("s pkg 1 ext/f().", "f")


@pytest.mark.parametrize("cut", [1, 5, 17, 40])
def test_truncated_bytes_raise_a_decode_error(cut):
    data = _hand_index()
    with pytest.raises(ScipDecodeError):
        decode_index(data[: len(data) - cut])


def test_a_range_of_the_wrong_length_is_rejected():
    occ = _packed(1, [1, 2]) + _len(2, b"x")
    with pytest.raises(ScipDecodeError, match="range"):
        decode_index(_len(2, _len(1, b"a.py") + _len(2, occ)))


def test_symbols_parse_into_namespace_and_member_paths():
    method = parse_symbol("scip-python python proj 0 `pkg.base`/Base#run().")
    assert method is not None and method.package == "proj" and method.version == "0"
    assert descriptor_path(method) == ("pkg.base", "Base.run")
    assert descriptor_path(parse_symbol("scip-python python proj 0 pkg/__init__:")) == ("pkg", "")
    assert descriptor_path(parse_symbol("scip-python python proj 0 `pkg.base`/Base#run().(self)")) is None
    assert parse_symbol("local 4") is None
    spaced = parse_symbol("a b  c d 1 x/y.")
    assert spaced is not None and spaced.manager == "b c" and descriptor_path(spaced) == ("x", "y")
    escaped = parse_symbol("s m p v `we``ird`/f(+1).")
    assert escaped is not None and escaped.descriptors[0].name == "we`ird"
    assert escaped.descriptors[1].disambiguator == "+1"


def _sym(name: str, qn: str, kind: str, start: tuple[int, int], end: tuple[int, int]) -> SymbolFact:
    return SymbolFact(name, qn, kind, start[0], start[1], end[0], end[1])


def test_enclosing_declaration_is_the_innermost_source_kind_or_the_module():
    decls = FileDeclarations(
        [
            _sym("C", "m.C", "class", (3, 0), (9, 0)),
            _sym("m", "m", "module", (1, 0), (20, 0)),
            _sym("run", "m.C.run", "method", (4, 4), (6, 0)),
            _sym("X", "m.X", "variable", (11, 0), (11, 9)),
            _sym("f", "m.f", "function", (12, 0), (14, 0)),
        ],
        {"module", "class", "function", "method"},
    )
    assert decls.enclosing(5, 8).qualified_name == "m.C.run"
    assert decls.enclosing(7, 4).qualified_name == "m.C"
    assert decls.enclosing(11, 4).qualified_name == "m"  # a variable is not an edge source
    assert decls.enclosing(13, 0).qualified_name == "m.f"
    assert decls.enclosing(18, 0).qualified_name == "m"
    assert decls.declared_at(4, 8, "run").qualified_name == "m.C.run"
    assert decls.declared_at(3, 6, "C").qualified_name == "m.C"
    assert decls.declared_at(5, 8, "other") is None


def test_utf16_columns_become_byte_columns_only_on_non_ascii_lines():
    cmap = ColumnMap("x = 1\ns = 'é😀'; y = f()\n".encode(), "utf-16")
    assert cmap.byte_col(0, 4) == 4
    # 'é' is 1 UTF-16 unit / 2 bytes, '😀' 2 units / 4 bytes: "y" is at unit 11, byte 14
    assert cmap.byte_col(1, 11) == 14


@pytest.fixture(scope="module")
def real_index(tmp_path_factory):
    exe = scip_python.executable()
    if not exe.exists() and shutil.which(str(exe)) is None:
        pytest.skip(f"SCIP-PYTHON UNAVAILABLE at {exe}: run `make setup` (python -m indexer.setup_analyzers)")
    root: Path = tmp_path_factory.mktemp("scip-decode") / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text("class Base:\n    def run(self) -> int:\n        return 1\n")
    (root / "pkg" / "impl.py").write_text(
        "from pkg.base import Base\n\n\nclass Impl(Base):\n    def go(self) -> int:\n        return self.run()\n"
    )
    return scip_python.run_index(root, "proj", timeout=120)


@pytest.mark.analyzers
def test_a_real_scip_python_index_decodes_with_definitions_references_and_relationships(real_index):
    assert real_index.metadata.tool_name == "scip-python"
    assert real_index.metadata.tool_version == scip_python.PINNED_VERSION
    docs = {d.relative_path: d for d in real_index.documents}
    assert set(docs) == {"pkg/__init__.py", "pkg/base.py", "pkg/impl.py"}
    run_def = [o for o in docs["pkg/base.py"].occurrences if o.is_definition and o.symbol.endswith("Base#run().")]
    assert [o.range for o in run_def] == [(1, 8, 1, 11)]
    assert run_def[0].enclosing_range == (1, 4, 2, 16)
    # self.run() in Impl.go binds to the inherited Base.run
    uses = [o for o in docs["pkg/impl.py"].occurrences if not o.is_definition and o.symbol.endswith("Base#run().")]
    assert [o.range for o in uses] == [(5, 20, 5, 23)]
    impl = next(s for s in docs["pkg/impl.py"].symbols if s.symbol.endswith("`pkg.impl`/Impl#"))
    assert any(r.is_implementation and r.symbol.endswith("`pkg.base`/Base#") for r in impl.relationships)
