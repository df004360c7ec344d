import { describe, expect, it } from "vitest";
import { runKey, setBounded } from "./bounded-map.js";

describe("runKey", () => {
  it("keys a (session, run) by both ids, and gives the same key for the same pair", () => {
    const key = runKey("s1", "r1");
    expect(key).toBe("s1\nr1");
    expect(runKey(`s${1}`, `r${1}`)).toBe(key);
    expect(runKey("s1", "r2")).toBe("s1\nr2");
    expect(runKey("s2", "r1")).toBe("s2\nr1");
  });
});

describe("setBounded", () => {
  it("replaces the value of a key in place, and past the bound forgets the key first set", () => {
    const map = new Map<string, number>();
    setBounded(map, "a", 1, 2);
    setBounded(map, "b", 2, 2);
    setBounded(map, "a", 3, 2);
    expect([...map]).toEqual([
      ["a", 3],
      ["b", 2],
    ]);
    setBounded(map, "c", 4, 2);
    expect([...map]).toEqual([
      ["b", 2],
      ["c", 4],
    ]);
  });

  it("forgets nothing when a key already there is set again at the bound", () => {
    const map = new Map([
      ["a", 1],
      ["b", 2],
    ]);
    setBounded(map, "b", 5, 2);
    expect([...map]).toEqual([
      ["a", 1],
      ["b", 5],
    ]);
  });
});
