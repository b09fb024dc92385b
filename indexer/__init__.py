"""kivgraph's indexer: discovery, parsing, analyzers, linking, the fact cache and publication."""

from snapshot_format.versions import RELEASE as __version__

__all__ = ["__version__"]
