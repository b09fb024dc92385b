"""TypeScript/JavaScript extraction: declarations, qualified names, exports, signatures, docs and sites."""

from __future__ import annotations

from indexer.languages import typescript as ts
from indexer.languages.typescript.extract import jsdoc_summary
from indexer.languages.typescript.modules import language_of, module_name

SOURCE = b"""import def, { a as b } from "./m";
export * from "./y";
/** Does things.
 *
 * More words. */
export function f(x: string): number;
export function f(x: any): any { return g(x); }
export default class K<T> extends Base implements I {
  private p: number = 1;
  static s() {}
  m(): void { this.n(); ns.h(cb); new K(); }
  #priv() {}
}
interface I extends Z { p: string; m(a: T): void }
type A = B | C.D;
enum E { X, Y = 2 }
namespace N { export const v = 1; function w() {} }
export const arrow = (y: number) => y + 1;
let plain = 3;
export { plain as pl };
function outer() { function inner() {} return inner; }
"""


def _facts():
    return ts.extract("src/sample.ts", SOURCE, ts.package_for("src/sample.ts", frozenset()))


def test_declarations_have_module_qualified_nested_names_and_kinds() -> None:
    got = {(s.qualified_name, s.kind) for s in _facts().symbols}
    assert got == {
        ("src.sample", "module"),
        ("src.sample.f", "function"),
        ("src.sample.K", "class"),
        ("src.sample.K.p", "property"),
        ("src.sample.K.s", "method"),
        ("src.sample.K.m", "method"),
        ("src.sample.K.#priv", "method"),
        ("src.sample.I", "interface"),
        ("src.sample.I.p", "property"),
        ("src.sample.I.m", "method"),
        ("src.sample.A", "type"),
        ("src.sample.E", "enum"),
        ("src.sample.E.X", "enum_member"),
        ("src.sample.E.Y", "enum_member"),
        ("src.sample.N", "namespace"),
        ("src.sample.N.v", "variable"),
        ("src.sample.N.w", "function"),
        ("src.sample.arrow", "function"),
        ("src.sample.plain", "variable"),
        ("src.sample.outer", "function"),
        ("src.sample.outer.inner", "function"),
    }


def test_overloads_are_one_declaration_spanning_signatures_and_implementation() -> None:
    (f,) = [s for s in _facts().symbols if s.qualified_name == "src.sample.f"]
    assert (f.start_line, f.end_line) == (6, 7)
    assert f.signature == "function f(x: any): any"
    assert f.doc == "Does things."


def test_the_exported_flag_follows_the_export_modifier() -> None:
    exported = {s.qualified_name for s in _facts().symbols if s.exported and s.kind != "module"}
    assert exported == {
        "src.sample.f",
        "src.sample.K",
        "src.sample.K.s",
        "src.sample.K.m",
        "src.sample.N.v",
        "src.sample.arrow",
        "src.sample.plain",
    }


def test_sites_name_imports_reexports_calls_and_bases_at_the_resolved_name() -> None:
    sites = {(s.kind, s.name, s.line, s.col, s.enclosing, s.extra) for s in _facts().sites}
    assert ("import", "default", 1, 7, "", ("./m", "def")) in sites
    assert ("import", "a", 1, 14, "", ("./m", "b")) in sites
    assert ("reexport", "*", 2, 14, "", ("./y", "*")) in sites
    assert ("call", "g", 7, 40, "src.sample.f", ("g",)) in sites
    assert ("extends", "Base", 8, 34, "src.sample.K", ("Base",)) in sites
    assert ("implements", "I", 8, 50, "src.sample.K", ("I",)) in sites
    assert ("call", "n", 11, 19, "src.sample.K.m", ("this.n",)) in sites
    assert ("arg", "cb", 11, 29, "src.sample.K.m", ("cb",)) in sites
    assert ("new", "K", 11, 38, "src.sample.K.m", ("K",)) in sites
    assert ("type", "D", 15, 15, "src.sample.A", ("C.D",)) in sites
    assert ("export", "pl", 20, 9, "", ("plain",)) in sites
    # a type parameter's own name is no reference
    assert not any(s[0] == "type" and s[1] == "T" and s[2] == 8 for s in sites)


def test_javascript_files_parse_with_jsx_and_report_their_language() -> None:
    facts = ts.extract("web/App.jsx", b"export function App() { return <div onClick={go}>hi</div>; }\n", "web.App")
    assert facts.language == "javascript" and facts.status == "indexed" and not facts.reason
    assert [s.qualified_name for s in facts.symbols] == ["web.App", "web.App.App"]
    assert language_of("a.mjs") == "javascript" and language_of("a.mts") == "typescript"
    assert module_name("src/types/index.d.ts") == "src.types.index"


def test_a_file_with_syntax_errors_keeps_what_parsed_and_says_where() -> None:
    facts = ts.extract("bad.ts", b"export function ok() {}\nexport class {{{ \n", "bad")
    assert facts.status == "partial"
    assert facts.reason.startswith("syntax error at line 2; line 2 not parsed")
    assert "bad.ok" in {s.qualified_name for s in facts.symbols}


def test_jsdoc_summary_is_the_first_paragraph_without_tags() -> None:
    assert jsdoc_summary("/** First line\n * continues.\n *\n * Second. */") == "First line continues."
    assert jsdoc_summary("/**\n * @param x thing\n */") == ""
    assert jsdoc_summary("/* not jsdoc */") == ""
