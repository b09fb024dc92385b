"""The Java language module: tree-sitter extraction and a CANDIDATE resolver on syntax.

Implements ``indexer.corpus.LanguageModule``; the exact pass is scip-java (javac with the SemanticDB plugin)
behind ``indexer.languages.java.analyzer.ADAPTER``. The Site vocabulary is in ``sites.py``.
"""

from indexer.languages.java.extract import EXTRACTOR_VERSION, extract
from indexer.languages.java.modules import EXTENSIONS, LANGUAGE, package_for, package_for_root
from indexer.languages.java.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "package_for_root", "resolve"]
