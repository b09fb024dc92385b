// Overload signatures and their implementation are one declaration; every call binds to it.
// --- path: src/parse.ts ---
export function parse(x: string): number;
export function parse(x: number): number;
export function parse(x: string | number): number {
  return typeof x === "string" ? Number(x) : x;
}

export class Reader {
  read(n: number): string;
  read(s: string): string;
  read(v: number | string): string {
    return String(v);
  }
}

export function both(r: Reader): number {
//                      ^ type: src.parse.Reader
  r.read(1);
//  ^ calls: src.parse.Reader.read
  return parse("1") + parse(2);
//       ^ calls: src.parse.parse from src.parse.both
//       ^ candidate calls: src.parse.parse
//                    ^ calls: src.parse.parse
}
