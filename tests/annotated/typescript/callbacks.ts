// A function passed by reference is a callback, not a call; a method passed by reference too.
// --- path: src/numbers.ts ---
export function double(n: number): number {
  return n * 2;
}

export class Fmt {
  static show(n: number): string {
    return String(n);
  }
}

export function run(xs: number[]): string[] {
  return xs.map(double).map(Fmt.show);
//              ^ callback: src.numbers.double from src.numbers.run
//              ^ candidate callback: src.numbers.double
//                              ^ callback: src.numbers.Fmt.show
//                              ^ candidate callback: src.numbers.Fmt.show
}

// !uncalled: src.numbers.double
