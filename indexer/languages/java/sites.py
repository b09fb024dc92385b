"""The Site vocabulary the Java extractor writes and the CANDIDATE resolver reads.

Sites are cached per file: change this vocabulary only together with ``EXTRACTOR_VERSION``. Every site
sits on the identifier being resolved (the method name of a call, the last identifier of a type), which is
where scip-java reports its occurrence, so an exact answer replaces the candidate at the same position.

Site kinds (``name`` is the identifier or the dotted name as written)
    ``import``      an import; name = the imported name (``com.ex.Shape``, ``com.ex`` for ``com.ex.*``);
                    extra = (``static`` or "", ``*`` or "")
    ``call``        a method invocation; extra = (qualifier text, binding, qualifier type, argument count,
                    argument types: comma-separated, each as syntax gives it or "")
    ``new``         the type of an object creation (``new T(...)``): the constructor call;
                    extra = ("", "", "", argument count, argument types); a call javac makes unwritten has a
                    sixth, ``implicit``: a constructor without this(...)/super(...) calls its superclass's
                    no-argument one (the site is at the constructor; at the class for its default constructor,
                    name = the superclass as written), an enum constant the enum's constructor of its arguments
                    (at the constant's name, from the enum; name = the enum's)
    ``callback``    a method reference (``T::m``, ``x::m``); extra as for ``call``
    ``ref``         a field read or written (``x.f``, a bare name no local binds); extra as for ``call``
    ``type``        a type name in a type position
    ``extends``     a superclass or an extended interface; enclosing = the declaring type
    ``implements``  an implemented interface; enclosing = the declaring type
    ``annotation``  an annotation's type name

Qualifier bindings (``extra[1]``)
    ``""``       no qualifier
    ``this``     ``this.m()``; ``super``: ``super.m()``
    ``local``    a name bound in the enclosing method (parameter, local variable); ``qualifier type`` is its
                 declared type when written (never ``var``), else ""
    ``name``     a name not bound locally: a field, or a type (``Math.max``)
    ``expr``     any other expression (a call, a chain): its type is unknown to syntax
"""

from __future__ import annotations

IMPORT = "import"
CALL = "call"
NEW = "new"
CALLBACK = "callback"
REF = "ref"
TYPE = "type"
EXTENDS = "extends"
IMPLEMENTS = "implements"
ANNOTATION = "annotation"
