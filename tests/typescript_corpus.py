"""TypeScript/JavaScript corpora built the way the pipeline builds them, for tests: walk, extract, stable keys."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer.corpus import Corpus, RepositoryFacts
from indexer.languages import typescript as ts
from indexer.languages.typescript.modules import language_of
from snapshot_format.stable_key import stable_key
from tests.python_corpus import Declaration

_SKIP = frozenset({"node_modules", "dist", "build"})


@dataclass
class BuiltTsCorpus:
    """One corpus per language ("typescript", "javascript") sharing one key table, like the pipeline's."""

    corpora: dict[str, Corpus]
    declarations: dict[str, Declaration] = field(default_factory=dict)

    def key(self, qualified_name: str, repository: str | None = None) -> str:
        found = [
            k
            for k, d in self.declarations.items()
            if d.qualified_name == qualified_name and repository in (None, d.repository)
        ]
        assert len(found) == 1, f"{qualified_name!r} declared {len(found)} times"
        return found[0]


def source_paths(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP)
        out += [Path(dirpath, n).relative_to(root).as_posix() for n in filenames if n.endswith(ts.EXTENSIONS)]
    return sorted(out)


def build_ts_corpus(repositories: Iterable[tuple[str, Path]]) -> BuiltTsCorpus:
    """Extract every TypeScript and JavaScript file of each (name, root) repository and key its declarations."""
    keys: dict[tuple[str, str, str, str], str] = {}
    built = BuiltTsCorpus({})
    repos: dict[str, list[RepositoryFacts]] = {"typescript": [], "javascript": []}
    for name, root in repositories:
        per_lang = {lang: RepositoryFacts(name=name, root=str(root)) for lang in repos}
        paths = source_paths(root)
        for path in paths:
            language = language_of(path)
            package = ts.package_for(path, frozenset(paths))
            facts = ts.extract(path, (root / path).read_bytes(), package)
            per_lang[language].files.append(facts)
            for sym in facts.symbols:
                key = stable_key(
                    language=language,
                    repository=name,
                    package=package,
                    module=path,
                    qualified_name=sym.qualified_name,
                    kind=sym.kind,
                    discriminator="",
                )
                keys[(name, path, sym.qualified_name, sym.kind)] = key
                built.declarations[key] = Declaration(name, path, sym.qualified_name, sym.kind)
        for lang, facts in per_lang.items():
            repos[lang].append(facts)

    def key_of(repository: str, path: str, qualified_name: str, kind: str) -> str | None:
        return keys.get((repository, path, qualified_name, kind))

    built.corpora = {lang: Corpus(language=lang, repositories=rs, key_of=key_of) for lang, rs in repos.items()}
    return built
