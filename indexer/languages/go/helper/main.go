// Command kivgraph-gotypes type-checks one Go module (or workspace) with go/types and prints
// the uses, type relations and load problems of the packages under -target as one JSON object.
//
// Packages come from `go list -deps` (run with the caller's environment: kivgraph sets
// GOPROXY=off, GOFLAGS=-mod=readonly, GOTOOLCHAIN=local, CGO_ENABLED=0 and GOWORK). Every
// package is type-checked from source in dependency order in one fresh type universe;
// packages outside -target skip function bodies. Only the standard library is used, so the
// helper builds offline with the local toolchain.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

const helperVersion = "kivgraph-gotypes 5"

type listedModule struct {
	Path      string
	Dir       string
	GoVersion string
	Main      bool
}

type listedError struct {
	Err string
}

type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	ImportMap  map[string]string
	Standard   bool
	Module     *listedModule
	Error      *listedError
	DepsErrors []*listedError
}

// Use is one resolved identifier: where, from which declaration, how, and to what.
// Encoded as an array: [file, line, col, srcQN, srcKind, use, pkg, qn, kind, standard], plus
// detail (why a relation is undecided; a conversion's sentence) when there is one, plus iface
// (the target is a method of a named interface) when it is set.
type Use struct {
	File     int
	Line     int
	Col      int
	SrcQN    string
	SrcKind  string
	Use      string
	Pkg      string
	QN       string
	Kind     string
	Standard bool
	Detail   string
	Iface    bool
}

func (u Use) MarshalJSON() ([]byte, error) {
	row := []any{u.File, u.Line, u.Col, u.SrcQN, u.SrcKind, u.Use, u.Pkg, u.QN, u.Kind, u.Standard}
	if u.Detail != "" || u.Iface {
		row = append(row, u.Detail)
	}
	if u.Iface {
		row = append(row, true)
	}
	return json.Marshal(row)
}

type PackageReport struct {
	Path       string   `json:"path"`
	Dir        string   `json:"dir"`
	Module     string   `json:"module"`
	Target     bool     `json:"target"`
	LoadError  string   `json:"load_error,omitempty"`
	TypeErrors []string `json:"type_errors,omitempty"`
	NTypeErr   int      `json:"type_error_count"`
	// Emitted: its uses are in the output (with -emit, the other targets are checked without bodies).
	Emitted bool `json:"emitted"`
}

type Output struct {
	Helper    string          `json:"helper"`
	GoVersion string          `json:"go_version"`
	Files     []string        `json:"files"`
	Packages  []PackageReport `json:"packages"`
	Uses      []Use           `json:"uses"`
	// Exports: each exported declaration of every target package, as go/types prints it with its type
	// (exported methods of its named types too), "importpath<TAB>declaration": what an importer can see.
	Exports []string `json:"exports"`
}

type checker struct {
	fset    *token.FileSet
	checked map[string]*types.Package
	names   map[*types.Package]map[types.Object]qnKind
	files   map[string]int
	out     Output
	// analysed: files whose uses were emitted; implemented: IMPLEMENTS facts emitted (a
	// package and its test variant declare the same types).
	analysed    map[string]bool
	implemented map[Use]bool
	// inGraph: import paths of the packages of main modules (the target module and the registered
	// providers its go.work uses); every other package, the standard library's included, is outside.
	inGraph map[string]bool
	// targetPaths: import paths of the target packages (their types are the ones paired and followed).
	targetPaths map[string]bool
	converted   map[Use]bool
}

type qnKind struct{ qn, kind string }

func main() {
	goExe := flag.String("go", "go", "the go command")
	dir := flag.String("dir", ".", "directory go list runs in")
	target := flag.String("target", "", "absolute directory whose packages are analysed (default -dir)")
	emitFile := flag.String("emit", "", "a file listing, one per line, the package directories whose uses are "+
		"printed (default: every target); the other targets are type-checked without bodies, for IMPLEMENTS")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	tgt := root
	if *target != "" {
		tgt = *target
	}
	pkgs, err := goList(*goExe, root, patterns)
	if err != nil {
		fail(err)
	}
	c := &checker{
		fset:        token.NewFileSet(),
		checked:     map[string]*types.Package{"unsafe": types.Unsafe},
		names:       map[*types.Package]map[types.Object]qnKind{},
		files:       map[string]int{},
		analysed:    map[string]bool{},
		implemented: map[Use]bool{},
		inGraph:     map[string]bool{},
		targetPaths: map[string]bool{},
		converted:   map[Use]bool{},
	}
	c.out.Helper = helperVersion
	c.out.GoVersion = runtime.Version()
	c.out.Files = []string{}
	c.out.Uses = []Use{}
	emit, err := readEmit(*emitFile)
	if err != nil {
		fail(err)
	}
	var targets []*targetPkg
	for _, p := range pkgs {
		isTarget := !p.Standard && underDir(p.Dir, tgt)
		rep := PackageReport{Path: p.ImportPath, Dir: p.Dir, Target: isTarget}
		rep.Emitted = isTarget && (emit == nil || emit[filepath.Clean(p.Dir)])
		if p.Module != nil {
			rep.Module = p.Module.Path
		}
		if p.Error != nil {
			rep.LoadError = p.Error.Err
		}
		if p.ImportPath == "unsafe" || p.ImportPath == "C" {
			continue
		}
		if p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test") {
			continue // the generated test main: its files live in the build cache
		}
		if p.Module != nil && p.Module.Main {
			c.inGraph[packagePath(p)] = true
		}
		if isTarget {
			c.targetPaths[packagePath(p)] = true
		}
		tp := c.check(p, isTarget, rep.Emitted, &rep)
		if isTarget {
			c.out.Packages = append(c.out.Packages, rep)
			if tp != nil {
				targets = append(targets, tp)
			}
		} else if rep.LoadError != "" && !p.Standard {
			c.out.Packages = append(c.out.Packages, rep)
		}
	}
	for _, tp := range targets {
		if tp.info != nil {
			c.uses(tp)
		}
	}
	c.implements(targets)
	c.out.Exports = exports(targets)
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(&c.out); err != nil {
		fail(err)
	}
}

// exports lists what importers of the targets can see, "importpath<TAB>name<TAB>declaration": every
// exported package-level object with its type, the exported methods of its named types, the fields of
// its structs and the methods of its interfaces (sorted, each once: a test variant repeats them).
// Function bodies do not change it; a signature, a field, an inferred variable type do.
func exports(targets []*targetPkg) []string {
	qualifier := func(p *types.Package) string { return p.Path() }
	seen := map[string]bool{}
	out := []string{}
	add := func(path, name, decl string) {
		line := path + "\t" + name + "\t" + decl
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	for _, tp := range targets {
		path := packagePath(tp.list)
		scope := tp.pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			add(path, name, types.ObjectString(obj, qualifier))
			tn, ok := obj.(*types.TypeName)
			if !ok {
				continue
			}
			if named, ok := tn.Type().(*types.Named); ok {
				for i := 0; i < named.NumMethods(); i++ {
					m := named.Method(i)
					add(path, m.Name(), name+"."+types.ObjectString(m, qualifier))
				}
			}
			switch u := tn.Type().Underlying().(type) {
			case *types.Struct:
				for i := 0; i < u.NumFields(); i++ {
					f := u.Field(i)
					add(path, f.Name(), name+"."+types.ObjectString(f, qualifier))
				}
			case *types.Interface:
				for i := 0; i < u.NumMethods(); i++ {
					m := u.Method(i)
					add(path, m.Name(), name+"."+types.ObjectString(m, qualifier))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kivgraph-gotypes:", err)
	os.Exit(2)
}

// readEmit reads the -emit file: nil (every target is emitted) when no file is given.
func readEmit(path string) (map[string]bool, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out[filepath.Clean(line)] = true
		}
	}
	return out, nil
}

func underDir(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func goList(goExe, dir string, patterns []string) ([]*listedPackage, error) {
	// -test: each package's test variant ("p [p.test]", its _test.go files included) and its
	// external test package ("p_test [p.test]") are loaded and analysed too.
	args := append([]string{"list", "-e", "-deps", "-test",
		"-json=ImportPath,Name,Dir,GoFiles,ImportMap,Standard,Module,Error,DepsErrors"}, patterns...)
	cmd := exec.Command(goExe, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("go list failed: %s", msg)
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var out []*listedPackage
	for {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		out = append(out, p)
	}
	return out, nil
}

type targetPkg struct {
	list  *listedPackage
	pkg   *types.Package
	info  *types.Info
	files []*ast.File
}

type importer struct {
	c   *checker
	imp map[string]string
}

func (i importer) Import(path string) (*types.Package, error) {
	if mapped, ok := i.imp[path]; ok {
		path = mapped
	}
	if p, ok := i.c.checked[path]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("package %s was not loaded", path)
}

// check type-checks one listed package. A target is returned for IMPLEMENTS; only an emitted one is
// checked with its function bodies and carries the Info its uses are read from.
func (c *checker) check(p *listedPackage, isTarget, emitted bool, rep *PackageReport) *targetPkg {
	mode := parser.SkipObjectResolution
	var files []*ast.File
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(c.fset, path, nil, mode)
		if err != nil {
			if emitted {
				rep.NTypeErr++
				if len(rep.TypeErrors) < 5 {
					rep.TypeErrors = append(rep.TypeErrors, err.Error())
				}
			}
			if f == nil {
				continue
			}
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer:         importer{c, p.ImportMap},
		IgnoreFuncBodies: !emitted,
		FakeImportC:      true,
		Error: func(err error) {
			if emitted {
				rep.NTypeErr++
				if len(rep.TypeErrors) < 5 {
					rep.TypeErrors = append(rep.TypeErrors, err.Error())
				}
			}
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	var info *types.Info
	if emitted {
		info = &types.Info{
			Uses:       map[*ast.Ident]types.Object{},
			Defs:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
			Types:      map[ast.Expr]types.TypeAndValue{},
		}
	}
	pkg, _ := conf.Check(packagePath(p), c.fset, files, info)
	if pkg == nil {
		return nil
	}
	c.checked[p.ImportPath] = pkg
	if !isTarget {
		return nil
	}
	return &targetPkg{list: p, pkg: pkg, info: info, files: files}
}

// packagePath is the import path a listed package's declarations are named under: a test
// variant's suffix (" [p.test]") dropped, and an external test package ("p_test") named as
// the package it tests, since kivgraph keys every file of a directory under one package.
func packagePath(p *listedPackage) string {
	path, _, _ := strings.Cut(p.ImportPath, " [")
	if strings.HasSuffix(p.Name, "_test") && strings.HasSuffix(path, "_test") {
		path = strings.TrimSuffix(path, "_test")
	}
	return path
}

func (c *checker) fileIndex(path string) int {
	if i, ok := c.files[path]; ok {
		return i
	}
	c.files[path] = len(c.out.Files)
	c.out.Files = append(c.out.Files, path)
	return c.files[path]
}

// -- qualified names -----------------------------------------------------------------------

// nameTable maps a package's named declarations, fields and interface methods to the
// qualified names kivgraph's extractor gives them (Name, Type.Method, Type.Field, Iface.Method).
func (c *checker) nameTable(pkg *types.Package) map[types.Object]qnKind {
	if t, ok := c.names[pkg]; ok {
		return t
	}
	t := map[types.Object]qnKind{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		switch o := obj.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				t[o] = qnKind{name, "alias"}
				continue
			}
			t[o] = qnKind{name, "type"}
			named, ok := o.Type().(*types.Named)
			if !ok {
				continue
			}
			for i := 0; i < named.NumMethods(); i++ {
				m := named.Method(i)
				t[m] = qnKind{name + "." + m.Name(), "method"}
			}
			switch u := named.Underlying().(type) {
			case *types.Struct:
				addFields(t, name, u)
			case *types.Interface:
				for i := 0; i < u.NumExplicitMethods(); i++ {
					m := u.ExplicitMethod(i)
					t[m] = qnKind{name + "." + m.Name(), "method"}
				}
			}
		case *types.Func:
			t[o] = qnKind{name, "func"}
		case *types.Const:
			t[o] = qnKind{name, "const"}
		case *types.Var:
			t[o] = qnKind{name, "var"}
		}
	}
	c.names[pkg] = t
	return t
}

func addFields(t map[types.Object]qnKind, owner string, s *types.Struct) {
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		qn := owner + "." + f.Name()
		t[f] = qnKind{qn, "field"}
		inner := f.Type()
		for {
			switch x := inner.(type) {
			case *types.Pointer:
				inner = x.Elem()
				continue
			case *types.Slice:
				inner = x.Elem()
				continue
			case *types.Array:
				inner = x.Elem()
				continue
			}
			break
		}
		if st, ok := inner.(*types.Struct); ok {
			addFields(t, qn, st)
		}
	}
}

func origin(obj types.Object) types.Object {
	switch o := obj.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return obj
}

func (c *checker) identity(obj types.Object) (pkg string, qk qnKind, ok bool) {
	obj = origin(obj)
	if obj.Pkg() == nil {
		return "", qnKind{}, false
	}
	if _, isTP := obj.Type().(*types.TypeParam); isTP {
		return "", qnKind{}, false
	}
	qk, ok = c.nameTable(obj.Pkg())[obj]
	if !ok {
		if f, isFunc := obj.(*types.Func); isFunc {
			// a method of an interface embedded in a named interface of another declaration order
			if sig, _ := f.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
				if named, _ := derefNamed(sig.Recv().Type()); named != nil && !isLocal(named.Obj()) {
					return obj.Pkg().Path(), qnKind{named.Obj().Name() + "." + f.Name(), "method"}, true
				}
			}
		}
		return "", qnKind{}, false
	}
	return obj.Pkg().Path(), qk, true
}

func derefNamed(t types.Type) (*types.Named, bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if ok {
		n = n.Origin()
	}
	return n, ok
}

// -- enclosing declarations --------------------------------------------------------------------

type span struct {
	start, end token.Pos
	qn, kind   string
}

// declarations lists the declarations of a file the way the extractor names them; the
// innermost one containing a position owns the uses there.
func declarations(f *ast.File) []span {
	var out []span
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name, kind := d.Name.Name, "func"
			if d.Recv != nil && len(d.Recv.List) == 1 {
				if recv := recvName(d.Recv.List[0].Type); recv != "" {
					name, kind = recv+"."+name, "method"
				}
			}
			out = append(out, span{d.Pos(), d.End(), name, kind})
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					kind := "type"
					if s.Assign.IsValid() {
						kind = "alias"
					}
					out = append(out, span{s.Pos(), s.End(), s.Name.Name, kind})
					switch t := s.Type.(type) {
					case *ast.StructType:
						out = append(out, fieldSpans(s.Name.Name, t)...)
					case *ast.InterfaceType:
						for _, m := range t.Methods.List {
							if len(m.Names) > 0 {
								out = append(out, span{m.Pos(), m.End(), s.Name.Name + "." + m.Names[0].Name, "method"})
							}
						}
					}
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, span{s.Pos(), s.End(), n.Name, kind})
							break
						}
					}
				}
			}
		}
	}
	return out
}

func fieldSpans(owner string, st *ast.StructType) []span {
	var out []span
	for _, fld := range st.Fields.List {
		if len(fld.Names) == 0 {
			continue // an embedded field's type is a use by the struct type itself
		}
		qn := owner + "." + fld.Names[0].Name
		out = append(out, span{fld.Pos(), fld.End(), qn, "field"})
		inner := fld.Type
		for {
			switch x := inner.(type) {
			case *ast.StarExpr:
				inner = x.X
				continue
			case *ast.ArrayType:
				inner = x.Elt
				continue
			}
			break
		}
		if nested, ok := inner.(*ast.StructType); ok {
			out = append(out, fieldSpans(qn, nested)...)
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func innermost(spans []span, pos token.Pos) (string, string) {
	best := -1
	for i, s := range spans {
		if s.start <= pos && pos < s.end {
			if best < 0 || s.start >= spans[best].start && s.end <= spans[best].end {
				best = i
			}
		}
	}
	if best < 0 {
		return "", "module"
	}
	return spans[best].qn, spans[best].kind
}

// -- uses ----------------------------------------------------------------------------------

func (c *checker) uses(tp *targetPkg) {
	for _, f := range tp.files {
		file := c.fset.Position(f.Pos()).Filename
		if c.analysed[file] {
			continue // a package and its test variant share their non-test files
		}
		c.analysed[file] = true
		spans := declarations(f)
		fi := c.fileIndex(file)
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := tp.info.Uses[id]
			if obj == nil {
				return true
			}
			pos := c.fset.Position(id.Pos())
			srcQN, srcKind := innermost(spans, id.Pos())
			u := Use{File: fi, Line: pos.Line, Col: pos.Column - 1, SrcQN: srcQN, SrcKind: srcKind}
			switch obj.(type) {
			case *types.PkgName, *types.Label, *types.Nil, *types.Builtin:
				return true
			}
			pkgPath, qk, known := c.identity(obj)
			if f, ok := obj.(*types.Func); ok && f.Origin() == errorMethod {
				// the universe's error.Error: a method of an interface outside every package
				pkgPath, qk, known = builtinPackage, qnKind{"error.Error", "method"}, true
			}
			if !known {
				if iface, label := unnamedInterface(obj); iface != nil {
					// a method of an interface literal (a constraint, a parameter's type, a type assertion) or
					// of a function's own interface type: no declaration to bind, and any type with that
					// method may run: a row, never silence
					u.Use, u.QN, u.Kind = "unnamed", obj.Name(), "method"
					u.Detail = label
					c.out.Uses = append(c.out.Uses, u)
					return true
				}
				if obj.Pkg() != nil && obj.Parent() != types.Universe {
					u.Use = "local" // a local, a parameter, a type parameter: settles the site, no edge
					c.out.Uses = append(c.out.Uses, u)
				}
				return true
			}
			u.Pkg, u.QN, u.Kind = pkgPath, qk.qn, qk.kind
			u.Standard = obj.Pkg() == nil || c.isStandard(obj.Pkg())
			u.Iface = interfaceOf(obj) != nil
			u.Use = classify(stack, obj)
			c.out.Uses = append(c.out.Uses, u)
			return true
		})
		c.conversions(tp, f, spans, fi)
	}
}

// builtinPackage names the universe's declarations (error and its Error method) the way go doc does.
const builtinPackage = "builtin"

var errorType = types.Universe.Lookup("error").Type().(*types.Named)
var errorMethod = errorType.Underlying().(*types.Interface).Method(0)

// interfaceOf is the named interface whose method obj is (the declaring one for an embedded method), or nil.
func interfaceOf(obj types.Object) *types.Named {
	f, ok := obj.(*types.Func)
	if !ok {
		return nil
	}
	sig, _ := f.Origin().Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	named, ok := types.Unalias(sig.Recv().Type()).(*types.Named)
	if !ok {
		return nil
	}
	if _, isIface := named.Underlying().(*types.Interface); !isIface {
		return nil
	}
	return named
}

// outside: a package no registered repository holds (the standard library, a module outside the
// workspace, the universe for nil).
func (c *checker) outside(pkg *types.Package) bool {
	return pkg == nil || c.isStandard(pkg) || !c.inGraph[pkg.Path()]
}

// methodIdentity names an interface method like identity does, the universe's error.Error included.
func (c *checker) methodIdentity(m *types.Func) (string, string, bool) {
	if m.Origin() == errorMethod {
		return builtinPackage, "error.Error", true
	}
	pkg, qk, ok := c.identity(m)
	return pkg, qk.qn, ok
}

// unnamedInterface is the interface whose method obj is when no declaration of the graph names it
// (an interface literal, or an interface type declared inside a function), with how to write it; or nil.
func unnamedInterface(obj types.Object) (*types.Interface, string) {
	f, ok := obj.(*types.Func)
	if !ok {
		return nil, ""
	}
	sig, _ := f.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil, ""
	}
	switch recv := types.Unalias(sig.Recv().Type()).(type) {
	case *types.Interface:
		return recv, types.TypeString(recv, shortQualifier)
	case *types.Named:
		iface, isIface := recv.Underlying().(*types.Interface)
		if isIface && isLocal(recv.Obj()) {
			return iface, fmt.Sprintf("%s (%s, a type declared inside a function)",
				types.TypeString(iface, shortQualifier), recv.Obj().Name())
		}
	}
	return nil, ""
}

// isLocal: a declaration inside a function, which the graph does not hold.
func isLocal(obj types.Object) bool {
	return obj.Pkg() != nil && obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope()
}

func (c *checker) isStandard(pkg *types.Package) bool {
	first := strings.SplitN(pkg.Path(), "/", 2)[0]
	return !strings.Contains(first, ".")
}

// classify decides the syntactic class of a use: the AST decides the class, go/types the target.
func classify(stack []ast.Node, obj types.Object) string {
	i := len(stack) - 1
	var expr ast.Node = stack[i]
	if i > 0 {
		if sel, ok := stack[i-1].(*ast.SelectorExpr); ok && sel.Sel == expr {
			i--
			expr = sel
		}
	}
	// F[int](x): the instantiation is the callee
	for i > 0 {
		switch p := stack[i-1].(type) {
		case *ast.IndexExpr:
			if p.X == expr {
				i--
				expr = p
				continue
			}
		case *ast.IndexListExpr:
			if p.X == expr {
				i--
				expr = p
				continue
			}
		case *ast.ParenExpr:
			i--
			expr = p
			continue
		}
		break
	}
	_, isType := obj.(*types.TypeName)
	_, isFunc := obj.(*types.Func)
	if isType {
		// walk up through *T, pkg.T, T[X] to a field: an embedded field without names is an embed
		j := i
		var node ast.Node = expr
		for j > 0 {
			switch p := stack[j-1].(type) {
			case *ast.StarExpr, *ast.IndexExpr, *ast.IndexListExpr:
				j--
				node = p
				continue
			case *ast.Field:
				if len(p.Names) == 0 && p.Type == node && j >= 3 {
					switch stack[j-3].(type) {
					case *ast.StructType, *ast.InterfaceType:
						return "embed"
					}
				}
			}
			break
		}
		return "type"
	}
	if i == 0 {
		return "ref"
	}
	switch p := stack[i-1].(type) {
	case *ast.CallExpr:
		if p.Fun == expr {
			return "call"
		}
		if isFunc {
			return "callback"
		}
	case *ast.AssignStmt, *ast.ValueSpec, *ast.KeyValueExpr, *ast.CompositeLit:
		if isFunc {
			if kv, ok := p.(*ast.KeyValueExpr); ok && kv.Key == expr {
				return "ref"
			}
			if as, ok := p.(*ast.AssignStmt); ok {
				for _, l := range as.Lhs {
					if l == expr {
						return "ref"
					}
				}
			}
			return "assign"
		}
	case *ast.ReturnStmt:
		if isFunc {
			return "return"
		}
	}
	return "ref"
}

// -- implements ------------------------------------------------------------------------------

func (c *checker) implement(u Use) {
	if !c.implemented[u] {
		c.implemented[u] = true
		c.out.Uses = append(c.out.Uses, u)
	}
}

// implements pairs every type declared in a target with every interface declared in a target or
// an import of one, generic declarations included (relate), and with every interface outside the
// graph a loaded package declares (outsideInterfaces): a type and each of its methods get an
// IMPLEMENTS use per interface (and interface method) some instantiation of it implements, and an
// "undecided" use, with the reason, where relate cannot tell. An outside interface gets method-level
// uses only (flagged standard when it is the standard library's or the universe's): no declaration
// of the graph stands for the interface itself.
func (c *checker) implements(targets []*targetPkg) {
	var ifaces []*types.Named
	listed := map[*types.Named]bool{}
	add := func(named *types.Named) {
		if !listed[named] {
			listed[named] = true
			ifaces = append(ifaces, named)
		}
	}
	seen := map[*types.Package]bool{}
	addFrom := func(pkg *types.Package) {
		if seen[pkg] || c.isStandard(pkg) {
			return
		}
		seen[pkg] = true
		for _, named := range declaredTypes(pkg) {
			if methodInterface(named) != nil {
				add(named)
			}
		}
	}
	for _, tp := range targets {
		addFrom(tp.pkg)
		for _, imp := range tp.pkg.Imports() {
			addFrom(imp)
		}
	}
	for _, named := range c.outsideInterfaces() {
		add(named)
	}
	byFirst := indexByFirstMethod(ifaces)
	for _, tp := range targets {
		c.pairTypes(tp.pkg, byFirst)
	}
	// The types of the registered providers the module loads (the other main modules of its go.work)
	// with the module's own interfaces: a provider does not know its consumers' interfaces, so only this
	// run can pair them.
	var own []*types.Named
	for _, iface := range ifaces {
		if pkg := iface.Obj().Pkg(); pkg != nil && c.targetPaths[pkg.Path()] {
			own = append(own, iface)
		}
	}
	ownByFirst := indexByFirstMethod(own)
	var providers []*types.Package
	for path, pkg := range c.checked {
		if pkg != types.Unsafe && pkg.Path() == path && !c.outside(pkg) && !c.targetPaths[path] {
			providers = append(providers, pkg)
		}
	}
	sort.Slice(providers, func(a, b int) bool { return providers[a].Path() < providers[b].Path() })
	for _, pkg := range providers {
		c.pairTypes(pkg, ownByFirst)
	}
}

// indexByFirstMethod: interfaces by the name of their first method (methods are sorted), so that a type
// is only tried against the interfaces whose first method it has.
func indexByFirstMethod(ifaces []*types.Named) map[string][]*types.Named {
	byFirst := map[string][]*types.Named{}
	for _, iface := range ifaces {
		first := iface.Underlying().(*types.Interface).Method(0).Name()
		byFirst[first] = append(byFirst[first], iface)
	}
	for _, list := range byFirst {
		sort.Slice(list, func(a, b int) bool { return interfaceName(list[a]) < interfaceName(list[b]) })
	}
	return byFirst
}

// pairTypes pairs every named type pkg declares (interfaces aside) with the interfaces of byFirst.
func (c *checker) pairTypes(pkg *types.Package, byFirst map[string][]*types.Named) {
	for _, named := range declaredTypes(pkg) {
		if _, isIface := named.Underlying().(*types.Interface); isIface {
			continue
		}
		tpos := c.fset.Position(named.Obj().Pos())
		mset := types.NewMethodSet(types.NewPointer(named))
		for i := 0; i < mset.Len(); i++ {
			for _, iface := range byFirst[mset.At(i).Obj().Name()] {
				c.pair(pkg, named, named.Obj().Name(), tpos, iface)
			}
		}
	}
}

// declaredTypes: the named types a package declares at its top level, aliases aside, in name order.
func declaredTypes(pkg *types.Package) []*types.Named {
	var out []*types.Named
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
			if named, ok := tn.Type().(*types.Named); ok {
				out = append(out, named)
			}
		}
	}
	return out
}

// methodInterface: the interface a named type is when it is one with methods and no type set, else nil.
func methodInterface(named *types.Named) *types.Interface {
	it, ok := named.Underlying().(*types.Interface)
	if !ok || it.NumMethods() == 0 || !it.IsMethodSet() {
		return nil
	}
	return it
}

func interfaceName(n *types.Named) string {
	if n.Obj().Pkg() == nil {
		return builtinPackage + "." + n.Obj().Name()
	}
	return n.Obj().Pkg().Path() + "." + n.Obj().Name()
}

// pair emits the uses of one type and one interface: the type's, when the interface is in a package
// (binding decides whether the graph holds it), and its methods'.
func (c *checker) pair(owner *types.Package, named *types.Named, name string, tpos token.Position, iface *types.Named) {
	it := iface.Underlying().(*types.Interface)
	if !hasMethodNames(named, it) {
		return
	}
	rel, recv, why := relate(named, iface)
	if rel == notImplemented {
		return
	}
	use := "implements"
	if rel == undecided {
		use = "undecided"
		recv = named
	}
	ipkgObj := iface.Obj().Pkg()
	standard := ipkgObj == nil || c.isStandard(ipkgObj)
	if !standard {
		ipkg, iqk, ok := c.identity(iface.Obj())
		if !ok {
			return
		}
		c.implement(Use{
			File: c.fileIndex(tpos.Filename), Line: tpos.Line, Col: tpos.Column - 1, SrcQN: name, SrcKind: "type",
			Use: use, Pkg: ipkg, QN: iqk.qn, Kind: iqk.kind, Detail: why,
		})
	}
	ptr := types.NewPointer(recv)
	for i := 0; i < it.NumMethods(); i++ {
		im := it.Method(i)
		found, _, _ := types.LookupFieldOrMethod(ptr, false, im.Pkg(), im.Name())
		m, ok := found.(*types.Func)
		if !ok {
			continue
		}
		_, mqk, ok1 := c.identity(m)
		tpkg, tqn, ok2 := c.methodIdentity(im)
		mpos := c.fset.Position(m.Origin().Pos())
		if !ok1 || !ok2 || m.Pkg() != owner {
			continue // promoted from another package: not paired (declared limit)
		}
		c.implement(Use{
			File: c.fileIndex(mpos.Filename), Line: mpos.Line, Col: mpos.Column - 1, SrcQN: mqk.qn,
			SrcKind: mqk.kind, Use: use, Pkg: tpkg, QN: tqn, Kind: "method", Detail: why,
			Standard: im.Pkg() == nil || c.isStandard(im.Pkg()),
		})
	}
}

// hasMethodNames: the pointer to named has a method of each name the interface has (whatever the
// type arguments, names do not change), the cheap test before relate.
func hasMethodNames(named *types.Named, it *types.Interface) bool {
	ptr := types.NewPointer(named)
	for i := 0; i < it.NumMethods(); i++ {
		im := it.Method(i)
		found, _, _ := types.LookupFieldOrMethod(ptr, false, im.Pkg(), im.Name())
		if _, ok := found.(*types.Func); !ok {
			return false
		}
	}
	return true
}
