// Exported top-level declarations per file, as the TypeScript compiler's parser sees them: the oracle of
// bench_large.py's declaration count. stdin: {"files": [absolute paths]}; stdout: {path: [names]}.
// A declaration counts when it is a statement of the file carrying the `export` keyword: functions,
// classes, interfaces, type aliases, enums, namespaces (each name once) and every declarator of an
// exported variable statement. Re-exports (`export { x } from`, `export *`) declare nothing.
"use strict";
const ts = require("typescript");
const fs = require("fs");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const out = {};
for (const file of input.files) {
  const text = fs.readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = new Set();
  for (const st of sf.statements) {
    const mods = ts.canHaveModifiers(st) ? ts.getModifiers(st) || [] : [];
    if (!mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
    } else if (st.name && ts.isIdentifier(st.name)) {
      names.add(st.name.text);
    }
  }
  out[file] = [...names].sort();
}
process.stdout.write(JSON.stringify(out));
