"""The Dart grammar, and only it, from the pinned ``tree-sitter-language-pack`` 0.13.0 wheel.

The pack bundles about 170 compiled grammars. Importing the pack (or any of its
submodules, which runs the package's ``__init__``) also imports three other
grammar packages and ``typing``/``pathlib`` machinery: about 40-70 ms here,
against 1-6 ms for loading ``bindings/dart.*.so`` on its own with the import
system's extension loader, which is what ``load`` does. The regular import is
the fallback when the wheel's layout is not the one 0.13.0 has.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

from tree_sitter import Language

_PACK = "tree_sitter_language_pack"
_MODULE = f"{_PACK}.bindings.dart"


def _binding_path() -> Path | None:
    """Where the pack's compiled Dart binding is, found without executing the pack."""
    spec = importlib.util.find_spec(_PACK)  # a top-level find_spec runs no package code
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        for found in sorted((Path(location) / "bindings").glob("dart.*.so")):
            return found
    return None


def load() -> Language:
    """The Dart ``Language``; raises ImportError when the pack is not installed."""
    path = _binding_path()
    if path is not None:
        loader = importlib.machinery.ExtensionFileLoader(_MODULE, str(path))
        spec = importlib.util.spec_from_file_location(_MODULE, path, loader=loader)
        if spec is not None:
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            return Language(module.language())
    import tree_sitter_language_pack  # the layout changed: pay the whole package import once

    return tree_sitter_language_pack.get_language("dart")
