"""rust-analyzer's SCIP symbols and kivgraph's Rust declarations: the same item under two names.

rust-analyzer names an item ``rust-analyzer cargo <package> <version> <descriptors>``:
module descriptors (``de/value/``, the crate root is ``crate/``), then the item
(``Deserializer#``, ``from_str().``, ``Value#Null#``, ``Visitor#visit_str().``,
``macros/json!``). An impl's members are named where the impl is written,
after its self type and trait: ``de/value/impl#[`MapDeserializer<'de, I, E>`][`Deserializer<'de>`]deserialize_any().``
(the trait is left out for some traits of the toolchain). Macros are named in the
module that defines them, ``#[macro_export]`` or not.

kivgraph names the same declarations by Rust path (``serde::de::Deserializer``,
``Type::<Trait>::method`` for impl members, see extract.py). Within a
repository a use is tied to its target by the position of the target's
definition occurrence, never by name. Across repositories the consumer's
index holds only the provider's symbol, so the provider's declarations are
indexed here under the key rust-analyzer gives them (``key_of_symbol``),
computed from the provider's own files: module paths follow its ``mod``
declarations from the library root (``#[path]`` included, so
``#[path = "private/mod.rs"] pub mod __private;`` is ``__private/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from indexer.facts import FileFacts, SymbolFact
from indexer.languages.rust import modules as cargo
from indexer.languages.rust import sites as S
from indexer.scip.join import MACRO, METHOD, NAMESPACE, TERM, TYPE, TYPE_PARAMETER, Descriptor, ScipSymbol, parse_symbol

# The descriptor suffix of each kind of declaration.
SUFFIX_OF_KIND = {
    "module": NAMESPACE,
    "struct": TYPE,
    "enum": TYPE,
    "union": TYPE,
    "trait": TYPE,
    "type_alias": TYPE,
    "associated_type": TYPE,
    "enum_member": TYPE,
    "function": METHOD,
    "method": METHOD,
    "const": TERM,
    "static": TERM,
    "field": TERM,
    "macro": MACRO,
}
_IMPL_MEMBER_KINDS = frozenset({"method", "const", "associated_type"})
# Containers whose members are never an impl's: a trait's items, a module's or a body's own declarations.
_NOT_IMPL_OWNERS = frozenset({"trait", "module", "function", "method", "const", "static"})
TOOLCHAIN_PACKAGES = S.TOOLCHAIN_CRATES | {"std_detect", "rustc-std-workspace-core", "rustc-std-workspace-alloc"}


@dataclass(frozen=True)
class ItemKey:
    """An item by module path, member path and the suffix of its last descriptor."""

    module: tuple[str, ...]
    members: tuple[str, ...]
    suffix: str


@dataclass(frozen=True)
class ImplKey:
    """An impl member: the impl's module, self type and trait names ("" when rust-analyzer left it out)."""

    module: tuple[str, ...]
    self_type: str  # "_" for a type that has no name of its own
    trait: str
    member: str
    suffix: str


Key = ItemKey | ImplKey


def bare_name(text: str) -> str:
    """A type as rust-analyzer renders it, reduced to its name: ``&'a MapDeserializer<'de, I>`` → ``MapDeserializer``."""
    text = text.strip()
    while text.startswith(("&", "*")):
        text = text[1:].lstrip()
        if text.startswith("'"):
            text = text.split(" ", 1)[1] if " " in text else ""
        for word in ("mut ", "const ", "dyn "):
            if text.startswith(word):
                text = text[len(word) :]
    text = text.split("<", 1)[0].strip()
    return text.rsplit("::", 1)[-1]


def key_of_descriptors(descriptors: tuple[Descriptor, ...]) -> Key | None:
    """The key of a symbol's descriptors; None for what is no declaration (an impl block, a parameter)."""
    module: list[str] = []
    i = 0
    while i < len(descriptors) and descriptors[i].suffix == NAMESPACE:
        if not (i == 0 and descriptors[i].name == "crate"):
            module.append(descriptors[i].name)
        i += 1
    rest = descriptors[i:]
    if not rest:
        return ItemKey(tuple(module), (), NAMESPACE)
    if rest[0].name == "impl" and rest[0].suffix == TYPE:
        params = [d.name for d in rest[1:] if d.suffix == TYPE_PARAMETER]
        tail = [d for d in rest[1:] if d.suffix != TYPE_PARAMETER]
        if not params or len(tail) != 1:
            return None
        self_type = bare_name(params[0]) if params[0] != "_" else "_"
        trait = bare_name(params[1]) if len(params) > 1 else ""
        return ImplKey(tuple(module), self_type, trait, tail[0].name, tail[0].suffix)
    if any(d.suffix not in (TYPE, TERM, METHOD, MACRO) for d in rest):
        return None
    return ItemKey(tuple(module), tuple(d.name for d in rest), rest[-1].suffix)


def split_path(qn: str) -> list[str]:
    """A qualified name's segments: ``a::T::<From<b::C>>::f`` → ``[a, T, <From<b::C>>, f]`` (``::`` in ``<>`` kept)."""
    out: list[str] = []
    depth = start = 0
    i = 0
    while i < len(qn):
        ch = qn[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0 and qn.startswith("::", i):
            out.append(qn[start:i])
            i += 2
            start = i
            continue
        i += 1
    out.append(qn[start:])
    return out


def join_path(segments: Iterable[str]) -> str:
    """The inverse of ``split_path``."""
    return "::".join(segments)


def parse(symbol: str) -> ScipSymbol | None:
    """A global rust-analyzer symbol, or None (``local N`` and anything unreadable)."""
    return parse_symbol(symbol)


def is_toolchain(sym: ScipSymbol) -> bool:
    """A symbol of the standard library (matched by origin: the sysroot's crates carry a URL as version)."""
    return sym.package in TOOLCHAIN_PACKAGES or sym.version.startswith("https://github.com/rust-lang/rust")


# -- a package's declarations under rust-analyzer's keys -----------------------------------------------------


@dataclass
class PackageTable:
    """The declarations of one Cargo package (its library crate) under the keys rust-analyzer names them by."""

    items: dict[ItemKey, list[tuple[str, SymbolFact]]] = field(default_factory=dict)
    impls: dict[tuple[tuple[str, ...], str, str], list[tuple[str, str, str, SymbolFact]]] = field(default_factory=dict)

    def lookup(self, key: Key) -> list[tuple[str, SymbolFact]]:
        """The (path, declaration) pairs a key may name (an impl member needs its self type and trait to agree)."""
        if isinstance(key, ItemKey):
            return list(self.items.get(key, []))
        out: list[tuple[str, SymbolFact]] = []
        for path, self_type, trait, decl in self.impls.get((key.module, key.member, key.suffix), []):
            if "_" not in (key.self_type, self_type) and key.self_type != self_type:
                continue
            if key.trait and key.trait != trait:
                continue
            out.append((path, decl))
        return out


def module_paths(files: dict[str, FileFacts], lib_root: str) -> dict[str, tuple[str, ...]]:
    """Each file of a library crate with the module path rust-analyzer gives it (its ``mod`` declarations followed).

    Files no ``mod`` chain reaches from ``lib_root`` are left out (tests, examples, files of other targets).
    """
    out: dict[str, tuple[str, ...]] = {}
    if lib_root not in files:
        return out
    queue: list[tuple[str, tuple[str, ...]]] = [(lib_root, ())]
    while queue:
        path, module = queue.pop()
        if path in out:
            continue
        out[path] = module
        ff = files[path]
        for site in ff.sites:
            if site.kind != S.MOD:
                continue
            scope, attribute = site.extra[0], site.extra[1]
            inner = scope[len(ff.package) + 2 :].split("::") if scope.startswith(ff.package + "::") else []
            for child in cargo.child_module_paths(path, ff.package, scope, site.name, attribute):
                if child in files:
                    queue.append((child, (*module, *inner, site.name)))
                    break
    return out


def _module_spans(ff: FileFacts) -> list[SymbolFact]:
    return [s for s in ff.symbols if s.kind == "module"]


def _innermost_module(ff: FileFacts, decl: SymbolFact, modules: list[SymbolFact]) -> SymbolFact | None:
    """The module symbol (the file's, or an inline ``mod``) whose span holds the declaration."""
    best: SymbolFact | None = None
    for m in modules:
        if m is decl:
            continue
        inside = (m.start_line, m.start_col) <= (decl.start_line, decl.start_col) and (
            (decl.end_line, decl.end_col) <= (m.end_line, m.end_col) or m.qualified_name == ff.package
        )
        if inside and (best is None or (m.start_line, m.start_col) >= (best.start_line, best.start_col)):
            best = m
    return best


def table(files: dict[str, FileFacts], lib_root: str, kinds: dict[str, str]) -> PackageTable:
    """The package table of a library crate whose files are ``files`` (repository-relative paths).

    ``kinds`` maps a qualified name of the repository to its kind, to tell an impl member (its container is
    a type, or no declaration) from a trait's own item.
    """
    out = PackageTable()
    for path, module in module_paths(files, lib_root).items():
        ff = files[path]
        mods = _module_spans(ff)
        for decl in ff.symbols:
            suffix = SUFFIX_OF_KIND.get(decl.kind)
            if suffix is None:
                continue
            owner = _innermost_module(ff, decl, mods) if decl.qualified_name != ff.package else None
            inline = split_path(owner.qualified_name)[len(split_path(ff.package)) :] if owner is not None else []
            where = (*module, *inline)
            if decl.kind == "module":
                mod_path = module if decl.qualified_name == ff.package else (*where, decl.name)
                out.items.setdefault(ItemKey(mod_path, (), NAMESPACE), []).append((path, decl))
                continue
            if decl.kind == "macro":
                out.items.setdefault(ItemKey(where, (decl.name,), MACRO), []).append((path, decl))
                continue
            if decl.kind in _IMPL_MEMBER_KINDS and kinds.get(decl.container) not in _NOT_IMPL_OWNERS:
                impl = _impl_parts(decl, owner.qualified_name if owner is not None else ff.package)
                if impl is not None:
                    self_type, trait = impl
                    out.impls.setdefault((where, decl.name, suffix), []).append((path, self_type, trait, decl))
                    continue
            base = owner.qualified_name if owner is not None else ff.package
            segments = split_path(decl.qualified_name)
            prefix = split_path(base)
            if segments[: len(prefix)] != prefix or len(segments) == len(prefix):
                continue
            out.items.setdefault(ItemKey(where, tuple(segments[len(prefix) :]), suffix), []).append((path, decl))
    return out


def _impl_parts(decl: SymbolFact, module_qn: str) -> tuple[str, str] | None:
    """(self type name, trait name or "") of an impl member from its qualified name (extract.py's scheme)."""
    segments = split_path(decl.qualified_name)
    if len(segments) < 2:
        return None
    owner = segments[-2]
    if owner.startswith("<impl ") and owner.endswith(">"):  # a blanket impl: ``<impl Tr for T>``
        trait = owner[len("<impl ") : -1].split(" for ", 1)[0]
        return "_", bare_name(trait)
    if owner.startswith("<") and owner.endswith(">"):  # ``Type::<Trait<..>>::m``
        if len(segments) < 3:
            return None
        return bare_name(segments[-3]), bare_name(owner[1:-1])
    if decl.container and decl.qualified_name == f"{decl.container}::{decl.name}":
        return bare_name(owner), ""
    return None


def declarations_by_kind(files: Iterable[FileFacts]) -> dict[str, str]:
    """Qualified name → kind for every declaration (the first of a name; fields never own anything)."""
    out: dict[str, str] = {}
    for ff in files:
        for s in ff.symbols:
            if s.kind != "field":
                out.setdefault(s.qualified_name, s.kind)
    return out


def lib_root(package_dir: str, lib_path: str) -> str:
    return f"{package_dir}/{lib_path}" if package_dir else lib_path


def iter_keys(tbl: PackageTable) -> Iterator[tuple[Key, str, SymbolFact]]:
    """Every (key, path, declaration) of a table (tests and the benchmark's self-check)."""
    for key, hits in tbl.items.items():
        for path, decl in hits:
            yield key, path, decl
    for (module, member, suffix), hits in tbl.impls.items():
        for path, self_type, trait, decl in hits:
            yield ImplKey(module, self_type, trait, member, suffix), path, decl


def files_of_package(root: Path, files: Iterable[FileFacts], directory: str) -> dict[str, FileFacts]:
    """The files a package's Cargo.toml governs (nearest manifest), by path."""
    return {
        ff.path: ff
        for ff in files
        if ff.parsed and (m := cargo.manifest_for(root, ff.path)) is not None and m.directory == directory
    }
