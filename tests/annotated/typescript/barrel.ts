// A re-export barrel: importers bind to the real declaration; the barrel's own lines are REEXPORTS, not uses.
// --- path: src/lib/impl.ts ---
export function helper(): number {
  return 1;
}
export const LIMIT = 10;
// --- path: src/lib/more.ts ---
export class Thing {}
// --- path: src/lib/index.ts ---
export { helper, LIMIT as MAX } from "./impl";
//       ^ reexports: src.lib.impl.helper
//       ^ candidate reexports: src.lib.impl.helper
export * from "./more";
// --- path: src/app.ts ---
import { helper, MAX, Thing } from "./lib";
//       ^ imports: src.lib.impl.helper
//       ^ candidate imports: src.lib.impl.helper
//               ^ imports: src.lib.impl.LIMIT
//               ^ candidate imports: src.lib.impl.LIMIT
//                    ^ imports: src.lib.more.Thing
//                    ^ candidate imports: src.lib.more.Thing
import { missing } from "./lib";
//       ^ candidate unresolved: EXPORT_NOT_FOUND

export function run(): Thing {
  return helper() > MAX ? new Thing() : new Thing();
//       ^ calls: src.lib.impl.helper from src.app.run
//       ^ candidate calls: src.lib.impl.helper
}
