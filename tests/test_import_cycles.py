"""The product's modules import each other in one direction: no import circle (issue 26), whatever the import's
place (a deferred import inside a function closes a circle as well: the two modules still depend on each other).

The order of the index run's own modules is pyproject.toml's import-linter layers contract.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

PRODUCT = ("snapshot_format", "indexer", "server", "kivgraph_cli")


def circles(graph: grimp.ImportGraph) -> set[frozenset[str]]:
    """The strongly connected sets of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_the_product_has_no_import_circle() -> None:
    found = sorted(sorted(c) for c in circles(grimp.build_graph(*PRODUCT)))
    assert found == [], f"import circles: {found}"


def test_the_search_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert circles(graph) == {frozenset({"a.x", "a.y"})}


def test_a_deferred_import_closes_a_circle_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circular"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f() -> None:\n    from circular.high import g\n\n    g()\n")
    (package / "high.py").write_text("from circular.low import f\n\n\ndef g() -> None:\n    f()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert circles(grimp.build_graph("circular", cache_dir=None)) == {frozenset({"circular.low", "circular.high"})}
