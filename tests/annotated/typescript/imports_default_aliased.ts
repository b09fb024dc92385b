// Default imports and aliased named imports bind to the exporting declaration.
// --- path: src/cache.ts ---
/** A tiny cache. */
export default class Cache {
  get(key: string): string | undefined {
    return key;
  }
}
// --- path: src/factory.ts ---
import Cache from "./cache";
//     ^ imports: src.cache.Cache
//     ^ candidate imports: src.cache.Cache
export function make(): Cache {
  return new Cache();
//           ^ calls: src.cache.Cache
//           ^ candidate calls: src.cache.Cache
}
// --- path: src/main.ts ---
import { make as build } from "./factory";
//       ^ imports: src.factory.make
//       ^ candidate imports: src.factory.make
import * as factory from "./factory";

export function main(): void {
  build().get("a");
//^ calls: src.factory.make from src.main.main
//^ candidate calls: src.factory.make
//        ^ calls: src.cache.Cache.get
  factory.make();
//        ^ calls: src.factory.make
//        ^ candidate calls: src.factory.make
}
