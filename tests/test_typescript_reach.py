"""What a TypeScript edit can reach: the top-level statements of a file (what each binds, whether other modules
can name it) and the files the incremental exact pass checks again after a change. No analyzer runs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from indexer.languages.typescript.incremental import reach, source_files
from indexer.languages.typescript.units import ANY, DEFAULT, statements, units_of
from tests.helpers import write_repo


def bound(source: str, path: str = "m.ts") -> list[tuple[tuple[str, ...], bool]]:
    """(names, local) of each top-level statement that binds something."""
    return [(s.unit.names, s.unit.local) for s in statements(path, source.encode()) if s.unit.names]


def test_imports_bind_names_of_the_file_and_exports_bind_names_other_modules_can_import() -> None:
    source = (
        "import D, { a as b, c } from './x';\nimport * as ns from './y';\nimport q = require('./q');\n"
        "export function f() { return b; }\nfunction helper() {}\nexport { helper as h, c };\n"
        "export default class K {}\nexport * as all from './z';\nexport const { p, r: [s] } = obj;\n"
    )
    assert bound(source) == [
        (("D", "b", "c"), True),
        (("ns",), True),
        (("q",), True),
        (("f",), False),
        (("helper",), True),
        (("c", "h"), False),
        (("K", DEFAULT), False),
        (("all",), False),
        (("p", "s"), False),  # a destructured declaration binds its pattern's names
    ]


def test_a_default_import_names_the_default_export_whatever_it_calls_it() -> None:
    (imported,) = statements("m.ts", b"import whatever from './x';\nexport {};\n")[:1]
    assert DEFAULT in imported.words and "whatever" in imported.words


def test_what_no_statement_can_say_binds_any_name() -> None:
    assert bound("export * from './x';\n") == [((ANY,), False)]
    assert bound("export {};\ndeclare global { interface Window { x: 1 } }\n") == [((ANY,), False)]
    assert bound("export {};\ndeclare module 'pkg' { }\n") == [((ANY,), False)]
    # a script: its declarations are globals every file sees
    assert units_of("s.ts", b"function g() {}\nconst v = 1;\n")[0].names == (ANY,)
    # a file tree-sitter cannot parse
    assert units_of("e.ts", b"export function (\n")[0].names == (ANY,)


def test_a_comment_and_a_call_bind_nothing_and_an_assignment_binds_what_it_writes_to() -> None:
    assert bound("// note\nexport {};\ndescribe('x', () => {});\nFoo.bar = 1;\n") == [(("Foo",), True)]


def test_a_statement_that_only_moved_is_the_same_unit() -> None:
    before = units_of("m.ts", b"export function f() { return 1; }\n")
    after = units_of("m.ts", b"// a comment\n\n\nexport function f() { return 1; }\n")
    assert before[0] in after


# --- reach --------------------------------------------------------------------------------------------------

FILES = {
    "src/shapes.ts": (
        "export interface Shape { area(): number }\n\nfunction unit(): number { return 1; }\n\n"
        "export function square(x: number): number { return x * x * unit(); }\n\n"
        "export function cube(x: number): number { return x * x * x; }\n"
    ),
    "src/circle.ts": (
        "import { Shape, square } from './shapes';\n\nexport class Circle implements Shape {\n"
        "  area(): number { return square(2); }\n}\n"
    ),
    "src/app.ts": "import { Circle } from './circle';\n\nexport function run(): number { return new Circle().area(); }\n",
    "src/solid.ts": "import { cube } from './shapes';\n\nexport const volume = cube(2);\n",
    "src/other.ts": "export function alone(): number { return 0; }\n",
}


def reach_after(tmp_path: Path, edits: Mapping[str, str | None], files: dict[str, str] = FILES) -> set[str] | None:
    """The reach of ``edits`` (path -> new text, None: deleted) to a repository written from ``files``."""
    root = write_repo(tmp_path / "repo", files)
    previous = {p: units_of(p, (root / p).read_bytes()) for p in files}
    for path, text in edits.items():
        if text is None:
            (root / path).unlink()
        else:
            write_repo(root, {path: text})
    now = sorted(p for p in {*files, *edits} if (root / p).exists())
    return reach(previous, set(edits), now, source_files(root))


def test_a_new_declaration_nobody_names_reaches_only_its_own_file(tmp_path: Path) -> None:
    edited = FILES["src/shapes.ts"] + "\nexport function tesseract(x: number): number { return cube(x) * x; }\n"
    assert reach_after(tmp_path, {"src/shapes.ts": edited}) == {"src/shapes.ts"}


def test_a_comment_between_statements_reaches_only_its_own_file(tmp_path: Path) -> None:
    edited = "// shapes and their areas\n" + FILES["src/shapes.ts"]
    assert reach_after(tmp_path, {"src/shapes.ts": edited}) == {"src/shapes.ts"}


def test_a_changed_declaration_reaches_the_files_naming_it_and_those_naming_what_they_export(tmp_path: Path) -> None:
    edited = FILES["src/shapes.ts"].replace("return x * x * unit()", "return x * unit()")
    # circle names square; app names Circle, which circle exports and whose statement names square
    assert reach_after(tmp_path, {"src/shapes.ts": edited}) == {"src/shapes.ts", "src/circle.ts", "src/app.ts"}


def test_a_helper_of_the_file_reaches_others_only_through_an_exported_statement_naming_it(tmp_path: Path) -> None:
    edited = FILES["src/shapes.ts"].replace("function unit(): number { return 1; }", "function unit() { return 2; }")
    # square names unit: circle and app again; cube does not, so solid is not reached
    assert reach_after(tmp_path, {"src/shapes.ts": edited}) == {"src/shapes.ts", "src/circle.ts", "src/app.ts"}


def test_a_deleted_file_reaches_the_files_whose_imports_name_it(tmp_path: Path) -> None:
    assert reach_after(tmp_path, {"src/circle.ts": None}) == {"src/app.ts"}


def test_an_added_file_reaches_the_files_whose_imports_may_now_resolve_to_it(tmp_path: Path) -> None:
    files = {**FILES, "src/late.ts": "import { early } from './early';\n\nexport const v = early;\n"}
    added = {"src/early.ts": "export const early = 1;\n"}
    assert reach_after(tmp_path, added, files) == {"src/early.ts", "src/late.ts"}


def test_what_every_file_may_see_is_analysed_whole(tmp_path: Path) -> None:
    script = {"src/globals.ts": "function everywhere(): number { return 1; }\n"}
    assert reach_after(tmp_path, script) is None
    augmentation = FILES["src/other.ts"] + "declare global { interface Array<T> { shapes(): T } }\n"
    assert reach_after(tmp_path, {"src/other.ts": augmentation}) is None
    assert reach_after(tmp_path, {"src/types.d.ts": "declare const x: number;\n"}) is None
