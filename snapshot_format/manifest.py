"""The manifest: written last into a generation, read first by every reader."""

from __future__ import annotations

from pathlib import Path

import msgspec

from snapshot_format import records
from snapshot_format.errors import FormatVersionError, ManifestError
from snapshot_format.layout import MANIFEST_FILENAME
from snapshot_format.regular import IrregularFileError, read_regular
from snapshot_format.versions import FORMAT_VERSION, READABLE_FORMATS


class RepositoryState(msgspec.Struct, frozen=True):
    """Commit, branch and dirty flag of a repository when it was indexed."""

    name: str
    commit: str = ""
    branch: str = ""
    dirty: bool = False


class LayerEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One repository's layer of a layered generation (feature 10): where it is and what it holds."""

    repository: str
    directory: str  # generation-relative, ``layers/<digest prefix>``: an LMDB environment of its own
    digest: str  # BLAKE2b-256 of the layer's content, as digest.py computes it for one environment
    data_bytes: int  # size of its data.mdb
    counts: records.Counts
    lexicon_documents: int = 0  # its lexical documents: the next layer's are numbered after them
    lexicon_length: int = 0  # the sum of its documents' weighted lengths x100 (the generation's average)
    # The data file's modification time when it was written: a later generation links the file only while it
    # is unchanged since (a write in place, damage, changes it; then the layer is written again).
    mtime_ns: int = 0


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """Identity and integrity of one generation (JSON, unknown fields ignored)."""

    id: int
    format_version: int
    feature_version: int
    min_reader_version: int
    built_at: str  # ISO 8601 UTC
    built_at_ns: int
    indexer_version: str
    digest: str  # BLAKE2b-256 hex over every key and value, see digest.py
    data_bytes: int
    counts: records.Counts
    repositories: tuple[RepositoryState, ...] = ()
    analyzers: dict[str, str] = {}
    seconds: float = 0.0
    # Feature 9: a layered generation. ``data_bytes`` and ``link_digest`` are then those of the link layer
    # (the generation directory's data.mdb) and ``digest`` covers the link layer and every layer's digest.
    layers: tuple[LayerEntry, ...] = ()
    link_digest: str = ""


_MAX_MANIFEST_BYTES = 64 << 20  # a manifest is kilobytes; anything near this is damage
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Manifest)


def encode_manifest(manifest: Manifest) -> bytes:
    return msgspec.json.format(_encoder.encode(manifest), indent=2) + b"\n"


def read_manifest(generation_dir: Path) -> Manifest:
    """Read and decode a generation's manifest; ManifestError names the file."""
    path = generation_dir / MANIFEST_FILENAME
    try:
        data = read_regular(path, limit=_MAX_MANIFEST_BYTES)
    except FileNotFoundError as exc:
        raise ManifestError(f"{path}: manifest missing (generation incomplete)") from exc
    except IrregularFileError as exc:
        raise ManifestError(f"{exc} (damaged generation)") from exc
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read manifest: {exc.strerror}") from exc
    if len(data) > _MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path}: manifest larger than {_MAX_MANIFEST_BYTES} bytes (damaged generation)")
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ManifestError(f"{path}: malformed manifest: {exc}") from exc


def check_readable(manifest: Manifest, where: str = "generation") -> None:
    """Refuse a generation this build cannot read, naming both versions."""
    if manifest.min_reader_version > FORMAT_VERSION or manifest.format_version not in READABLE_FORMATS:
        raise FormatVersionError(
            f"{where} has format version {manifest.format_version} and needs a reader of format "
            f"{manifest.min_reader_version} or newer; this kivgraph reads format {FORMAT_VERSION} "
            f"(readable: {', '.join(str(v) for v in sorted(READABLE_FORMATS))}). Upgrade kivgraph or re-index."
        )
