// `npm run bench`: every figure next to a baseline measured in the same run (these machines
// are noisy, so only ratios mean something). `npm run bench -- core servers ai-sdk storage`
// picks suites; the default runs them all.
import { benchCore } from "./core-bench.js";
import { printTable, type Row } from "./stats.js";

const suites: Record<string, { title: string; run: () => Promise<Row[]> }> = {
  core: { title: "ledger-core: memory and SQLite", run: benchCore },
};

const wanted = process.argv.slice(2).filter((name) => !name.startsWith("-"));
const selected = wanted.length > 0 ? wanted : Object.keys(suites);
for (const name of selected) {
  const suite = suites[name];
  if (!suite) {
    console.error(`unknown bench suite ${name}; known: ${Object.keys(suites).join(", ")}`);
    process.exitCode = 2;
    continue;
  }
  console.error(`running ${name} ...`);
  printTable(suite.title, await suite.run());
}
