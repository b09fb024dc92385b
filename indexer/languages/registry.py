"""Every language kivgraph knows, one ``LanguageSpec`` each; modules are imported only when a repository needs them.

Adding a language is one folder under ``indexer/languages/`` (see ``spec.py`` for its files) plus one line here.
"""

from __future__ import annotations

from typing import Any

from indexer.corpus import LanguageModule
from indexer.languages.spec import ExactAdapter, LanguageSpec, Probe


def _tests(*dirs_and_names: str) -> tuple[str, ...]:
    """fnmatch patterns for test directories (``tests/`` anywhere) and test file names (anywhere)."""
    out: list[str] = []
    for item in dirs_and_names:
        if item.endswith("/"):
            out += [f"{item}*", f"*/{item}*"]
        else:
            out += [item, f"*/{item}"]
    return tuple(out)


_COMMON_TEST_DIRS = ("test/", "tests/", "testing/", "__tests__/", "testdata/")

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        name="python",
        extensions={"python": (".py", ".pyi")},
        test_patterns=_tests(*_COMMON_TEST_DIRS, "test_*.py", "*_test.py", "conftest.py"),
        probe=Probe("doctor_probe.py", b"def probe():\n    return 1\n", "doctor_probe.probe"),
        exact=True,
    ),
    LanguageSpec(
        name="typescript",
        extensions={"typescript": (".ts", ".tsx", ".mts", ".cts"), "javascript": (".js", ".jsx", ".mjs", ".cjs")},
        test_patterns=_tests(
            *_COMMON_TEST_DIRS, "spec/", "*.test.*", "*.spec.*", "*-test.*", "*.test-d.*"
        ),  # tsd type tests
        probe=Probe("doctor_probe.ts", b"export function probe(): number {\n  return 1;\n}\n", "doctor_probe.probe"),
        exact=True,
        build_outputs=True,
    ),
    LanguageSpec(
        name="go",
        extensions={"go": (".go",)},
        test_patterns=_tests("testdata/", "*_test.go"),
        probe=Probe("doctor_probe.go", b"package probe\n\nfunc Probe() int { return 1 }\n", "Probe"),
        exact=True,
    ),
    LanguageSpec(
        name="rust",
        extensions={"rust": (".rs",)},
        test_patterns=_tests("tests/", "benches/"),
        probe=Probe("src/lib.rs", b"pub fn probe() -> i32 {\n    1\n}\n", "crate::probe"),
        exact=True,
        fallback_note="tree-sitter, CANDIDATE (calls inside macro invocations are not seen)",
    ),
    LanguageSpec(
        name="java",
        extensions={"java": (".java",)},
        test_patterns=_tests("src/test/", "src/it/", "*Test.java", "*Tests.java", "*IT.java"),
        probe=Probe(
            "doctor/Probe.java",
            b"package doctor;\n\npublic class Probe {\n    int probe() { return 1; }\n}\n",
            "doctor.Probe.probe",
        ),
        exact=True,
    ),
    LanguageSpec(
        name="dart",
        extensions={"dart": (".dart",)},
        test_patterns=_tests("test/", "*_test.dart"),
        probe=Probe("lib/doctor_probe.dart", b"int probe() {\n  return 1;\n}\n", "probe"),
        exact=True,
        fallback_note="tree-sitter, CANDIDATE (without a Dart SDK, which these machines cannot install)",
    ),
)

_BY_ID: dict[str, LanguageSpec] = {lang: spec for spec in LANGUAGES for lang in spec.ids}

# language id -> extensions, for every language (files of a language without an extractor are reported skipped)
EXTENSIONS: dict[str, tuple[str, ...]] = {lang: exts for spec in LANGUAGES for lang, exts in spec.extensions.items()}


def spec_for(language: str) -> LanguageSpec | None:
    """The spec serving a language id ("javascript" is served by the typescript folder)."""
    return _BY_ID.get(language)


def module_for(language: str) -> LanguageModule | None:
    """The language module, or None when this build has no extractor for the language."""
    spec = _BY_ID.get(language)
    return spec.module() if spec is not None else None


def adapter_for(language: str) -> ExactAdapter[Any] | None:
    """The language's exact analyzer adapter, or None when it has none."""
    spec = _BY_ID.get(language)
    return spec.adapter() if spec is not None else None


def is_test_path(language: str, path: str) -> bool:
    spec = _BY_ID.get(language)
    return spec.is_test(path) if spec is not None else False
