// A .js file is checked with allowJs: calls inside it, and a .ts file importing it, are exact.
// --- path: src/util.js ---
/** Slugify a title. */
export function slug(s) {
  return s.toLowerCase().replace(/ /g, "-");
}

export function title(s) {
  return slug(s).toUpperCase();
//       ^ calls: src.util.slug from src.util.title
//       ^ candidate calls: src.util.slug
}
// --- path: src/page.ts ---
import { title } from "./util.js";
//       ^ imports: src.util.title
//       ^ candidate imports: src.util.title
export const heading = title("Hello World");
//                     ^ calls: src.util.title from src.page.heading
