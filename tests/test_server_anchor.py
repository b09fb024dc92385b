"""Re-anchoring a changed file by syntax: where a declaration ends, without a parser in the server."""

from __future__ import annotations

import pytest

from server.queries.anchor import python_start, syntax_end


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


GO = """package flags

// NewFlagSet makes a set; the brace in this comment { does not count
func NewFlagSet(name string) *FlagSet {
	s := "a } in a string"
	r := '}'
	raw := `a raw
} string`
	if name == "" {
		return nil
	}
	return &FlagSet{name: name}
}

type ID string

var (
	a = 1
	b = 2
)
"""


@pytest.mark.parametrize(("start", "end"), [(4, 13), (15, 15), (17, 20)])
def test_go_declarations_end_at_their_matching_brace_or_line(start: int, end: int) -> None:
    assert syntax_end(_lines(GO), start, "go") == end


TS = """export class Cache {
  private key = `k-${compute({ a: 1 })}-}`;
  /* a } in a block
     comment */
  get(id: string): string {
    return id.replace(/x/, '}');
  }
}
export type Id = string | number;
export const handler = async (event: Event) => {
  return { ok: true };
};
"""


@pytest.mark.parametrize(("start", "end"), [(1, 8), (5, 7), (9, 9), (10, 12)])
def test_typescript_declarations_skip_templates_strings_and_comments(start: int, end: int) -> None:
    assert syntax_end(_lines(TS), start, "typescript") == end


RUST = """pub fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {
    let c = '{';
    if x.len() > y.len() { x } else { y }
}
pub struct Unit;
"""


def test_rust_lifetimes_are_not_character_literals() -> None:
    lines = _lines(RUST)
    assert syntax_end(lines, 1, "rust") == 4
    assert syntax_end(lines, 5, "rust") == 5


PY = '''@decorator
@other(arg=1)
def grown(
    a,
    b,
):
    text = """
flush left, still inside
"""
    value = compute(a,
b)  # a continuation line at column zero

    return value


def one_liner(): return 1
CONSTANT = {
    "key": 1,
}
class Empty:
    pass
'''


def test_python_bodies_end_by_indentation_with_strings_and_brackets_as_continuations() -> None:
    lines = _lines(PY)
    assert syntax_end(lines, 3, "python") == 13
    assert syntax_end(lines, 16, "python") == 16
    assert syntax_end(lines, 17, "python") == 19
    assert syntax_end(lines, 20, "python") == 21
    assert python_start(lines, 3) == 1  # the decorators belong to the declaration


def test_text_that_cannot_be_balanced_or_a_language_not_covered_is_none() -> None:
    assert syntax_end(_lines("func Broken() {\n\tif x {\n"), 1, "go") is None
    assert syntax_end(_lines("def half(\n"), 1, "python") is None
    assert syntax_end(_lines("(defun f () 1)\n"), 1, "lisp") is None
    assert syntax_end(_lines("x\n"), 5, "go") is None
