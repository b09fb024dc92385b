// Command go_refs lists, for each requested object, every file whose go/types Uses map
// points at it: the reference listing kivgraph's find_references is compared with.
//
// Usage: go_refs -key KEY [-key KEY ...] [-promoted] [-implements] [-outside] MODULE_DIR...
//
// A KEY is "import/path.Name" (a package-level object) or "import/path.Type.Member" (a
// method, an interface method or a field, Type being the receiver's or interface's named
// type). Every package of each module directory (from `go list -json ./...`) is
// type-checked with its in-package test files, and each external test package
// separately; imports come from the source importer (go/build, so module mode with the
// caller's GOMODCACHE/GOPROXY/GOFLAGS). Standard library only. Output: one JSON object,
// {"refs": {KEY: [absolute file, ...]}, "promoted": [...], "errors": N}.
//
// With -implements, also "implements" ([interface KEY, type KEY] pairs) and "method_implements"
// ([interface method KEY, method KEY]) over the declarations of the modules' non-test packages,
// generic ones included, by witness: a pair is listed when go/types' own types.Implements holds
// for some instantiation of the type and of the interface drawn from int, string and (for the
// interface) the type's own type parameters, each instantiation checked against its constraints
// (see implementsPairs). No unification, so it is an answer independent of kivgraph's helper; a
// relation that needs another type argument (a slice, a struct) is not found.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
}

type keys []string

func (k *keys) String() string     { return strings.Join(*k, ",") }
func (k *keys) Set(v string) error { *k = append(*k, v); return nil }

// objectKey names a declared object the way a KEY does ("" for locals and the universe).
func objectKey(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	switch o := obj.(type) {
	case *types.Func:
		o = o.Origin()
		sig := o.Type().(*types.Signature)
		if recv := sig.Recv(); recv != nil {
			if name := namedOf(recv.Type()); name != "" {
				return o.Pkg().Path() + "." + name + "." + o.Name()
			}
			return ""
		}
		return o.Pkg().Path() + "." + o.Name()
	case *types.Var:
		o = o.Origin()
		if o.IsField() {
			return "" // fields: keyed by their struct below when needed
		}
		if o.Parent() != o.Pkg().Scope() {
			return ""
		}
	}
	if obj.Parent() != obj.Pkg().Scope() {
		return ""
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

func namedOf(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch n := types.Unalias(t).(type) {
	case *types.Named:
		return n.Origin().Obj().Name()
	case *types.Interface:
		return ""
	}
	return ""
}

func main() {
	var want keys
	flag.Var(&want, "key", "object key (repeatable)")
	promoted := flag.Bool("promoted", false, "also list promoted method selections")
	withImplements := flag.Bool("implements", false, "also list implementation pairs (see the package comment)")
	withOutside := flag.Bool("outside", false, "also list the uses and implementations of interfaces outside "+
		"the modules (see outside.go)")
	flag.Parse()
	var outside *outsideIndex
	if *withOutside {
		var err error
		if outside, err = newOutsideIndex(flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "go list -m:", err)
			os.Exit(1)
		}
	}
	wanted := map[string]bool{}
	for _, k := range want {
		wanted[k] = true
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	refs := map[string]map[string]bool{}
	var promotedOut []string
	nErrors := 0

	check := func(path, dir string, names []string) {
		var files []*ast.File
		for _, n := range names {
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
			if err != nil {
				nErrors++
				continue
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			return
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp, Error: func(err error) {
			nErrors++
			if os.Getenv("GO_REFS_VERBOSE") != "" {
				fmt.Fprintln(os.Stderr, err)
			}
		}}
		conf.Check(path, fset, files, info)
		if outside != nil {
			outside.record(fset, info)
		}
		for id, obj := range info.Uses {
			k := objectKey(obj)
			if k == "" || !wanted[k] {
				continue
			}
			file := fset.Position(id.Pos()).Filename
			if refs[k] == nil {
				refs[k] = map[string]bool{}
			}
			refs[k][file] = true
		}
		if *promoted {
			for sel, s := range info.Selections {
				if s.Kind() == types.MethodVal && len(s.Index()) > 1 {
					promotedOut = append(promotedOut, fmt.Sprintf("%s %s via %s", fset.Position(sel.Sel.Pos()),
						objectKey(s.Obj()), s.Recv()))
				}
			}
		}
	}

	var modulePkgs []*types.Package
	for _, root := range flag.Args() {
		// The source importer runs `go list` in the process's directory: the module's own.
		if err := os.Chdir(root); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cmd := exec.Command("go", "list", "-json", "./...")
		cmd.Dir = root
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go list in %s: %v\n", root, err)
			os.Exit(1)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var p listed
			if err := dec.Decode(&p); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			check(p.ImportPath, p.Dir, append(append([]string{}, p.GoFiles...), p.TestGoFiles...))
			if (*withImplements || *withOutside) && len(p.GoFiles) > 0 {
				pkg, err := imp.ImportFrom(p.ImportPath, p.Dir, 0)
				if err != nil {
					nErrors++
				} else {
					modulePkgs = append(modulePkgs, pkg)
				}
			}
			if len(p.XTestGoFiles) > 0 {
				check(p.ImportPath+"_test", p.Dir, p.XTestGoFiles)
			}
		}
	}
	result := map[string][]string{}
	for _, k := range want {
		files := []string{}
		for f := range refs[k] {
			files = append(files, f)
		}
		sort.Strings(files)
		result[k] = files
	}
	sort.Strings(promotedOut)
	out := map[string]any{"refs": result, "promoted": promotedOut, "errors": nErrors}
	if *withImplements {
		out["implements"], out["method_implements"] = implementsPairs(modulePkgs)
	}
	if outside != nil {
		out["outside_refs"], out["outside_implements"] = outside.refsOut(), outside.pairs(modulePkgs)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	enc.Encode(out)
}

// implementsPairs lists, over the named types and interfaces the packages declare (one universe:
// the importer's), the pairs some witness instantiation makes go/types' types.Implements hold.
func implementsPairs(pkgs []*types.Package) ([][2]string, [][2]string) {
	named, ifaces := declaredNamed(pkgs)
	typePairs, methods := map[[2]string]bool{}, map[[2]string]bool{}
	for _, t := range named {
		for _, i := range ifaces {
			for _, w := range witnesses(t, i) {
				typePairs[[2]string{objectKey(i.Obj()), objectKey(t.Obj())}] = true
				for _, pair := range methodPairs(t, w) {
					methods[[2]string{objectKey(pair[0]), objectKey(pair[1])}] = true
				}
			}
		}
	}
	return sortedPairs(typePairs), sortedPairs(methods)
}

// methodPairs: (interface method, method the type declares) for a witness instantiation of the type.
func methodPairs(t *types.Named, w witness) [][2]*types.Func {
	var out [][2]*types.Func
	it := w.iface.Underlying().(*types.Interface)
	for k := 0; k < it.NumMethods(); k++ {
		im := it.Method(k)
		found, _, _ := types.LookupFieldOrMethod(types.NewPointer(w.typ), false, im.Pkg(), im.Name())
		if m, ok := found.(*types.Func); ok && m.Pkg() == t.Obj().Pkg() {
			out = append(out, [2]*types.Func{im, m})
		}
	}
	return out
}

// declaredNamed: the named types (interfaces apart) and the method-set interfaces the packages declare.
func declaredNamed(pkgs []*types.Package) (named, ifaces []*types.Named) {
	for _, pkg := range pkgs {
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			n, ok := tn.Type().(*types.Named)
			if !ok {
				continue
			}
			if it, isIface := n.Underlying().(*types.Interface); isIface {
				if it.NumMethods() > 0 && it.IsMethodSet() {
					ifaces = append(ifaces, n)
				}
			} else {
				named = append(named, n)
			}
		}
	}
	return named, ifaces
}

type witness struct{ typ, iface types.Type }

// witnesses: the instantiations (type, interface) that implement, from the argument lists of
// probe types; the first found is enough to list the pair, so at most one is returned.
func witnesses(t, i *types.Named) []witness {
	probes := []types.Type{types.Typ[types.Int], types.Typ[types.String]}
	var own []types.Type
	for k := 0; k < t.TypeParams().Len(); k++ {
		own = append(own, t.TypeParams().At(k))
	}
	typeArgs := combos(probes, t.TypeParams().Len())
	if len(own) > 0 {
		typeArgs = append([][]types.Type{own}, typeArgs...)
	}
	for _, targs := range typeArgs {
		var tinst types.Type = t
		if len(targs) > 0 {
			inst, err := types.Instantiate(nil, t, targs, true)
			if err != nil {
				continue
			}
			tinst = inst
		}
		ipool := probes
		if len(targs) > 0 && targs[0] == own[0] {
			ipool = append(append([]types.Type{}, probes...), own...)
		}
		for _, iargs := range combos(ipool, i.TypeParams().Len()) {
			var iinst types.Type = i
			if len(iargs) > 0 {
				inst, err := types.Instantiate(nil, i, iargs, true)
				if err != nil {
					continue
				}
				iinst = inst
			}
			it := iinst.Underlying().(*types.Interface)
			if types.Implements(tinst, it) || types.Implements(types.NewPointer(tinst), it) {
				return []witness{{tinst, iinst}}
			}
		}
	}
	return nil
}

// combos: every list of n types drawn from pool (one empty list for n = 0).
func combos(pool []types.Type, n int) [][]types.Type {
	out := [][]types.Type{{}}
	for k := 0; k < n; k++ {
		var next [][]types.Type
		for _, prefix := range out {
			for _, p := range pool {
				next = append(next, append(append([]types.Type{}, prefix...), p))
			}
		}
		out = next
	}
	return out
}

func sortedPairs(set map[[2]string]bool) [][2]string {
	out := make([][2]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a][0]+" "+out[a][1] < out[b][0]+" "+out[b][1] })
	return out
}
