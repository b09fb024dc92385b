"""SCIP ingestion shared by every analyzer that emits a SCIP index (scip-python, scip-typescript, …).

``decode`` reads the protobuf wire format into plain records; ``join`` ties
occurrences to the tree-sitter declarations of each file (edge sources,
definition targets) and classifies each use with a language's syntax.
"""
