// A method called through an interface binds to the interface's method; two classes with a method of the
// same name stay apart; implementations are related to the interface method.
// --- path: src/shapes.ts ---
export interface Shape {
  area(): number;
}

export class Square implements Shape {
//                             ^ implements: src.shapes.Shape
//                             ^ candidate implements: src.shapes.Shape
  constructor(private side: number) {}
  area(): number {
//^ implements: src.shapes.Shape.area
    return this.side * this.side;
  }
  describe(): string {
    return `square ${this.area()}`;
//                        ^ calls: src.shapes.Square.area from src.shapes.Square.describe
//                        ^ candidate calls: src.shapes.Square.area
  }
}

export class Circle implements Shape {
  constructor(private r: number) {}
  area(): number {
    return 3 * this.r * this.r;
  }
}

export function total(shapes: Shape[]): number {
//                            ^ type: src.shapes.Shape
//                            ^ candidate type: src.shapes.Shape
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
//           ^ calls: src.shapes.Shape.area from src.shapes.total
  }
  return sum + new Circle(1).area();
//                 ^ calls: src.shapes.Circle
//                 ^ candidate calls: src.shapes.Circle
//                           ^ calls: src.shapes.Circle.area
}
