// Exported top-level declarations per file, as the TypeScript checker reports them: the oracle of
// bench_large.py's declaration count. stdin: {"files": [absolute paths], "compilerOptions"?: {...}};
// stdout: {path: [names]}.
// One program over every file; for each file, checker.getExportsOfModule on its module symbol. An export
// counts when it is declared by a top-level statement of that same file, under the declaration's own name:
// `export const let_ = ...` and `const let_ = ...; export { let_ as let }` both count `let_` (the
// declaration), `export { x } from "./y"`, `export * from` and `export * as ns from` declare nothing
// here, a namespace's members are the namespace's (not the module's), and merged declarations (an
// interface and a namespace of one name) count once. Needs typescript 5.x on NODE_PATH (the classic API).
"use strict";
const ts = require("typescript");
const fs = require("fs");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const options = {
  noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler, ...(input.compilerOptions || {}),
};
const program = ts.createProgram(input.files, options);
const checker = program.getTypeChecker();

function topLevel(decl, sf) {
  let node = decl;
  if (ts.isVariableDeclaration(node)) node = node.parent.parent; // declaration list, then the statement
  return node.parent === sf;
}

function declaredName(decl) {
  const name = decl.name;
  return name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : undefined;
}

const out = {};
for (const file of input.files) {
  const sf = program.getSourceFile(file);
  const names = new Set();
  const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
  if (moduleSymbol) {
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      let target = exported;
      if (exported.flags & ts.SymbolFlags.Alias) {
        // only a local `export { a as b }` is declared here: an alias whose specifier has no module
        const local = (exported.declarations || []).every(
          (d) => ts.isExportSpecifier(d) && !d.parent.parent.moduleSpecifier);
        if (!local) continue;
        target = checker.getAliasedSymbol(exported);
      }
      for (const decl of target.declarations || []) {
        if (decl.getSourceFile() !== sf || !topLevel(decl, sf)) continue;
        const name = declaredName(decl);
        if (name !== undefined) names.add(name);
      }
    }
  }
  out[file] = [...names].sort();
}
process.stdout.write(JSON.stringify(out));
