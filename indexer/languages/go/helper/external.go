package main

// Interfaces outside the graph: the standard library's, the universe's error, and those of modules
// the workspace does not hold (a dependency no registered repository provides). kivgraph has no
// declaration for them, so a call through one of their methods binds to nothing, and without more
// the module's own implementations of that method would answer as if nobody could call them.
//
// Two kinds of facts close that gap. The pairing (implements, over every interface of every loaded
// package) states which of the module's methods implement which outside interface method; every
// call written against that method in a registered repository is then a dispatch caller of them.
// Conversions (here) state where the module hands a value of one of its types to code outside the
// graph as such an interface (an assignment, a call argument, a return value, an element of a
// composite literal, a send, an explicit conversion): code there may call the type's methods
// through it, and those calls are in no graph. A value converted to an interface with none of the
// type's methods (any) or first to an interface and from there on is not followed.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// conversions emits a "converted" use, at the first site in each declaration, for each method of a
// target type that implements a method of an outside interface the site converts a value of the
// type to.
func (c *checker) conversions(tp *targetPkg, f *ast.File, spans []span, fi int) {
	info := tp.info
	var stack []ast.Node
	convert := func(target types.Type, e ast.Expr) {
		if e != nil {
			c.convert(tp, spans, fi, target, info.TypeOf(e), e.Pos())
		}
	}
	// spread: the one multi-valued expression on the right of an assignment, a return or a call
	spread := func(targets []types.Type, e ast.Expr) {
		if tuple, ok := info.TypeOf(e).(*types.Tuple); ok && tuple.Len() == len(targets) {
			for i, t := range targets {
				c.convert(tp, spans, fi, t, tuple.At(i).Type(), e.Pos())
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok != token.ASSIGN && x.Tok != token.DEFINE {
				return true
			}
			if len(x.Lhs) == len(x.Rhs) {
				for i, l := range x.Lhs {
					convert(info.TypeOf(l), x.Rhs[i])
				}
			} else if len(x.Rhs) == 1 {
				targets := make([]types.Type, len(x.Lhs))
				for i, l := range x.Lhs {
					targets[i] = info.TypeOf(l)
				}
				spread(targets, x.Rhs[0])
			}
		case *ast.ValueSpec:
			if x.Type != nil {
				t := info.TypeOf(x.Type)
				if len(x.Values) == len(x.Names) {
					for _, v := range x.Values {
						convert(t, v)
					}
				} else if len(x.Values) == 1 {
					targets := make([]types.Type, len(x.Names))
					for i := range targets {
						targets[i] = t
					}
					spread(targets, x.Values[0])
				}
			}
		case *ast.CallExpr:
			c.callConversions(info, x, convert, spread)
		case *ast.ReturnStmt:
			results := enclosingResults(info, stack)
			if results == nil {
				return true
			}
			if results.Len() == len(x.Results) {
				for i, r := range x.Results {
					convert(results.At(i).Type(), r)
				}
			} else if len(x.Results) == 1 {
				spread(tupleTypes(results), x.Results[0])
			}
		case *ast.CompositeLit:
			compositeConversions(info, x, convert)
		case *ast.SendStmt:
			if ch, ok := underlying(info.TypeOf(x.Chan)).(*types.Chan); ok {
				convert(ch.Elem(), x.Value)
			}
		}
		return true
	})
}

func underlying(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// callConversions: an explicit conversion I(v), the arguments of a call (variadic ones to the
// element type), the elements appended by append.
func (c *checker) callConversions(
	info *types.Info, call *ast.CallExpr, convert func(types.Type, ast.Expr), spread func([]types.Type, ast.Expr),
) {
	fun, ok := info.Types[call.Fun]
	if !ok {
		return
	}
	if fun.IsType() {
		if len(call.Args) == 1 {
			convert(fun.Type, call.Args[0])
		}
		return
	}
	if fun.IsBuiltin() {
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "append" && len(call.Args) > 1 &&
			!call.Ellipsis.IsValid() {
			if s, ok := underlying(info.TypeOf(call.Args[0])).(*types.Slice); ok {
				for _, a := range call.Args[1:] {
					convert(s.Elem(), a)
				}
			}
		}
		return
	}
	sig, ok := underlying(fun.Type).(*types.Signature)
	if !ok {
		return
	}
	params := sig.Params()
	param := func(i int) types.Type {
		switch {
		case sig.Variadic() && i >= params.Len()-1:
			if call.Ellipsis.IsValid() {
				return nil // a slice passed on as the variadic parameter: no element is converted here
			}
			if s, ok := params.At(params.Len() - 1).Type().(*types.Slice); ok {
				return s.Elem()
			}
		case i < params.Len():
			return params.At(i).Type()
		}
		return nil
	}
	if len(call.Args) == 1 {
		if tuple, ok := info.TypeOf(call.Args[0]).(*types.Tuple); ok { // f(g()), g multi-valued
			targets := make([]types.Type, tuple.Len())
			for i := range targets {
				targets[i] = param(i)
			}
			spread(targets, call.Args[0])
			return
		}
	}
	for i, a := range call.Args {
		convert(param(i), a)
	}
}

func tupleTypes(t *types.Tuple) []types.Type {
	out := make([]types.Type, t.Len())
	for i := range out {
		out[i] = t.At(i).Type()
	}
	return out
}

// enclosingResults: the result types of the innermost function (declaration or literal) on the stack.
func enclosingResults(info *types.Info, stack []ast.Node) *types.Tuple {
	for i := len(stack) - 1; i >= 0; i-- {
		switch fn := stack[i].(type) {
		case *ast.FuncLit:
			if sig, ok := info.TypeOf(fn).(*types.Signature); ok {
				return sig.Results()
			}
			return nil
		case *ast.FuncDecl:
			if obj, ok := info.Defs[fn.Name].(*types.Func); ok {
				return obj.Type().(*types.Signature).Results()
			}
			return nil
		}
	}
	return nil
}

// compositeConversions: struct fields (keyed or in order), slice, array and map elements, map keys.
func compositeConversions(info *types.Info, lit *ast.CompositeLit, convert func(types.Type, ast.Expr)) {
	t := underlying(info.TypeOf(lit))
	if p, ok := t.(*types.Pointer); ok { // &T{...} elided in [] *T{{...}}
		t = p.Elem().Underlying()
	}
	for i, elt := range lit.Elts {
		kv, keyed := elt.(*ast.KeyValueExpr)
		switch u := t.(type) {
		case *types.Struct:
			if keyed {
				if id, ok := kv.Key.(*ast.Ident); ok {
					for j := 0; j < u.NumFields(); j++ {
						if u.Field(j).Name() == id.Name {
							convert(u.Field(j).Type(), kv.Value)
						}
					}
				}
			} else if i < u.NumFields() {
				convert(u.Field(i).Type(), elt)
			}
		case *types.Slice:
			convert(u.Elem(), valueOf(elt))
		case *types.Array:
			convert(u.Elem(), valueOf(elt))
		case *types.Map:
			if keyed {
				convert(u.Key(), kv.Key)
				convert(u.Elem(), kv.Value)
			}
		}
	}
}

func valueOf(e ast.Expr) ast.Expr {
	if kv, ok := e.(*ast.KeyValueExpr); ok {
		return kv.Value
	}
	return e
}

// convert records the methods of e's type (a target type, not an interface) that implement a method
// of an outside interface that target (an interface) holds.
func (c *checker) convert(tp *targetPkg, spans []span, fi int, target, src types.Type, at token.Pos) {
	if target == nil || src == nil {
		return
	}
	if _, isParam := types.Unalias(target).(*types.TypeParam); isParam {
		return
	}
	ti, ok := target.Underlying().(*types.Interface)
	if !ok || ti.NumMethods() == 0 {
		return
	}
	if _, isIface := src.Underlying().(*types.Interface); isIface {
		return // interface to interface: the dynamic types are not known here
	}
	named, _ := derefNamed(src)
	if named == nil || named.Obj().Pkg() == nil || !c.targetPaths[named.Obj().Pkg().Path()] {
		return
	}
	srcQN, srcKind := innermost(spans, at)
	pos := c.fset.Position(at)
	qual := func(p *types.Package) string {
		if p == tp.pkg {
			return ""
		}
		return p.Name()
	}
	for i := 0; i < ti.NumMethods(); i++ {
		im := ti.Method(i)
		owner := interfaceOf(im)
		if owner == nil || !c.outside(owner.Obj().Pkg()) {
			continue
		}
		ipkg, iqn, ok := c.methodIdentity(im)
		if !ok {
			continue
		}
		found, _, _ := types.LookupFieldOrMethod(src, true, im.Pkg(), im.Name())
		m, ok := found.(*types.Func)
		if !ok || m.Pkg() == nil || m.Pkg().Path() != named.Obj().Pkg().Path() {
			continue // promoted from another package: not paired (as for implements)
		}
		mpkg, mqk, ok := c.identity(m)
		if !ok {
			continue
		}
		u := Use{File: fi, Line: pos.Line, Col: pos.Column - 1, SrcQN: srcQN, SrcKind: srcKind, Use: "converted",
			Pkg: mpkg, QN: mqk.qn, Kind: mqk.kind}
		key := u
		key.Line, key.Col = 0, 0 // the first site in each declaration
		if c.converted[key] {
			continue
		}
		c.converted[key] = true
		u.Detail = fmt.Sprintf("%s is converted to %s here, an interface outside the graph: code there may call "+
			"%s through %s, which no answer lists", types.TypeString(src, qual), types.TypeString(target, qual),
			mqk.qn, displayName(ipkg, iqn))
		c.out.Uses = append(c.out.Uses, u)
	}
}

// displayName: an interface method as answers write it, the universe's without a package (error.Error).
func displayName(pkg, qn string) string {
	if pkg == builtinPackage {
		return qn
	}
	return pkg + "." + qn
}

// outsideInterfaces lists the interfaces of loaded packages outside the graph that a target type
// could implement: named method-set interfaces whose methods are all exported (another package's
// type cannot have an unexported method of theirs), of standard packages that are neither internal
// nor vendored when exported, and the universe's error.
func (c *checker) outsideInterfaces() []*types.Named {
	out := []*types.Named{errorType}
	for _, pkg := range c.checked {
		if pkg == types.Unsafe || !c.outside(pkg) {
			continue
		}
		std := c.isStandard(pkg)
		if std && hiddenStandard(pkg.Path()) {
			continue
		}
		for _, named := range declaredTypes(pkg) {
			it := methodInterface(named)
			if it == nil || std && !named.Obj().Exported() {
				continue
			}
			exported := true
			for i := 0; i < it.NumMethods(); i++ {
				exported = exported && it.Method(i).Exported()
			}
			if exported {
				out = append(out, named)
			}
		}
	}
	return out
}

// hiddenStandard: a standard package no module can import (internal) or a vendored copy.
func hiddenStandard(path string) bool {
	for _, part := range strings.Split(path, "/") {
		if part == "internal" || part == "vendor" {
			return true
		}
	}
	return false
}
