import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDirectory } from "../testing/scratch-directory.js";

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, "..", "..", "dist", "index.js");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const folder = scratchDirectory("agent-ledger-types-", { beforeAll, afterAll });

describe("the types of @agent-ledger/core's main entry (built)", () => {
  // A browser bundle, an edge worker, a project with no @types/node: the published .d.ts files
  // are checked with them (skipLibCheck: false) and must name nothing only Node declares.
  it("type-check without @types/node", () => {
    writeFileSync(
      join(folder, "consumer.ts"),
      `import * as core from ${JSON.stringify(entry)};\nexport const all = core;\n`,
    );
    writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(
      join(folder, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          // TypeScript's own lib.*.d.ts need no checking here (most of the run's time).
          skipDefaultLibCheck: true,
          types: [],
        },
        files: ["consumer.ts"],
      }),
    );
    const result = spawnSync(process.execPath, [tsc, "-p", folder], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(`${result.stdout}${result.stderr}`).toBe("");
    expect(result.status).toBe(0);
  });
});
