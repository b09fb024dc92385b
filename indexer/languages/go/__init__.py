"""The Go language module: tree-sitter extraction and a CANDIDATE resolver on syntax.

Implements ``indexer.corpus.LanguageModule``. The exact pass is the go/types
helper driven by ``indexer.languages.go.analyzer`` (registered in
``indexer.scip.exact.ADAPTERS``). The Site vocabulary is in ``sites.py``.
"""

from indexer.languages.go.extract import (
                                         EXTENSIONS,
                                         EXTRACTOR_VERSION,
                                         LANGUAGE,
                                         extract,
                                         package_for,
                                         package_for_root,
)
from indexer.languages.go.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "package_for_root", "resolve"]
