"""TypeScript that tree-sitter-typescript 0.23 misreads is made parseable without moving a byte (``variance``)."""

from __future__ import annotations

from indexer.languages.typescript.extract import _TS, _TSX, extract
from indexer.languages.typescript.variance import prepare

FIBER = b"""export interface Fiber<out A, in out E = never> extends Base<A>, Fiber.Variance<A, E> {
  readonly id: number
}

export declare namespace Fiber {
  export interface Variance<out A, out E> {
    readonly _A: A
  }
  export interface Dump {
    readonly id: number
  }
}

export const label = "a <out A> in a string"  // and Foo<out A> in a comment
"""

SIGNATURES = b"""export const match: {
  (options: { readonly onTrue: () => string }): (value: boolean) => string
  /** the data-first form */
  <A, B>(
    value: boolean,
    options: { readonly onFalse: () => A }
  ): A | B
} = dual
"""


def test_variance_annotations_parse_and_the_signature_keeps_them() -> None:
    ff = extract("src/Fiber.ts", FIBER, "src.Fiber")
    assert (ff.status, ff.reason) == ("indexed", "")
    fiber = next(s for s in ff.symbols if s.qualified_name == "src.Fiber.Fiber" and s.kind == "interface")
    assert fiber.signature == "interface Fiber<out A, in out E = never> extends Base<A>, Fiber.Variance<A, E>"


def test_namespace_members_stay_in_their_namespace() -> None:
    qns = {s.qualified_name for s in extract("src/Fiber.ts", FIBER, "src.Fiber").symbols}
    assert {"src.Fiber.Fiber.Dump", "src.Fiber.Fiber.Variance"} <= qns
    assert "src.Fiber.Dump" not in qns and "src.Fiber.Variance" not in qns  # a repair once moved them out


def test_only_code_is_touched() -> None:
    parsed, spans = prepare(_TS, FIBER, jsx=False)
    assert len(parsed) == len(FIBER) and len(spans) == 4  # out, in out, out, out
    assert b'"a <out A> in a string"  // and Foo<out A> in a comment' in parsed
    assert all(FIBER[a:b].strip() in (b"out", b"in out") for a, b in spans)
    expression = b"const a = 1\nconst b = a\n  < 2\nfor (const k in obj) {}\n"
    assert prepare(_TS, expression, jsx=False) == (expression, [])


def test_a_generic_call_signature_after_another_member_is_a_member() -> None:
    ff = extract("src/Boolean.ts", SIGNATURES, "src.Boolean")
    assert (ff.status, ff.reason) == ("indexed", "")
    assert any(s.qualified_name == "src.Boolean.match" for s in ff.symbols)


def test_jsx_lines_starting_with_an_angle_bracket_are_left_alone() -> None:
    view = b"export function View() {\n  return (\n    <div>\n      <span />\n    </div>\n  )\n}\n"
    assert prepare(_TSX, view, jsx=True) == (view, [])
    assert extract("src/View.tsx", view, "src.View").status == "indexed"
