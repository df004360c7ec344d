import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_STORE_URL } from "@agent-ledger/cli";
import ts from "typescript";
import { expect, it } from "vitest";

const readmes = [
  "README.md",
  "packages/ledger-core/README.md",
  "packages/cli/README.md",
  "packages/adapter-langchain/README.md",
  "packages/adapter-ai-sdk/README.md",
  "packages/adapter-openai-agents/README.md",
];

it("the READMEs' TypeScript blocks compile against the packages as built", () => {
  const { checked, failures } = checkReadmeSnippets(readmes);
  expect(failures).toEqual([]);
  expect(checked).toBeGreaterThan(0);
});

it("the READMEs' snippets keep a SQLite ledger where the agent-ledger command looks without --store", () => {
  // A user who ran an adapter's first snippet (sqlite:./ledger.db), then `npx agent-ledger
  // inspect <session>` as the root README says, got "no ledger at ./agent-ledger.db".
  const root = fileURLToPath(new URL("../", import.meta.url));
  const opened = readmes.flatMap((readme) =>
    [...readFileSync(join(root, readme), "utf8").matchAll(/openStore\("(sqlite:[^"]*)"/g)].map(
      (match) => `${readme}: ${match[1]}`,
    ),
  );
  expect(opened.length).toBeGreaterThan(0);
  expect(opened).toEqual(opened.map((line) => line.replace(/sqlite:.*$/, DEFAULT_STORE_URL)));
});

/**
 * A user copies the READMEs' code first. Each ```ts block is written as a module inside the
 * README's package, so its imports resolve as a user's would (to the built packages), and all of them
 * are typechecked in one program under tsconfig.base.json's strict settings. A block that uses
 * names it does not declare gets them from an HTML comment right above it, invisible on GitHub:
 * `<!-- snippet-context: declare const store: EventStore; -->`. A block not meant to compile
 * says why: `<!-- snippet: skip (the reason) -->`.
 */
function checkReadmeSnippets(paths: string[]): { checked: number; failures: string[] } {
  const root = fileURLToPath(new URL("../", import.meta.url));
  const failures: string[] = [];
  const snippets: {
    readme: string;
    where: string;
    line: number;
    context: string[];
    code: string[];
  }[] = [];
  for (const readme of paths) {
    const lines = readFileSync(join(root, readme), "utf8").split("\n");
    let block = 0;
    let markers = lines.filter((line) => line.includes("<!-- snippet")).length;
    lines.forEach((fence, at) => {
      const indent = /^(\s*)```(?:ts|typescript)\s*$/.exec(fence)?.[1];
      if (indent === undefined) return;
      block++;
      const end = lines.findIndex((line, after) => after > at && /^\s*```\s*$/.test(line));
      if (end < 0) {
        failures.push(`${readme} block ${block}: no closing fence`);
        return;
      }
      const code = lines.slice(at + 1, end).map((line) => line.slice(indent.length));
      let start = at; // the marker comment ends on the line above the fence
      if (/-->\s*$/.test(lines[at - 1] ?? ""))
        do start--;
        while (start > 0 && !lines[start]?.includes("<!--"));
      const marker = lines.slice(start, at).join("\n");
      const where = `${readme} block ${block}`;
      if (marker.includes("<!-- snippet")) markers--;
      const context = /^<!-- snippet-context:([\s\S]*)-->\s*$/.exec(marker)?.[1];
      if (/^<!-- snippet: skip \(.+\) -->\s*$/.test(marker)) return;
      if (marker.includes("<!-- snippet") && context === undefined)
        failures.push(`${where}, line ${start + 1}: unknown marker ${marker}`);
      const contextLines = context?.split("\n") ?? [];
      // The context comment's lines stand right above the fence (line at + 1), the code below.
      snippets.push({
        readme,
        where,
        line: at + 1 - contextLines.length,
        context: contextLines,
        code,
      });
    });
    if (markers > 0) failures.push(`${readme}: ${markers} snippet marker(s) not above a ts block`);
  }

  // Inside each README's package, for its node_modules; gitignored; removed after the run.
  const scratches = new Map<string, string>();
  const scratchOf = (readme: string) => {
    const directory = join(root, dirname(readme));
    let scratch = scratches.get(directory);
    if (scratch === undefined) {
      scratch = mkdtempSync(join(directory, ".readme-snippets-"));
      scratches.set(directory, scratch);
    }
    return scratch;
  };
  try {
    const files = new Map(
      snippets.map((snippet, index) => {
        const file = join(scratchOf(snippet.readme), `snippet-${index}.ts`);
        writeFileSync(file, [...snippet.context, ...snippet.code, "export {};", ""].join("\n"));
        return [file, snippet] as const;
      }),
    );
    const base = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile);
    const { options } = ts.convertCompilerOptionsFromJson(base.config.compilerOptions, root);
    const program = ts.createProgram([...files.keys()], {
      ...options,
      noEmit: true,
      composite: false,
      incremental: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
    });
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
      const snippet = files.get(diagnostic.file?.fileName ?? "");
      if (snippet === undefined || diagnostic.file === undefined) {
        failures.push(`${diagnostic.file?.fileName ?? "options"}: ${message}`);
        continue;
      }
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const readmeLine = snippet.line + line + (line < snippet.context.length ? 0 : 1);
      failures.push(`${snippet.where}, line ${readmeLine}: ${message}`);
    }
  } finally {
    for (const scratch of scratches.values()) rmSync(scratch, { recursive: true, force: true });
  }
  return { checked: snippets.length, failures };
}
