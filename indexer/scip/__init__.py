"""SCIP ingestion shared by every analyzer that emits a SCIP index (scip-python, scip-typescript, …).

``decode`` reads the protobuf wire format into plain records; ``join`` ties
occurrences to the tree-sitter declarations of each file (edge sources,
definition targets); ``route`` is the way from an index to EXACT edges every
SCIP adapter takes (the facts, the occurrence loop, definition and provider
binding, the incremental merge), a language giving its hooks.
"""
