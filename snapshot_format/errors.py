"""Typed errors of the on-disk contract."""


class SnapshotError(Exception):
    """Base of every error raised by snapshot_format."""


class NoGenerationError(SnapshotError):
    """No published generation exists in the state directory."""


class GenerationUnreadableError(SnapshotError):
    """A generation exists but cannot be opened or fails a cheap check."""


class FormatVersionError(GenerationUnreadableError):
    """The generation needs a newer reader than this build."""


class DigestMismatchError(GenerationUnreadableError):
    """The generation's content does not match the digest its manifest records."""


class ManifestError(GenerationUnreadableError):
    """The manifest is missing, truncated or malformed."""


class PublishLockedError(SnapshotError):
    """Another process holds the publication lock."""
