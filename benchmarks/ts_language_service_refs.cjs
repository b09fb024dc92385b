// The TypeScript language service's own findReferences, the oracle of bench_typescript_agreement.py and
// bench_ts_package_mapped.py.
// stdin: {"root", "files": [absolute paths], "compilerOptions", "queries": [{"file", "line", "col"}],
// "resolve"?: [{"from", "specifier"}]} (line 1-based, col 0-based UTF-16); stdout: one array per query of
// [file, line, col] of every reference that is not a definition, and for each "resolve" entry the file the
// program's module resolution gives the specifier from that file (null when none): how a bench checks that
// "paths" maps a package name to its provider's source. Needs typescript 5.x on NODE_PATH (the classic API).
"use strict";
const ts = require("typescript");
const fs = require("fs");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const parsed = ts.convertCompilerOptionsFromJson(input.compilerOptions, input.root);
const options = parsed.options;
const files = input.files;
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: () => "1",
  getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined),
  getCurrentDirectory: () => input.root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();
const out = [];
for (const q of input.queries) {
  const sf = program.getSourceFile(q.file);
  const rows = [];
  if (sf) {
    const pos = ts.getPositionOfLineAndCharacter(sf, q.line - 1, q.col);
    for (const group of service.findReferences(q.file, pos) || []) {
      for (const ref of group.references) {
        if (ref.isDefinition) continue;
        const target = program.getSourceFile(ref.fileName);
        const lc = target.getLineAndCharacterOfPosition(ref.textSpan.start);
        rows.push([ref.fileName, lc.line + 1, lc.character]);
      }
    }
  }
  out.push(rows);
}
const resolved = (input.resolve || []).map((r) => {
  const found = ts.resolveModuleName(r.specifier, r.from, options, ts.sys).resolvedModule;
  return found ? found.resolvedFileName : null;
});
process.stdout.write(JSON.stringify({ version: ts.version, results: out, resolved }));
