"""Fails when a stored record type or the key layout changes without a version bump.

When this fails: if old readers could misread the new bytes, bump FORMAT_VERSION
(and MIN_READER_VERSION); if they can ignore the change (a field appended with
a default, a new sub-database), bump FEATURE_VERSION. Add a line to the log in
snapshot_format/versions.py, then record the new fingerprint below under the
new (format, feature) pair.
"""

from __future__ import annotations

import hashlib

import msgspec

from snapshot_format import keys, manifest, records, vocab
from snapshot_format.versions import FEATURE_VERSION, FORMAT_VERSION

FINGERPRINTS: dict[tuple[int, int], str] = {
    (1, 1): "6b4530bb9ead8402",
    (1, 2): "923ae8356d1ba291",
    (1, 3): "923ae8356d1ba291",  # lexical term rules changed, not the records
    (1, 4): "4c37dd7f8e271df0",  # Counts.partial_files
    (1, 5): "10418884a85f1b14",  # File.test
    (1, 6): "10418884a85f1b14",  # the value pending of File.analysis and LanguageAnalysis.mode, not the records
    (1, 7): "9d04b3bb49f93692",  # EdgeKind.STANDS_FOR, Provenance.PYTHON_IMPORT_SYSTEM
    (1, 8): "c5fac4a460ff1d9a",  # Symbol.callable
    (1, 9): "805e3cc5ed2aaeb1",  # Provenance.JAVA_INDEXER_DEF/USE, SCIP_INDEX_DEF/USE
    (1, 10): "951d63a14fb1f9cb",  # layers: Manifest.layers (LayerEntry), the link and layer sub-databases
    (1, 11): "e847f3ee4736232f",  # Provenance.JAVA_IMPLICIT_CALL
}


def schema_fingerprint() -> str:
    h = hashlib.sha256()
    for kind in records.ALL_RECORD_TYPES:
        info = msgspec.inspect.type_info(kind)
        assert isinstance(info, msgspec.inspect.StructType)
        h.update(f"{kind.__name__}|array_like={info.array_like}\n".encode())
        for f in info.fields:
            h.update(f"{f.name}:{f.type!r}:{f.default!r}\n".encode())
    for name in keys.ALL_DATABASES:
        h.update(b"db:" + name + b"\n")
    for enum in (vocab.EdgeKind, vocab.Confidence, vocab.Provenance):
        for member in enum:
            h.update(f"{enum.__name__}.{member.name}={member.value}\n".encode())
    if FEATURE_VERSION >= 10:  # layers: which sub-databases each layer holds, and the manifest that names them
        for role, names in (("link", keys.LINK_DATABASES), ("layer", keys.LAYER_DATABASES)):
            h.update(f"{role}:".encode() + b",".join(names) + b"\n")
        for kind in (manifest.Manifest, manifest.LayerEntry):
            for f in msgspec.structs.fields(kind):
                h.update(f"{kind.__name__}.{f.name}:{f.type!r}\n".encode())
    return h.hexdigest()[:16]


def test_record_schema_matches_the_fingerprint_of_this_format_version() -> None:
    expected = FINGERPRINTS.get((FORMAT_VERSION, FEATURE_VERSION))
    actual = schema_fingerprint()
    assert expected == actual, (
        f"record types, sub-databases or vocabularies changed (fingerprint {actual}) without a version bump "
        f"(format {FORMAT_VERSION}, feature {FEATURE_VERSION} expects {expected}); see this module's docstring"
    )
