"""The key and value byte layouts of a generation, pinned literally.

Every byte a reader interprets is written by snapshot_format (keys.py, codec.py, lexical.py). These
expectations are spelled out by hand from FORMAT.md; a change that moves a byte fails here and must
come with a FORMAT_VERSION bump and a FORMAT.md entry, never silently.
"""

from __future__ import annotations

import pytest

from snapshot_format import codec, keys, lexical

K1 = bytes(range(16))
K2 = bytes(range(16, 32))
LINE_12_COL_4 = b"\x00\x00\x00\x0c\x00\x00\x00\x04"

GOLDEN: list[tuple[str, bytes, bytes]] = [
    ("text", keys.text("pkg.mod"), b"pkg.mod"),
    ("file", keys.file_key("repo", "src/a.py"), b"repo\x00src/a.py"),
    (
        "by_qualified_name",
        keys.qualified_name_key("pkg.mod.f", "repo", "src/a.py", K1),
        b"pkg.mod.f\x00repo\x00src/a.py\x00" + K1,
    ),
    ("by_name", keys.name_key("f", "repo", "src/a.py", K1), b"f\x00repo\x00src/a.py\x00" + K1),
    ("by_file", keys.by_file_key("repo", "src/a.py", 12, 4, K1), b"repo\x00src/a.py\x00" + LINE_12_COL_4 + K1),
    ("edges", keys.edge_key(K1, 3, K2, 7), K1 + b"\x03" + K2 + b"\x07"),
    (
        "unresolved",
        keys.unresolved_key("f", "repo", "src/a.py", 12, 4, 2),
        b"f\x00repo\x00src/a.py\x00" + LINE_12_COL_4 + b"\x00\x00\x00\x02",
    ),
    (
        "unresolved_by_file",
        keys.unresolved_file_key("repo", "src/a.py", 12, 4, 2),
        b"repo\x00src/a.py\x00" + LINE_12_COL_4 + b"\x00\x00\x00\x02",
    ),
    ("lexicon_docs", keys.lexicon_doc_key(258), b"\x00\x00\x01\x02"),
    ("package_deps", keys.package_dep_key("prov", "@scope/p", "cons", "app"), b"prov\x00@scope/p\x00cons\x00app"),
    ("stable key text", keys.key_from_bytes(K1).encode(), b"AAAQEAYEAUDAOCAJBIFQYDIOB4"),
    # msgpack values: fixarray headers (0x9N), fixstr (0xaN), uint16 (0xcd)
    ("repository_order", codec.encode_repository_order(["b", "a"]), b"\x92\xa1b\xa1a"),
    ("lexicon postings", lexical.encode_postings([0, 300, 5, 100]), b"\x94\x00\xcd\x01\x2c\x05\x64"),
    (
        "lexicon document",
        lexical.encode_document("repo", "src/a.py", "python", 1234),
        b"\x94\xa4repo\xa8src/a.py\xa6python\xcd\x04\xd2",
    ),
    ("lexicon stats", lexical.encode_stats(16, 5678), b"\x93\x02\x10\xcd\x16\x2e"),
]


@pytest.mark.parametrize(("what", "written", "expected"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_bytes_are_the_documented_layout(what: str, written: bytes, expected: bytes) -> None:
    assert written == expected, f"{what}: {written.hex()} != {expected.hex()}"


def test_every_value_decoder_reads_what_its_encoder_wrote() -> None:
    assert keys.key_to_bytes(keys.key_from_bytes(K1)) == K1
    assert keys.split_edge_key(keys.edge_key(K1, 3, K2, 7)) == (K1, 3, K2, 7)
    assert keys.split_index_key(keys.name_key("f", "repo", "src/a.py", K1)) == (["f", "repo", "src/a.py"], K1)
    assert codec.decode_repository_order(codec.encode_repository_order(["b", "a"])) == ["b", "a"]
    assert lexical.decode_postings(lexical.encode_postings([0, 300, 5, 100])) == [(0, 3.0), (5, 1.0)]
    assert lexical.decode_document(lexical.encode_document("r", "p", "go", 250)) == ("r", "p", "go", 2.5)
    stats = lexical.decode_stats(lexical.encode_stats(16, 5678))
    assert stats == (lexical.LEXICAL_VERSION, 16, 56.78)
