"""The Dart language module: tree-sitter extraction and a CANDIDATE resolver on syntax.

Implements ``indexer.corpus.LanguageModule``. The grammar is the Dart one of
the pinned ``tree-sitter-language-pack`` (loaded alone, see ``grammar.py``).
The exact adapter for machines with a Dart SDK is ``analyzer.py`` (scip-dart on
the SCIP route); without one, Dart answers are CANDIDATE. The Site vocabulary is
in ``sites.py``.
"""

from indexer.languages.dart.extract import EXTRACTOR_VERSION, extract
from indexer.languages.dart.modules import EXTENSIONS, LANGUAGE, package_for, package_for_root
from indexer.languages.dart.resolve import resolve

__all__ = ["EXTENSIONS", "EXTRACTOR_VERSION", "LANGUAGE", "extract", "package_for", "package_for_root", "resolve"]
