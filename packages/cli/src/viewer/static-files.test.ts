import { readdirSync, readFileSync } from "node:fs";
import { MemoryEventStore } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { STATIC_FILE_NAMES } from "./static-files.js";
import { startViewer } from "./viewer-server.js";

const STATIC = new URL("../../static/", import.meta.url);

describe("the viewer's files", () => {
  it("are every file of packages/cli/static, each served", () => {
    expect([...STATIC_FILE_NAMES].sort()).toEqual(readdirSync(STATIC).sort());
  });

  it("name only served modules in their imports: the page loads whole", () => {
    const modules = STATIC_FILE_NAMES.filter((name) => name.endsWith(".js"));
    const imported = new Set<string>();
    for (const name of modules) {
      const text = readFileSync(new URL(name, STATIC), "utf8");
      for (const [, target] of text.matchAll(/^import [^;]+ from "([^"]+)";$/gm))
        imported.add(target ?? "");
    }
    expect(imported.size).toBeGreaterThan(0);
    for (const target of imported) expect(modules).toContain(target.replace(/^\.\//, ""));
    // Every module but the entry is imported by another: none is left out of the page.
    expect([...imported].map((target) => target.replace(/^\.\//, "")).sort()).toEqual(
      modules.filter((name) => name !== "app.js").sort(),
    );
  });

  it("are served without the token, as the browser asks for them (no token in an import), but the page is not", async () => {
    const viewer = await startViewer({
      store: new MemoryEventStore(),
      token: "s3cret-token-value",
    });
    try {
      const base = new URL("/", viewer.url);
      for (const name of STATIC_FILE_NAMES) {
        const response = await fetch(new URL(name, base));
        if (name === "index.html") {
          expect(response.status).toBe(401);
          continue;
        }
        expect({ name, status: response.status }).toEqual({ name, status: 200 });
        expect(response.headers.get("content-type")).toMatch(
          name.endsWith(".css") ? /^text\/css/ : /^text\/javascript/,
        );
        expect(await response.text()).toBe(readFileSync(new URL(name, STATIC), "utf8"));
      }
      expect((await fetch(new URL("/?token=s3cret-token-value", base))).status).toBe(200);
    } finally {
      await viewer.close();
    }
  });
});
