/**
 * export function notInComment() {}
 * class NotAClass {}
 */
import { Injectable } from "@angular/core";
import type { Observable } from "rxjs";
import * as path from "node:path";
export { helper } from "./helper";

const lazy = () => import("./lazy");

export const f = () => 1;

export const g = async (a: number): Promise<void> => {
  const local = 1;
  function inner() {}
};

export const config = {
  name: "function fake() {}",
  nested: { deep: true },
};

const pattern = /class Fake \{ "/g;
const tpl = `export function inTemplate() { ${path.join("a", `b${1}`)} }`;

export interface Shape {
  area(): number;
  readonly name: string;
  new (x: number): Shape;
}

export type Id = string | number;

export type Mapper<T = unknown> = (
  value: T,
) => T;

export enum Color {
  Red,
  Green,
}

declare function declared(x: string): void;

export namespace Geometry {
  export function area(s: Shape): number {
    return s.area();
  }
}

@Injectable({ providedIn: "root" })
export abstract class Box<T extends { id: Id }> extends Base implements Shape {
  static count = 0;
  private items: T[] = [];
  handler = (e: Event): void => {
    console.log(e);
  };
  #secret = 1;

  constructor(private readonly svc: Service) {
    super();
  }

  get size(): number {
    return this.items.length;
  }

  static create<U extends { id: Id }>(): Box<U> {
    return null as any;
  }

  async *stream(): AsyncGenerator<T> {}

  abstract area(): number;

  overloaded(x: string): string;
  overloaded(x: number): number;
  overloaded(x: any): any {
    return x;
  }
}

export default function main(argv: string[]): Observable<number> {
  return null as any;
}
