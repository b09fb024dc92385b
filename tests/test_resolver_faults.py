"""A crash in one of our own resolvers costs one file, never the index."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from indexer.languages import typescript as ts
from tests.helpers import write_repo
from tests.typescript_corpus import build_ts_corpus

ts_resolve = importlib.import_module("indexer.languages.typescript.resolve")  # the package re-exports resolve()

# effect 3.12's Schema.ts has this shape: a namespace member whose base names the member itself.
SELF_BASE = """
export namespace Element {
  export interface Annotations<A> extends Annotations.Doc<A> {
    readonly missingMessage?: string
  }
  export function make(): Annotations<number> { return {} as any }
}
export const use = (x: Element.Annotations<number>) => x.missingMessage
export function call() { return Element.make().missingMessage }
"""


def test_a_base_that_names_its_own_declaration_does_not_recurse_forever(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", {"schema.ts": SELF_BASE, "other.ts": "export function ok() { return 1 }\n"})
    built = build_ts_corpus([("repo", root)])
    resolution = ts.resolve(built.corpora["typescript"])
    assert not [u for u in resolution.unresolved if u.reason == "RESOLVER_FAILED"]
    # the resolvable uses still resolve: Element.make() from call
    targets = {e.target for e in resolution.edges}
    assert built.key("schema.Element.make") in targets


def test_a_resolver_crash_on_one_file_is_a_failure_row_and_the_rest_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_repo(
        tmp_path / "repo",
        {
            "a.ts": "import { f } from './b'\nexport function g() { return f() }\n",
            "b.ts": "export function f() { return 1 }\nexport function h() { return f() }\n",
        },
    )
    built = build_ts_corpus([("repo", root)])
    real_site = ts_resolve._Resolver.site

    def site(self: object, f: object, s: object) -> None:
        if getattr(f, "path", "") == "a.ts":
            raise RecursionError("maximum recursion depth exceeded")  # stands in for a resolver bug
        real_site(self, f, s)

    monkeypatch.setattr(ts_resolve._Resolver, "site", site)
    resolution = ts.resolve(built.corpora["typescript"])
    (failure,) = [u for u in resolution.unresolved if u.reason == "RESOLVER_FAILED"]
    assert (failure.path, failure.repository) == ("a.ts", "repo")
    assert "RecursionError" in failure.detail
    sources = {e.source for e in resolution.edges}
    assert built.key("b.h") in sources  # b.ts still resolved
