import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { formatBytes, shellQuote, terminalJson, terminalLine } from "./format.js";

// Every character that reorders or marks the direction of the text around it: the embeddings
// and overrides (U+202A-U+202E), the isolates (U+2066-U+2069), and the marks (U+200E LRM,
// U+200F RLM, U+061C ALM), which are as invisible and move neutral characters after them.
const DIRECTION_CONTROLS = [
  "\u061c",
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
];

function escaped(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** What bash makes of `word` (as a pasted command's argument would be). */
function bashEcho(word: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "bash",
      ["-c", `printf %s ${word}`],
      { env: { ...process.env, LC_ALL: "C.UTF-8" } },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

describe("text from the ledger on a terminal", () => {
  it("terminalLine and terminalJson show every direction control as an escape", () => {
    for (const control of DIRECTION_CONTROLS) {
      expect(terminalLine(`pay${control}run`)).toBe(`pay${escaped(control)}run`);
      expect(terminalJson(JSON.stringify({ id: `pay${control}run` }))).toBe(
        `{"id":"pay${escaped(control)}run"}`,
      );
    }
  });

  it("shellQuote writes a direction control as an escape that bash reads back as the value", async () => {
    for (const control of DIRECTION_CONTROLS) {
      const value = `it's pay${control}run`;
      const quoted = shellQuote(value);
      expect(quoted).toBe(`$'it\\'s pay${escaped(control)}run'`);
      // Escaped for the terminal afterwards, as inspect prints it, the command is unchanged.
      expect(terminalLine(quoted)).toBe(quoted);
      expect(await bashEcho(quoted)).toBe(value);
    }
  });
});

describe("formatBytes", () => {
  it("gives bytes as a count, and KiB, MiB and GiB with the exact count beside", () => {
    expect(formatBytes(0)).toBe("0 bytes");
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(1023)).toBe("1023 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB (1536 bytes)");
    expect(formatBytes(5 * 1024 ** 2)).toBe("5.0 MiB (5242880 bytes)");
    expect(formatBytes(3.25 * 1024 ** 3)).toBe("3.3 GiB (3489660928 bytes)");
  });
});
