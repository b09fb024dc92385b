package main

// IMPLEMENTS for generic declarations. go/types answers types.Implements only for instantiated
// types, and a declaration such as `type LRU[K comparable, V any] struct` or
// `type Cache[K comparable, V any] interface` is not one. relate asks the question kivgraph's
// graph needs, one level up: is there an instantiation of the type that implements an
// instantiation of the interface? It unifies each interface method's signature with the
// type's method of the same name (the type instantiated with its own type parameters, so its
// methods are written in those), the type parameters of both declarations free. The most
// general unifier gives both sides' type arguments; go/types then instantiates them (checking
// the constraints) and confirms with types.Implements. When unification fails no instantiation
// can implement the interface (identity is structural for type literals and nominal for named
// types, so a syntactic mismatch is final). When the unifier meets a type it cannot take apart
// with a type parameter inside (a type set, a union), or the constraints reject arguments that
// still hold free type parameters (some instantiations would pass, others not), the relation is
// undecided and the reason says which.

import (
	"fmt"
	"go/types"
)

type relation int

const (
	notImplemented relation = iota
	implemented
	undecided
)

// relate decides whether some instantiation of named (a declaration that is not an interface)
// implements some instantiation of the interface declaration iface. For implemented it returns
// the instantiated type whose method set pairs with the interface's methods; for undecided, why.
func relate(named, iface *types.Named) (relation, types.Type, string) {
	it := iface.Underlying().(*types.Interface)
	tparams, iparams := typeParams(named), typeParams(iface)
	if len(tparams) == 0 && len(iparams) == 0 {
		if types.Implements(named, it) || types.Implements(types.NewPointer(named), it) {
			return implemented, named, ""
		}
		return notImplemented, nil, ""
	}
	self := types.Type(named)
	if len(tparams) > 0 {
		inst, err := types.Instantiate(nil, named, tparams, false)
		if err != nil {
			return undecided, nil, fmt.Sprintf("%s cannot be instantiated with its own type parameters: %v", named.Obj().Name(), err)
		}
		self = inst
	}
	ptr := types.NewPointer(self)
	u := newUnifier(tparams, iparams)
	var blocked string
	for i := 0; i < it.NumMethods(); i++ {
		im := it.Method(i)
		obj, _, _ := types.LookupFieldOrMethod(ptr, false, im.Pkg(), im.Name())
		m, ok := obj.(*types.Func)
		if !ok {
			return notImplemented, nil, ""
		}
		switch u.signatures(im.Type().(*types.Signature), m.Type().(*types.Signature)) {
		case mismatch:
			return notImplemented, nil, ""
		case unsupported:
			if blocked == "" {
				blocked = fmt.Sprintf("the signatures of %s hold a type parameter inside a type set, which the "+
					"helper does not unify", im.Name())
			}
		}
	}
	if blocked != "" {
		return undecided, nil, blocked
	}
	targs, ok1 := u.applyAll(tparams)
	iargs, ok2 := u.applyAll(iparams)
	if !ok1 || !ok2 {
		return undecided, nil, "the type arguments found hold a type the helper does not rebuild"
	}
	ground := !u.mentionsFree(targs) && !u.mentionsFree(iargs)
	tinst := types.Type(named)
	if len(tparams) > 0 {
		inst, err := types.Instantiate(nil, named, targs, true)
		if err != nil {
			return constraintVerdict(ground, named, iface, err)
		}
		tinst = inst
	}
	iinst := types.Type(iface)
	if len(iparams) > 0 {
		inst, err := types.Instantiate(nil, iface, iargs, true)
		if err != nil {
			return constraintVerdict(ground, named, iface, err)
		}
		iinst = inst
	}
	iu := iinst.Underlying().(*types.Interface)
	if types.Implements(tinst, iu) || types.Implements(types.NewPointer(tinst), iu) {
		return implemented, tinst, ""
	}
	if ground {
		return notImplemented, nil, ""
	}
	return undecided, nil, fmt.Sprintf("the method signatures unify with %s and %s, but go/types does not confirm "+
		"that it implements it", types.TypeString(tinst, shortQualifier), types.TypeString(iinst, shortQualifier))
}

// constraintVerdict: arguments without free type parameters that break a constraint settle the
// question (no instantiation fits); arguments with some are met by some instantiations only.
func constraintVerdict(ground bool, named, iface *types.Named, err error) (relation, types.Type, string) {
	if ground {
		return notImplemented, nil, ""
	}
	return undecided, nil, fmt.Sprintf("some instantiations of %s implement %s and others do not (%v)",
		named.Obj().Name(), iface.Obj().Name(), err)
}

func shortQualifier(p *types.Package) string { return p.Name() }

func typeParams(n *types.Named) []types.Type {
	list := n.TypeParams()
	out := make([]types.Type, list.Len())
	for i := range out {
		out[i] = list.At(i)
	}
	return out
}

// -- unification --------------------------------------------------------------------------------

type outcome int

const (
	unified outcome = iota
	mismatch
	unsupported
)

// worse combines two outcomes: a mismatch is final, an unsupported part leaves the rest to decide.
func worse(a, b outcome) outcome {
	if a == mismatch || b == mismatch {
		return mismatch
	}
	if a == unsupported || b == unsupported {
		return unsupported
	}
	return unified
}

type unifier struct {
	free  map[*types.TypeParam]bool
	bound map[*types.TypeParam]types.Type
}

func newUnifier(lists ...[]types.Type) *unifier {
	u := &unifier{free: map[*types.TypeParam]bool{}, bound: map[*types.TypeParam]types.Type{}}
	for _, list := range lists {
		for _, t := range list {
			u.free[t.(*types.TypeParam)] = true
		}
	}
	return u
}

// signatures unifies an interface method's signature with a method's, receivers aside.
func (u *unifier) signatures(a, b *types.Signature) outcome {
	if a.Variadic() != b.Variadic() {
		return mismatch
	}
	return worse(u.tuples(a.Params(), b.Params()), u.tuples(a.Results(), b.Results()))
}

func (u *unifier) tuples(a, b *types.Tuple) outcome {
	if a.Len() != b.Len() {
		return mismatch
	}
	out := unified
	for i := 0; i < a.Len(); i++ {
		if out = worse(out, u.unify(a.At(i).Type(), b.At(i).Type())); out == mismatch {
			return out
		}
	}
	return out
}

// resolve follows the bindings of a free type parameter.
func (u *unifier) resolve(t types.Type) types.Type {
	for {
		t = types.Unalias(t)
		p, ok := t.(*types.TypeParam)
		if !ok || !u.free[p] {
			return t
		}
		b, ok := u.bound[p]
		if !ok {
			return t
		}
		t = b
	}
}

func (u *unifier) freeParam(t types.Type) (*types.TypeParam, bool) {
	p, ok := t.(*types.TypeParam)
	return p, ok && u.free[p]
}

func (u *unifier) unify(x, y types.Type) outcome {
	x, y = u.resolve(x), u.resolve(y)
	if p, ok := u.freeParam(x); ok {
		return u.bind(p, y)
	}
	if p, ok := u.freeParam(y); ok {
		return u.bind(p, x)
	}
	if !u.mentionsFree([]types.Type{x}) && !u.mentionsFree([]types.Type{y}) {
		if types.Identical(x, y) {
			return unified
		}
		return mismatch
	}
	switch a := x.(type) {
	case *types.Pointer:
		if b, ok := y.(*types.Pointer); ok {
			return u.unify(a.Elem(), b.Elem())
		}
	case *types.Slice:
		if b, ok := y.(*types.Slice); ok {
			return u.unify(a.Elem(), b.Elem())
		}
	case *types.Array:
		if b, ok := y.(*types.Array); ok && a.Len() == b.Len() {
			return u.unify(a.Elem(), b.Elem())
		}
	case *types.Map:
		if b, ok := y.(*types.Map); ok {
			return worse(u.unify(a.Key(), b.Key()), u.unify(a.Elem(), b.Elem()))
		}
	case *types.Chan:
		if b, ok := y.(*types.Chan); ok && a.Dir() == b.Dir() {
			return u.unify(a.Elem(), b.Elem())
		}
	case *types.Signature:
		if b, ok := y.(*types.Signature); ok {
			return u.signatures(a, b)
		}
	case *types.Named:
		b, ok := y.(*types.Named)
		if !ok || a.Origin() != b.Origin() || a.TypeArgs().Len() != b.TypeArgs().Len() {
			break
		}
		out := unified
		for i := 0; i < a.TypeArgs().Len(); i++ {
			if out = worse(out, u.unify(a.TypeArgs().At(i), b.TypeArgs().At(i))); out == mismatch {
				return out
			}
		}
		return out
	case *types.Struct:
		b, ok := y.(*types.Struct)
		if !ok || a.NumFields() != b.NumFields() {
			break
		}
		out := unified
		for i := 0; i < a.NumFields(); i++ {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name() != fb.Name() || fa.Embedded() != fb.Embedded() || a.Tag(i) != b.Tag(i) ||
				!fa.Exported() && fa.Pkg() != fb.Pkg() {
				return mismatch
			}
			if out = worse(out, u.unify(fa.Type(), fb.Type())); out == mismatch {
				return out
			}
		}
		return out
	case *types.Interface:
		b, ok := y.(*types.Interface)
		if !ok {
			break
		}
		if !a.IsMethodSet() || !b.IsMethodSet() {
			return unsupported // a type set: identity compares the sets, which the helper does not unify
		}
		if a.NumMethods() != b.NumMethods() {
			return mismatch
		}
		out := unified
		for i := 0; i < a.NumMethods(); i++ { // both sorted by Id
			ma, mb := a.Method(i), b.Method(i)
			if ma.Id() != mb.Id() {
				return mismatch
			}
			if out = worse(out, u.signatures(ma.Type().(*types.Signature), mb.Type().(*types.Signature))); out == mismatch {
				return out
			}
		}
		return out
	case *types.Union, *types.Tuple:
		return unsupported
	}
	return mismatch // different type constructors: no instantiation makes them identical
}

func (u *unifier) bind(p *types.TypeParam, t types.Type) outcome {
	if q, ok := u.freeParam(t); ok && q == p {
		return unified
	}
	if u.occurs(p, t) {
		return mismatch // T = []T has no finite solution
	}
	u.bound[p] = t
	return unified
}

func (u *unifier) occurs(p *types.TypeParam, t types.Type) bool {
	return mentions(t, func(q *types.TypeParam) bool {
		if q == p {
			return true
		}
		if b, ok := u.bound[q]; ok && u.free[q] {
			return u.occurs(p, b)
		}
		return false
	})
}

func (u *unifier) mentionsFree(ts []types.Type) bool {
	for _, t := range ts {
		if mentions(t, func(q *types.TypeParam) bool {
			if !u.free[q] {
				return false
			}
			if b, ok := u.bound[q]; ok {
				return u.mentionsFree([]types.Type{b})
			}
			return true
		}) {
			return true
		}
	}
	return false
}

// mentions reports whether t holds a type parameter for which hit is true.
func mentions(t types.Type, hit func(*types.TypeParam) bool) bool {
	switch a := types.Unalias(t).(type) {
	case *types.TypeParam:
		return hit(a)
	case *types.Pointer:
		return mentions(a.Elem(), hit)
	case *types.Slice:
		return mentions(a.Elem(), hit)
	case *types.Array:
		return mentions(a.Elem(), hit)
	case *types.Chan:
		return mentions(a.Elem(), hit)
	case *types.Map:
		return mentions(a.Key(), hit) || mentions(a.Elem(), hit)
	case *types.Tuple:
		for i := 0; i < a.Len(); i++ {
			if mentions(a.At(i).Type(), hit) {
				return true
			}
		}
	case *types.Signature:
		return mentions(a.Params(), hit) || mentions(a.Results(), hit)
	case *types.Named:
		for i := 0; i < a.TypeArgs().Len(); i++ {
			if mentions(a.TypeArgs().At(i), hit) {
				return true
			}
		}
	case *types.Struct:
		for i := 0; i < a.NumFields(); i++ {
			if mentions(a.Field(i).Type(), hit) {
				return true
			}
		}
	case *types.Interface:
		for i := 0; i < a.NumMethods(); i++ {
			if mentions(a.Method(i).Type(), hit) {
				return true
			}
		}
		for i := 0; i < a.NumEmbeddeds(); i++ {
			if mentions(a.EmbeddedType(i), hit) {
				return true
			}
		}
	case *types.Union:
		for i := 0; i < a.Len(); i++ {
			if mentions(a.Term(i).Type(), hit) {
				return true
			}
		}
	}
	return false
}

func (u *unifier) applyAll(ts []types.Type) ([]types.Type, bool) {
	out := make([]types.Type, len(ts))
	for i, t := range ts {
		a, ok := u.apply(t)
		if !ok {
			return nil, false
		}
		out[i] = a
	}
	return out, true
}

// apply substitutes the bindings into t; false when t holds a bound parameter inside a type it does
// not rebuild (unify reported such types unsupported, so it does not happen on the unified path).
func (u *unifier) apply(t types.Type) (types.Type, bool) {
	if !mentions(t, func(q *types.TypeParam) bool { _, ok := u.bound[q]; return ok && u.free[q] }) {
		return t, true
	}
	switch a := types.Unalias(t).(type) {
	case *types.TypeParam:
		return u.apply(u.bound[a])
	case *types.Pointer:
		e, ok := u.apply(a.Elem())
		return types.NewPointer(e), ok
	case *types.Slice:
		e, ok := u.apply(a.Elem())
		return types.NewSlice(e), ok
	case *types.Array:
		e, ok := u.apply(a.Elem())
		return types.NewArray(e, a.Len()), ok
	case *types.Chan:
		e, ok := u.apply(a.Elem())
		return types.NewChan(a.Dir(), e), ok
	case *types.Map:
		k, ok1 := u.apply(a.Key())
		e, ok2 := u.apply(a.Elem())
		return types.NewMap(k, e), ok1 && ok2
	case *types.Signature:
		params, ok1 := u.applyTuple(a.Params())
		results, ok2 := u.applyTuple(a.Results())
		return types.NewSignatureType(nil, nil, nil, params, results, a.Variadic()), ok1 && ok2
	case *types.Named:
		args, ok := u.applyAll(typeArgs(a))
		if !ok {
			return nil, false
		}
		inst, err := types.Instantiate(nil, a.Origin(), args, false)
		return inst, err == nil
	case *types.Interface:
		if !a.IsMethodSet() {
			return nil, false
		}
		methods := make([]*types.Func, a.NumMethods())
		for i := range methods {
			m := a.Method(i)
			sig, ok := u.apply(m.Type())
			if !ok {
				return nil, false
			}
			methods[i] = types.NewFunc(m.Pos(), m.Pkg(), m.Name(), sig.(*types.Signature))
		}
		return types.NewInterfaceType(methods, nil).Complete(), true
	case *types.Struct:
		fields := make([]*types.Var, a.NumFields())
		tags := make([]string, a.NumFields())
		for i := range fields {
			f := a.Field(i)
			ft, ok := u.apply(f.Type())
			if !ok {
				return nil, false
			}
			fields[i] = types.NewField(f.Pos(), f.Pkg(), f.Name(), ft, f.Embedded())
			tags[i] = a.Tag(i)
		}
		return types.NewStruct(fields, tags), true
	}
	return nil, false
}

func (u *unifier) applyTuple(t *types.Tuple) (*types.Tuple, bool) {
	vars := make([]*types.Var, t.Len())
	for i := range vars {
		v := t.At(i)
		vt, ok := u.apply(v.Type())
		if !ok {
			return nil, false
		}
		vars[i] = types.NewParam(v.Pos(), v.Pkg(), v.Name(), vt)
	}
	return types.NewTuple(vars...), true
}

func typeArgs(n *types.Named) []types.Type {
	list := n.TypeArgs()
	out := make([]types.Type, list.Len())
	for i := range out {
		out[i] = list.At(i)
	}
	return out
}
