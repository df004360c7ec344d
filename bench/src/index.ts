// `npm run bench`: every figure next to a baseline measured in the same run (these machines
// are noisy, so only ratios mean something). `npm run bench -- core servers ai-sdk` picks
// suites; the default runs them all.
import { benchAiSdkOverhead } from "./ai-sdk-overhead.js";
import { benchCore } from "./core-bench.js";
import { benchServers } from "./server-bench.js";
import { printTable, type Row } from "./stats.js";
import { benchStorage } from "./storage-bench.js";

const suites: Record<string, { title: string; run: () => Promise<Row[]> }> = {
  core: { title: "ledger-core: memory and SQLite", run: benchCore },
  servers: { title: "server stores: PostgreSQL, MariaDB, Redis", run: benchServers },
  storage: {
    title: "storage: 200-turn conversation, bytes on disk and write latency",
    run: benchStorage,
  },
  "ai-sdk": { title: "AI SDK middleware overhead per generateText step", run: benchAiSdkOverhead },
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
