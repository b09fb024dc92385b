"""Names a developer types, beyond the qualified name as indexed (server/selector.py calls ``typed_forms``).

The graph stores each language's own qualified name: Python ``click.core.Context.invoke``, Go
``NewFlagSet`` or ``FlagSet.Parse`` (the package is a field, not part of the name), TypeScript
``QueryClient.getQueryCache``. A developer also writes:

- Go by package: ``pflag.NewFlagSet`` (the package name, the import path's last element, a ``/vN`` or
  ``.vN`` version suffix skipped), ``github.com/spf13/pflag.NewFlagSet`` (the whole import path), or any
  tail of the import path (``spf13/pflag.NewFlagSet``);
- Python by the module path it imports from: ``click.Context.invoke`` where ``click/__init__.py`` imports
  ``Context`` from ``click.core`` (followed through the module's import and re-export edges, so only what
  the module really binds);
- Python's ``module:Name`` (entry points) and ``path/file.py::Class::method`` (pytest node ids);
- a tail of the qualified name: ``Context.invoke``, ``core.Context.invoke``, or the module-relative label a
  compact answer shows (``invoke`` in the group of ``src/click/core.py``, pinned by repository and path);
- Rust paths: a tail by ``::`` (``Version::parse``, ``Version::from_str`` for the trait member stored as
  ``semver::Version::<FromStr>::from_str``), the same with dots (``Version.parse``), ``crate::…`` from the
  crate's root, and ``krate::Name::member`` through the module's ``pub use`` re-exports.

Every form is tried only when the exact qualified name matched nothing, and ambiguity is never resolved
silently: several matches are listed with their packages (``candidate_label``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from snapshot_format import languages
from snapshot_format.keys import key_to_bytes
from snapshot_format.reader import Generation
from snapshot_format.records import Symbol
from snapshot_format.vocab import EdgeKind

_VERSION_ELEMENT = re.compile(r"v\d+")
_BINDING_KINDS = (int(EdgeKind.IMPORTS_SYMBOL), int(EdgeKind.REEXPORTS), int(EdgeKind.EXPORTS))
_MAX_MODULE_MATCHES = 8


def go_package_name(import_path: str) -> str:
    """The name a Go import path is usually referred to by: its last element, minus a major-version suffix."""
    elements = [e for e in import_path.split("/") if e]
    if not elements:
        return ""
    last = elements[-1]
    if _VERSION_ELEMENT.fullmatch(last) and len(elements) > 1:
        last = elements[-2]
    return re.sub(r"\.v\d+$", "", last)


def package_matches(package: str, typed: str, language: str) -> bool:
    """Whether ``typed`` names ``package``: whole, by a tail of its path, or (a package named by an import path,
    as Go's) by its package name."""
    if not package or not typed:
        return False
    if package == typed or package.endswith("/" + typed):
        return True
    row = languages.language(language)
    return row is not None and row.module_names == "import_path" and go_package_name(package) == typed


def _split_points(text: str, sep: str = ".") -> Iterable[tuple[str, str]]:
    """Every (head, tail) with ``head + sep + tail == text``, the longest tail first."""
    i = text.find(sep)
    while i != -1:
        if 0 < i < len(text) - len(sep):
            yield text[:i], text[i + len(sep) :]
        i = text.find(sep, i + 1)


def last_element(text: str) -> str:
    """The unqualified name a typed name ends with (``NewLRU`` of ``lru.NewLRU``, ``parse`` of ``Version::parse``)."""
    for sep in ("::", ".", ":", "/"):
        text = text.rsplit(sep, 1)[-1]
    return text


def is_qualified(text: str) -> bool:
    """Whether ``text`` is written as a qualified name (``pflag.NewFlagSet``, ``Version::parse``)."""
    return "." in text or "::" in text


def _by_package(gen: Generation, text: str, repository: str | None) -> list[Symbol]:
    """``<package>.<qualified name>``: the qualified name exactly, in a package the head names."""
    out: list[Symbol] = []
    for head, tail in _split_points(text):
        for sym in gen.symbols_by_qualified_name(tail, repository):
            if sym.qualified_name.startswith(head + "."):
                continue  # the head is the name's own prefix, not a package (the tail form covers it)
            if package_matches(sym.package, head, sym.language):
                out.append(sym)
    return out


def _through_module(gen: Generation, text: str, repository: str | None, sep: str = ".") -> list[Symbol]:
    """``<module>.<bound name>[.<member>…]``: what the module binds by import or re-export, then its members."""
    out: list[Symbol] = []
    for head, tail in _split_points(text, sep):
        modules = [m for m in gen.symbols_by_qualified_name(head, repository) if m.kind == "module"]
        first, _, rest = tail.partition(sep)
        for module in modules[:_MAX_MODULE_MATCHES]:
            bound = dict.fromkeys(e.target for e in gen.edges_out(module.key, _BINDING_KINDS))
            for target in gen.symbols_by_raw([key_to_bytes(k) for k in bound]):
                if target.name != first:
                    continue
                if not rest:
                    out.append(target)
                    continue
                out.extend(gen.symbols_by_qualified_name(f"{target.qualified_name}{sep}{rest}", target.repository))
    return out


def rust_plain(qualified_name: str) -> str:
    """A Rust qualified name without its trait-impl segments (``a::Version::<FromStr>::from_str`` → ``a::Version::from_str``).

    An ``<impl …>`` segment (an impl whose type has no path) is kept: what it holds is no member of a named type.
    """
    out: list[str] = []
    i = 0
    while i < len(qualified_name):
        if qualified_name.startswith("::<", i) and not qualified_name.startswith("::<impl ", i):
            depth, j = 0, i + 2
            while j < len(qualified_name):
                depth += {"<": 1, ">": -1}.get(qualified_name[j], 0)
                j += 1
                if depth == 0:
                    break
            i = j
            continue
        out.append(qualified_name[i])
        i += 1
    return "".join(out)


def _crate_path(sym: Symbol) -> bool:
    """Whether the symbol's language names declarations by ``::`` paths from a crate's root (Rust)."""
    row = languages.language(sym.language)
    return row is not None and row.module_names == "crate_path"


def _rust_forms(gen: Generation, path: str, repository: str | None) -> list[Symbol]:
    """A Rust path as a developer writes it: a tail by ``::`` (trait members by their type), ``crate::…`` from a
    crate's root, and ``krate::Name::member`` through the ``pub use`` of the module it names."""
    last = path.rsplit("::", 1)[-1]
    named = [s for s in gen.symbols_by_name(last, repository) if _crate_path(s)] if last else []
    rooted = path.startswith("crate::")
    if rooted:  # from the root of each crate that declares the name
        rest = path[len("crate::") :]
        paths = [f"{c}::{rest}" for c in dict.fromkeys(rust_plain(s.qualified_name).split("::")[0] for s in named)]
    else:
        paths = [path]
    out: list[Symbol] = []
    for full in paths:
        direct = [
            s
            for s in named
            if (plain := rust_plain(s.qualified_name)) == full or (not rooted and plain.endswith("::" + full))
        ]
        if not direct and "::" in full:
            direct = [s for s in _through_module(gen, full, repository, "::") if _crate_path(s)]
        out.extend(direct)
    return out


def _by_tail(gen: Generation, text: str, repository: str | None) -> list[Symbol]:
    """A dotted tail of the qualified name: declarations named by its last element whose name ends with it.

    An overload's qualified name ends with its parameter list (Java: ``Options.addOption(Option)``): the
    tail without one names every overload, with one the overload it spells."""
    bare = text.split("(", 1)[0]
    last = bare.rsplit(".", 1)[-1]
    return [
        s
        for s in gen.symbols_by_name(last, repository)
        if s.qualified_name.endswith("." + text)
        or (
            "(" not in text
            and s.qualified_name.endswith(")")
            and s.qualified_name.split("(", 1)[0].endswith("." + bare)
        )
    ]


def _normalized(text: str) -> list[tuple[str, str | None]]:
    """(qualified-name text, pinned path or None) readings of the Python spellings ``a.b:C.d`` and ``f.py::C::d``."""
    readings: list[tuple[str, str | None]] = []
    if "::" in text:
        left, _, right = text.partition("::")
        if left.endswith((".py", ".pyi")):
            readings.append((right.replace("::", "."), left))
    if text.count(":") == 1 and "::" not in text:
        module, _, qual = text.partition(":")
        if module and qual:
            readings.append((f"{module}.{qual}", None))
    return readings


def typed_forms(gen: Generation, text: str, repository: str | None) -> list[tuple[Symbol, str | None]]:
    """Symbols ``text`` names in one of the typed forms, each with the path the spelling pins (or None).

    Deduplicated, in the order found; the caller narrows by repository and path and decides between one
    match and an ambiguity.
    """
    found: dict[str, tuple[Symbol, str | None]] = {}
    for qualified, pinned in _normalized(text):
        for sym in gen.symbols_by_qualified_name(qualified, repository):
            found.setdefault(sym.key, (sym, pinned))
        if pinned is not None:
            for sym in _by_tail(gen, qualified, repository):
                found.setdefault(sym.key, (sym, pinned))
    if not found and "::" not in text:
        # A bare word is only a tail (a compact label's ``area`` pinned by its file group's repository and path).
        finders = (_by_package, _through_module, _by_tail) if "." in text else (_by_tail,)
        for finder in finders:
            for sym in finder(gen, text, repository):
                found.setdefault(sym.key, (sym, None))
    if not found and is_qualified(text):
        # Rust's own separator, or dots for it (``Version.parse``), when no dotted reading named anything
        for sym in _rust_forms(gen, text.replace(".", "::"), repository):
            found.setdefault(sym.key, (sym, None))
    return list(found.values())


def candidate_label(sym: Symbol) -> str:
    """``repo:path:line qualified_name (kind)``, plus the package when the qualified name does not spell it."""
    label = f"{sym.repository}:{sym.path}:{sym.start_line} {sym.qualified_name} ({sym.kind}"
    if not spells_package(sym):
        label += f", package {sym.package}"
    return label + ")"


def spells_package(sym: Symbol) -> bool:
    """Whether the symbol's qualified name starts with its package (``a.b.f`` of ``a.b``, Rust ``a::b::f``)."""
    return not sym.package or sym.qualified_name.startswith((sym.package + ".", sym.package + "::"))
