// A consumer that imports a registered provider package (a tsconfig path mapping to the provider's source)
// binds to the provider repository's declarations.
// --- path: provlib:package.json ---
{"name": "provlib", "version": "1.2.0"}
// --- path: provlib:src/index.ts ---
export interface Store { load(id: string): string }
export function open(name: string): Store {
  return { load: (id: string) => name + id };
}
// --- path: app:package.json ---
{"name": "app", "version": "0.0.1"}
// --- path: app:tsconfig.json ---
{"compilerOptions": {"baseUrl": ".", "paths": {"provlib": ["../provlib/src/index.ts"]}, "strict": true}}
// --- path: app:src/main.ts ---
import { open, Store } from "provlib";
//       ^ imports: provlib:src.index.open
//       ^ candidate imports: provlib:src.index.open
export function boot(): string {
  const s: Store = open("db");
//         ^ type: provlib:src.index.Store
//                 ^ calls: provlib:src.index.open from src.main.boot
//                 ^ candidate calls: provlib:src.index.open
  return s.load("1");
//         ^ calls: provlib:src.index.Store.load
}
// --- path: web:package.json ---
{"name": "web", "version": "0.0.1"}
// --- path: web:node_modules/provlib/package.json ---
{"name": "provlib", "version": "1.2.0", "types": "src/index.ts"}
// --- path: web:node_modules/provlib/src/index.ts ---
export interface Store { load(id: string): string }
export function open(name: string): Store {
  return { load: (id: string) => name + id };
}
// --- path: web:src/page.ts ---
import { open } from "provlib";
//       ^ imports: provlib:src.index.open
export const page = open("web").load("p");
//                  ^ calls: provlib:src.index.open from src.page.page
//                              ^ calls: provlib:src.index.Store.load
