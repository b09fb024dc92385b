"""kivgraph's on-disk contract: record types, key layout, versions, manifest and the read-only reader.

Both the indexer and the server import this package; it imports neither.
"""
