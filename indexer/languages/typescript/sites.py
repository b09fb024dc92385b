"""The Site vocabulary the TypeScript extractor writes and its CANDIDATE resolver reads.

Sites are cached per file with the extractor's output: change this vocabulary
only together with ``EXTRACTOR_VERSION``. A site's position is that of the
name it resolves (the last identifier of a chain), which is also where the
analyzer reports its occurrence, so exact answers replace candidates site by site.

Chains are dotted: ``f``, ``ns.f``, ``this.m``, ``a.b.c``; a head ``?``
stands for a receiver that is not a name chain (``f().g``).

Site kinds (``name``; ``extra``)
    ``import``    ``import d, {a as b}, * as ns from "m"``: name = the imported
                  export (``default``, ``*`` or the name), extra = (specifier, local name)
    ``reexport``  ``export {a as b} from "m"`` / ``export * [as ns] from "m"``:
                  name = the exported name (``*`` for a star), extra = (specifier, imported name)
    ``export``    ``export {a as b}`` / ``export default a``: name = exported name, extra = (local name,)
    ``call``      a call's callee chain; extra = (chain,)
    ``new``       a ``new`` expression's constructor chain; extra = (chain,)
    ``arg``       a name chain passed as an argument (a callback when it names a function)
    ``type``      a type reference; extra = (chain,)
    ``extends``   a class's or interface's base; extra = (chain,)
    ``implements`` an interface a class implements; extra = (chain,)
"""

IMPORT = "import"
REEXPORT = "reexport"
EXPORT = "export"
CALL = "call"
NEW = "new"
ARG = "arg"
TYPE = "type"
EXTENDS = "extends"
IMPLEMENTS = "implements"

CHAIN_KINDS = frozenset({CALL, NEW, ARG, TYPE, EXTENDS, IMPLEMENTS})
