"""The architecture holds: the import-linter contracts in pyproject.toml are kept, and only the indexer writes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT


def test_the_import_linter_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def _lmdb_open_calls(package: str) -> list[tuple[str, int, bool]]:
    """(file, line, opens for writing?) for every lmdb.open call under a package."""
    found = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "open"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "lmdb"
            ):
                readonly = any(
                    kw.arg == "readonly" and isinstance(kw.value, ast.Constant) and kw.value.value is True
                    for kw in node.keywords
                )
                found.append((str(path.relative_to(REPO_ROOT)), node.lineno, not readonly))
    return found


def test_only_the_indexer_opens_lmdb_for_writing() -> None:
    writers = [
        (f, line) for f, line, writes in _lmdb_open_calls("snapshot_format") + _lmdb_open_calls("server") if writes
    ]
    assert writers == []
    indexer_writers = {f for f, _line, writes in _lmdb_open_calls("indexer") if writes}
    assert indexer_writers == {"indexer/publish.py", "indexer/fact_cache.py"}


def test_snapshot_format_depends_only_on_msgspec_lmdb_and_the_standard_library() -> None:
    allowed = {"msgspec", "lmdb", "snapshot_format", "__future__"} | set(sys.stdlib_module_names)
    for path in (REPO_ROOT / "snapshot_format").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path}: imports {name}"
