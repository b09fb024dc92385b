"""The on-disk contract: codec, evolution, key ordering, manifest checks and generation naming."""

from __future__ import annotations

import msgspec
import pytest

from snapshot_format import codec, keys, records
from snapshot_format.errors import FormatVersionError, ManifestError
from snapshot_format.layout import generation_name, parse_generation_name, resolve_layout, temp_generation_name
from snapshot_format.manifest import Manifest, check_readable, encode_manifest, read_manifest
from snapshot_format.stable_key import stable_key
from snapshot_format.versions import FORMAT_VERSION, MIN_READER_VERSION


def _symbol(**overrides: object) -> records.Symbol:
    base: dict[str, object] = dict(
        key="A" * 26,
        name="f",
        qualified_name="m.f",
        kind="function",
        language="python",
        repository="r",
        path="m.py",
        start_line=1,
        start_col=0,
        end_line=2,
        end_col=4,
        signature="def f()",
        doc="Doc.",
        exported=True,
        container="",
        package="m",
    )
    base.update(overrides)
    return records.Symbol(**base)  # type: ignore[arg-type]


def test_every_record_type_round_trips_through_the_codec() -> None:
    samples = [
        records.Repository(
            name="r",
            root="/x",
            languages=("python",),
            commit="c",
            branch="main",
            dirty=True,
            analyses=(records.LanguageAnalysis(language="python", mode="fallback"),),
        ),
        records.File(repository="r", path="a.py", language="python", content_hash="ab", size=3),
        _symbol(),
        records.Edge(kind=12, source="A" * 26, target="B" * 26, confidence=5, provenance=22, line=3, col=1, count=2),
        records.EdgeValue(confidence=1, line=2, col=3, count=4),
        records.Unresolved(name="x", reason="NAME_NOT_RESOLVED", repository="r", path="a.py", line=1),
        records.PackageDependency(
            consumer_repository="b", consumer_package="b", provider_repository="a", provider_package="a"
        ),
        records.Counts(symbols=3),
        records.Breakdown(edges_by_kind=(records.CountEntry(key="CALLS_DIRECT", count=2),)),
    ]
    for value in samples:
        assert codec.decode(type(value), codec.encode(value)) == value


def test_old_bytes_decode_into_a_record_with_appended_fields() -> None:
    # A record written before `doc`, `exported`, `container` and `package` existed: eleven positional fields.
    old = msgspec.msgpack.encode(["K" * 26, "f", "m.f", "function", "python", "r", "m.py", 1, 0, 2, 4, "def f()"])
    sym = codec.decode(records.Symbol, old)
    assert sym.signature == "def f()"
    assert (sym.doc, sym.exported, sym.container, sym.package) == ("", False, "", "")


def test_bytes_from_a_newer_feature_version_are_read_ignoring_appended_fields() -> None:
    newer = msgspec.msgpack.encode([5, 1, 2, 3, "a field appended by a newer writer"])
    assert codec.decode(records.EdgeValue, newer) == records.EdgeValue(confidence=5, line=1, col=2, count=3)


def test_stable_keys_are_deterministic_and_round_trip_through_raw_bytes() -> None:
    ident = dict(
        language="python",
        repository="r",
        package="p",
        module="p/a.py",
        qualified_name="p.a.f",
        kind="function",
        discriminator="",
    )
    k1, k2 = stable_key(**ident), stable_key(**ident)
    assert k1 == k2 and len(k1) == 26 and k1.isupper()
    assert keys.key_from_bytes(keys.key_to_bytes(k1)) == k1
    assert stable_key(**{**ident, "kind": "method"}) != k1
    assert stable_key(**{**ident, "repository": "r2"}) != k1


@pytest.mark.parametrize("bad", ["", "short", "a" * 26, "1" * 26, "A" * 25 + "!", "A" * 27])
def test_malformed_stable_keys_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        keys.key_to_bytes(bad)


def test_by_file_keys_sort_by_position_then_key_and_files_stay_apart() -> None:
    k = b"\x00" * 16
    a = keys.by_file_key("r", "a.py", 2, 0, k)
    b = keys.by_file_key("r", "a.py", 10, 0, k)
    c = keys.by_file_key("r", "a.py", 10, 4, k)
    other = keys.by_file_key("r", "a.pyx", 1, 0, k)
    assert sorted([c, other, b, a]) == [a, b, c, other]
    assert not other.startswith(keys.prefix("r", "a.py"))


def test_index_keys_group_every_homonym_under_one_prefix() -> None:
    k1, k2 = b"\x01" * 16, b"\x02" * 16
    names = sorted(
        [
            keys.name_key("run", "r", "b.py", k2),
            keys.name_key("run", "r", "a.py", k1),
            keys.name_key("runner", "r", "a.py", k1),
            keys.name_key("ru", "r", "z.py", k1),
        ]
    )
    exact = [n for n in names if n.startswith(keys.prefix("run"))]
    assert len(exact) == 2
    assert keys.split_index_key(exact[0]) == (["run", "r", "a.py"], k1)


def test_edge_keys_order_by_end_then_kind() -> None:
    src, d1, d2 = b"\x05" * 16, b"\x01" * 16, b"\x09" * 16
    ks = sorted([keys.edge_key(src, 12, d2, 1), keys.edge_key(src, 11, d2, 1), keys.edge_key(src, 12, d1, 1)])
    assert [keys.split_edge_key(k)[1] for k in ks] == [11, 12, 12]
    assert keys.split_edge_key(ks[1]) == (src, 12, d1, 1)


def test_key_parts_with_nul_are_refused() -> None:
    with pytest.raises(ValueError):
        keys.join("a\x00b")


def test_generation_names_carry_the_id_and_format_and_parse_back() -> None:
    assert generation_name(42) == f"g000042.v{FORMAT_VERSION}"
    assert parse_generation_name(generation_name(1234567, 3)) == (1234567, 3)
    assert parse_generation_name(temp_generation_name(7)) is None
    assert parse_generation_name("g42.v1") is None
    with pytest.raises(ValueError):
        generation_name(0)


def _manifest(**overrides: object) -> Manifest:
    base: dict[str, object] = dict(
        id=3,
        format_version=FORMAT_VERSION,
        feature_version=1,
        min_reader_version=MIN_READER_VERSION,
        built_at="2026-01-01T00:00:00Z",
        built_at_ns=1,
        indexer_version="t",
        digest="00",
        data_bytes=1,
        counts=records.Counts(),
    )
    base.update(overrides)
    return Manifest(**base)  # type: ignore[arg-type]


def test_a_manifest_from_a_newer_format_is_refused_naming_both_versions() -> None:
    newer = _manifest(format_version=FORMAT_VERSION + 1, min_reader_version=FORMAT_VERSION + 1)
    with pytest.raises(FormatVersionError) as info:
        check_readable(newer, "generation g000003")
    text = str(info.value)
    assert f"format version {FORMAT_VERSION + 1}" in text and f"reads format {FORMAT_VERSION}" in text


def test_a_newer_feature_version_that_old_readers_may_read_is_accepted() -> None:
    check_readable(_manifest(feature_version=99))


def test_manifest_round_trips_and_ignores_unknown_fields(tmp_path) -> None:
    m = _manifest()
    data = encode_manifest(m).replace(b'"id"', b'"future_field": 1, "id"', 1)
    (tmp_path / "manifest").write_bytes(data)
    assert read_manifest(tmp_path) == m


def test_a_truncated_manifest_is_a_manifest_error_naming_the_file(tmp_path) -> None:
    (tmp_path / "manifest").write_bytes(encode_manifest(_manifest())[:20])
    with pytest.raises(ManifestError, match="malformed manifest"):
        read_manifest(tmp_path)
    with pytest.raises(ManifestError, match="manifest missing"):
        read_manifest(tmp_path / "nowhere")


def test_kivgraph_home_holds_config_and_state(tmp_path) -> None:
    layout = resolve_layout(environ={"KIVGRAPH_HOME": str(tmp_path)})
    assert layout.config_path == tmp_path / "kivgraph.toml"
    assert layout.state_dir == tmp_path / "state"
    xdg = resolve_layout(environ={"HOME": str(tmp_path)})
    assert xdg.config_path == tmp_path / ".config" / "kivgraph" / "kivgraph.toml"
    assert xdg.state_dir == tmp_path / ".local" / "state" / "kivgraph"
    flags = resolve_layout(config=tmp_path / "c.toml", state_dir=tmp_path / "s", environ={"KIVGRAPH_HOME": "/x"})
    assert (flags.config_path, flags.state_dir) == (tmp_path / "c.toml", tmp_path / "s")


def test_a_reader_killed_by_damage_is_reported_as_damage_not_a_crash(tmp_path, monkeypatch) -> None:
    """A flipped length can make LMDB read past the end of data.mdb (SIGBUS): the isolated check reports it."""
    import signal
    import stat
    import sys

    import pytest

    from snapshot_format.errors import DigestMismatchError
    from snapshot_format.reader import verify_isolated

    dies = tmp_path / "dies-by-sigbus"
    dies.write_text(f"#!/bin/sh\nkill -{int(signal.SIGBUS)} $$\n")
    dies.chmod(dies.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(dies))
    with pytest.raises(DigestMismatchError, match=r"g000007\.v1: damaged, reading it killed the reader \(SIGBUS"):
        verify_isolated(tmp_path, "g000007.v1")
