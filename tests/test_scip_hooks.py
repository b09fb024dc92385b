"""Every language's hooks into the SCIP route keep the route's signatures (a hook the route calls with other
arguments fails only when a repository of that language is bound: found after the route's ``declaration``
gained the use's source while Java was being ported onto it)."""

from __future__ import annotations

import inspect

from indexer.languages import registry
from indexer.scip.route import ScipLanguage
from snapshot_format.languages import IDS


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_hook_a_language_overrides_takes_the_routes_parameters() -> None:
    for language in IDS:
        registry.adapter_for(language)  # imports the language's analyzer module, and so its hooks
    hooks = _subclasses(ScipLanguage)
    assert len(hooks) >= 4  # python, typescript, dart, java at least
    for cls in hooks:
        for name, base in vars(ScipLanguage).items():
            if name.startswith("_") or not callable(base) or name not in vars(cls):
                continue
            wanted = list(inspect.signature(base).parameters)
            got = list(inspect.signature(vars(cls)[name]).parameters)
            assert got == wanted, f"{cls.__module__}.{cls.__name__}.{name}{tuple(got)} != route's {tuple(wanted)}"
