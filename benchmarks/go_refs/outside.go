package main

// With -outside: the interfaces outside the listed modules (the standard library's, the universe's
// error, a dependency's) whose methods the modules use, told apart by go/types alone. "outside_refs"
// lists, per such interface method, every file whose Uses map points at it (the calls kivgraph must
// answer as dispatch callers of the implementations); "outside_implements" lists the pairs
// [interface method KEY, method KEY] where a named type of the modules' non-test packages implements
// the interface (types.Implements on a witness instantiation, as for -implements) and declares the
// method. The universe's error.Error is keyed "error.Error".

import (
	"go/token"
	"go/types"
	"os/exec"
	"sort"
	"strings"
)

type outsideIndex struct {
	modules []string                   // module paths of the listed directories
	refs    map[string]map[string]bool // interface method key -> files
	ifaces  map[string]*types.Named    // interface key -> the interface
}

func newOutsideIndex(roots []string) (*outsideIndex, error) {
	o := &outsideIndex{refs: map[string]map[string]bool{}, ifaces: map[string]*types.Named{}}
	for _, root := range roots {
		cmd := exec.Command("go", "list", "-m")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return nil, err
		}
		o.modules = append(o.modules, strings.TrimSpace(string(out)))
	}
	return o, nil
}

// outside: the universe, the standard library, or a module other than the listed ones.
func (o *outsideIndex) outside(pkg *types.Package) bool {
	if pkg == nil {
		return true
	}
	path := pkg.Path()
	for _, m := range o.modules {
		if path == m || strings.HasPrefix(path, m+"/") {
			return false
		}
	}
	return true
}

func outsideKey(f *types.Func) string {
	if f.Pkg() == nil {
		return "error.Error"
	}
	return objectKey(f)
}

// declaringInterface: the named interface whose method f is, or nil.
func declaringInterface(f *types.Func) *types.Named {
	sig := f.Origin().Type().(*types.Signature)
	if sig.Recv() == nil {
		return nil
	}
	n, ok := types.Unalias(sig.Recv().Type()).(*types.Named)
	if !ok {
		return nil
	}
	if _, isIface := n.Underlying().(*types.Interface); !isIface {
		return nil
	}
	return n
}

func (o *outsideIndex) record(fset *token.FileSet, info *types.Info) {
	for id, obj := range info.Uses {
		f, ok := obj.(*types.Func)
		if !ok {
			continue
		}
		iface := declaringInterface(f)
		if iface == nil || !o.outside(iface.Obj().Pkg()) {
			continue
		}
		key := outsideKey(f.Origin())
		if key == "" {
			continue
		}
		if o.refs[key] == nil {
			o.refs[key] = map[string]bool{}
		}
		o.refs[key][fset.Position(id.Pos()).Filename] = true
		o.ifaces[interfaceKey(iface)] = iface
	}
}

func interfaceKey(n *types.Named) string {
	if n.Obj().Pkg() == nil {
		return n.Obj().Name()
	}
	return n.Obj().Pkg().Path() + "." + n.Obj().Name()
}

// pairs: [interface method, method] for the named types the packages declare and the interfaces used.
func (o *outsideIndex) pairs(pkgs []*types.Package) [][2]string {
	out := map[[2]string]bool{}
	named, _ := declaredNamed(pkgs)
	for _, t := range named {
		for _, i := range o.ifaces {
			for _, w := range witnesses(t, i) {
				for _, pair := range methodPairs(t, w) {
					out[[2]string{outsideKey(pair[0].Origin()), objectKey(pair[1])}] = true
				}
			}
		}
	}
	return sortedPairs(out)
}

// refsOut: the files of each interface method used, sorted.
func (o *outsideIndex) refsOut() map[string][]string {
	out := map[string][]string{}
	for key, files := range o.refs {
		list := []string{}
		for f := range files {
			list = append(list, f)
		}
		sort.Strings(list)
		out[key] = list
	}
	return out
}
