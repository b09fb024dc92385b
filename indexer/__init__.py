"""kivgraph's indexer: discovery, parsing, analyzers, linking, the fact cache and publication."""

__version__ = "0.1.0"
