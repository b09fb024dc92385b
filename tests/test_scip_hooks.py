"""Every language's hooks into the SCIP route keep the route's signatures (a hook the route calls with other
arguments fails only when a repository of that language is bound: found after the route's ``declaration``
gained the use's source while Java was being ported onto it)."""

from __future__ import annotations

import inspect
import sys

from indexer.facts import SymbolFact
from indexer.languages import registry
from indexer.scip.route import ProviderHooks, ScipAdapter, ScipLanguage, first_definitions
from snapshot_format.languages import IDS


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_hook_a_language_overrides_takes_the_routes_parameters() -> None:
    for language in IDS:
        registry.adapter_for(language)  # imports the language's analyzer module, and so its hooks
    hooks = [cls for cls in _subclasses(ProviderHooks) if cls is not ScipLanguage]
    # python, typescript, dart, java, rust on the route; go's go/types uses through its provider binding
    assert {cls.__module__.split(".")[2] for cls in hooks} >= {"python", "typescript", "dart", "java", "rust", "go"}
    for cls in hooks:
        for route in (ProviderHooks, ScipLanguage):
            for name, base in vars(route).items():
                if name.startswith("_") or not callable(base) or name not in vars(cls):
                    continue
                wanted = list(inspect.signature(base).parameters)
                got = list(inspect.signature(vars(cls)[name]).parameters)
                assert got == wanted, f"{cls.__module__}.{cls.__name__}.{name}{tuple(got)} != route's {tuple(wanted)}"


def test_every_scip_language_binds_and_loops_through_the_route() -> None:
    """A SCIP adapter keeps the route's ``bind`` (its hooks differ, not its binding), and its hooks the route's
    occurrence loop: none defines a ``bind`` or a ``document_uses`` of its own (Rust's were the last)."""
    scip = {}
    for language in IDS:
        adapter = registry.adapter_for(language)
        if isinstance(adapter, ScipAdapter):
            scip[language] = adapter
    assert {"python", "typescript", "dart", "java", "rust"} <= scip.keys()
    for language, adapter in scip.items():
        assert type(adapter).bind is ScipAdapter.bind, f"{language} binds on its own"
        assert isinstance(adapter.hooks, ScipLanguage)
        module = sys.modules[type(adapter).__module__]
        assert not hasattr(module, "_document_uses"), f"{language} keeps its own occurrence loop"


def test_first_definitions_keeps_every_definition_of_a_shared_symbol_when_asked() -> None:
    """rust-analyzer gives one symbol to several declarations: the route keeps each (once, in order) for the
    language's ``target`` to tell apart, and returns all the analyzer's own declarations, not only the first."""

    def decl(qn: str, line: int) -> SymbolFact:
        return SymbolFact(qn.rsplit("::", 1)[-1], qn, "method", line, 4, line, 10)

    a, b, c = decl("m::A::custom", 2), decl("m::B::custom", 8), decl("m::made", 12)
    per_path = [("a.rs", [("S", a, False), ("S", a, False)]), ("b.rs", [("S", b, False), ("S", c, True)])]
    first: dict[str, tuple[str, SymbolFact]] = {}
    every: dict[str, list[tuple[str, SymbolFact]]] = {}
    made = first_definitions(per_path, first, every)
    assert first == {"S": ("a.rs", a)}
    assert every == {"S": [("a.rs", a), ("b.rs", b), ("b.rs", c)]}
    assert made == {"b.rs": [c]}
    only_first: dict[str, tuple[str, SymbolFact]] = {}
    assert first_definitions(per_path, only_first) == {}  # without ``every``: the first file's wins, none made
    assert only_first == first
