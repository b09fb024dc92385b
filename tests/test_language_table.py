"""The language table is the one place a language's properties live: code outside a language's folder reads them
and never branches on a language's name (issue 26), and every row is served by one folder."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from indexer.config import ConfigError, normalize_languages
from indexer.languages import registry
from snapshot_format import languages
from tests.helpers import REPO_ROOT

# Every spelling of a language: its id and its aliases.
_NAMES = frozenset(languages.ALIASES)

# String literals spelled like a language that are not one, each with why.
_NOT_A_LANGUAGE: dict[tuple[str, str], str] = {
    ("server/audit.py", "ts"): "the audit record's timestamp field",
    ("server/logs.py", "ts"): "the log record's timestamp field",
    ("indexer/cli.py", "python"): "the interpreter's version in `kivgraph --version`",
    ("indexer/doctor.py", "python"): "doctor's check of the interpreter",
    ("indexer/setup_analyzers.py", "go"): "the go executable setup needs (a prerequisite, not the language)",
}


def language_literals(source: str) -> list[tuple[int, str]]:
    """(line, value) of every string literal whose value is a language's id or alias."""
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        body = token.string.lstrip("rRbBuUfF")
        for quote in ('"""', "'''", '"', "'"):
            if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
                value = body[len(quote) : -len(quote)]
                if value.lower() in _NAMES:
                    found.append((token.start[0], value))
                break
    return found


def _outside_the_language_folders() -> list[Path]:
    folders = {REPO_ROOT / "indexer" / "languages" / spec.name for spec in registry.LANGUAGES}
    files: list[Path] = []
    for package in ("server", "indexer", "snapshot_format", "kivgraph_cli"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if not any(folder in path.parents for folder in folders) and path.name != "languages.py":
                files.append(path)
    return files


def test_no_code_outside_a_language_folder_names_a_language() -> None:
    named = []
    for path in _outside_the_language_folders():
        relative = str(path.relative_to(REPO_ROOT))
        for line, value in language_literals(path.read_text("utf-8")):
            if (relative, value) not in _NOT_A_LANGUAGE:
                named.append(f"{relative}:{line}: {value!r}")
    assert named == [], "branch on the language table's properties instead:\n" + "\n".join(named)


def test_the_exceptions_are_still_there_so_the_list_cannot_rot() -> None:
    seen = {
        (str(path.relative_to(REPO_ROOT)), value)
        for path in _outside_the_language_folders()
        for _line, value in language_literals(path.read_text("utf-8"))
    }
    assert set(_NOT_A_LANGUAGE) <= seen


def test_the_scan_finds_a_branch_on_a_language_name() -> None:
    source = 'if sym.language == "rust":\n    pass\nx = {\'py\': 1}\ndoc = """about python"""\n'
    assert language_literals(source) == [(1, "rust"), (3, "py")]


def test_every_row_is_served_by_exactly_one_language_folder() -> None:
    served = [lang for spec in registry.LANGUAGES for lang in spec.ids]
    assert sorted(served) == sorted(languages.IDS)
    for spec in registry.LANGUAGES:
        for lang in spec.ids:
            assert spec.extensions[lang] == languages.by_id(lang).extensions


def test_a_folder_declaration_naming_no_row_is_refused_with_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "cobol"
    folder.mkdir()
    (folder / registry.DECLARATION).write_text('languages = ["cobol"]\ntests = []\n')
    with pytest.raises(ValueError, match=r"cobol/language.toml: key 'languages': \['cobol'\]"):
        registry.read_declaration(folder)
    (folder / registry.DECLARATION).write_text('languages = ["python"]\ntests = []\nanalyser = true\n')
    with pytest.raises(ValueError, match=r"language.toml: .*unknown field `analyser`"):
        registry.read_declaration(folder)


def test_configuration_accepts_the_table_aliases_and_names_the_ids_otherwise() -> None:
    assert normalize_languages(["PY", "ts", "js", "rs", "go", "dart"], "here") == (
        "python",
        "typescript",
        "javascript",
        "rust",
        "go",
        "dart",
    )
    with pytest.raises(ConfigError, match=r"unknown language 'cobol' .*python, go, typescript"):
        normalize_languages(["cobol"], "here")


def test_the_table_refuses_a_name_or_extension_two_rows_claim() -> None:
    python = languages.by_id("python")
    twin = languages.Language(
        id="snake",
        aliases=("py",),
        extensions=(".snake",),
        module_names="package",
        export_rule="underscore",
        body=python.body,
        declaring_lines=(),
    )
    with pytest.raises(ValueError, match="the name 'py' of 'snake' is taken"):
        languages.check((python, twin))
    with pytest.raises(KeyError, match="'snake' is not in the language table"):
        languages.by_id("snake")


def test_properties_decide_what_the_name_rule_and_the_body_scanner_are() -> None:
    assert languages.family("javascript") == languages.family("typescript") == "typescript"
    assert languages.family("cobol") == "cobol"
    assert languages.language_of_path("src/a.mts") == "typescript" and languages.language_of_path("Makefile") == ""
    assert [row.id for row in languages.LANGUAGES if row.structural_typing] == ["go"]
    assert {row.id for row in languages.LANGUAGES if row.body.blocks == "indent"} == {"python"}
