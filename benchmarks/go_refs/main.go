// Command go_refs lists, for each requested object, every file whose go/types Uses map
// points at it: the reference listing kivgraph's find_references is compared with.
//
// Usage: go_refs -key KEY [-key KEY ...] [-promoted] MODULE_DIR...
//
// A KEY is "import/path.Name" (a package-level object) or "import/path.Type.Member" (a
// method, an interface method or a field, Type being the receiver's or interface's named
// type). Every package of each module directory (from `go list -json ./...`) is
// type-checked with its in-package test files, and each external test package
// separately; imports come from the source importer (go/build, so module mode with the
// caller's GOMODCACHE/GOPROXY/GOFLAGS). Standard library only. Output: one JSON object,
// {"refs": {KEY: [absolute file, ...]}, "promoted": [...], "errors": N}.
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
	flag.Parse()
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
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	enc.Encode(map[string]any{"refs": result, "promoted": promotedOut, "errors": nErrors})
}
