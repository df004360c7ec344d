import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/longest-first.js";

// One vitest run covers every workspace; each package is a project so a package's tests can
// be run alone with `vitest run --project <name>`. Workspace packages resolve to their built
// `dist/` (npm test builds first with `tsc -b`), exactly as a user would import them.
const project = (name: string, root: string, options: { isolate?: boolean } = {}) => ({
  test: {
    name,
    root,
    ...options,
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll gives up after 1 s by default. The viewer tests poll a browser page that, on a
    // machine of two cores running other test files, can take longer than that to redraw (a
    // 3.2 MB payload shown whole); a poll that passes returns as soon as it does.
    expect: { poll: { timeout: 15_000 } },
  },
});

export default defineConfig({
  test: {
    // Vitest's default is one worker less than the cores: one worker on a machine of two, like
    // CI's. The suite waits on the servers, child processes and fsync more than it computes:
    // with two workers there, the whole run took 579 s against 729 s. Test files share the
    // servers, each under a key prefix, schema or database of its own, and none changes what
    // the others see (a test that flushes Redis's scripts runs a server of its own).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Every project's files share one queue (same groupOrder, same maxWorkers); this puts the
    // projects whose files share modules first, each one's files together (a worker goes on to a
    // next file only of its own project), then the rest longest first, so the run does not end
    // on one long file.
    sequence: { sequencer: LongestFirst },
    projects: [
      // Core's and LangChain's files share their workers' modules too (core's 198 files imported
      // 146 s in all isolated, 39 s shared; LangChain's, @langchain/* and zod, 332 s against 49 s;
      // both projects run whole, shared, on a busy machine: all passed).
      project("core", "packages/ledger-core", { isolate: false }),
      project("langchain", "packages/adapter-langchain", { isolate: false }),
      // Its files share their workers' modules: each file's import of \`ai\` (and zod) took most of
      // its time (the project: 418 s, of which 278 s importing, against 246 s and 49 s shared, on
      // a machine other work kept busy). Its tests keep no state in a module.
      project("ai-sdk", "packages/adapter-ai-sdk", { isolate: false }),
      // Its files share their workers' modules too: each file imported @openai/agents, zod and
      // the MCP SDK anew (the project isolated: 847 s, of which 416 s importing; shared: 320 s and
      // 28 s, on a machine other work kept busy, less so in the second run). Neither the adapter
      // nor its tests keep state in a module that one file's tests leave to another's (WeakMaps
      // keyed by the agents and tools each test makes; the one SDK global they set, tracing off,
      // is the same for all).
      project("openai-agents", "packages/adapter-openai-agents", { isolate: false }),
      // The CLI's files share their workers' modules too: isolated, its 73 files spent 58 s
      // importing the CLI, core and the drivers, and the run's last minutes (the isolated files)
      // kept one of the two workers starting files instead of running them (the project alone,
      // CI=true, quiet machine: 193 s isolated, 165 s shared, imports 9.7 s). Its tests pass every
      // store, environment and output stream to the CLI explicitly; none sets one in a module.
      project("cli", "packages/cli", { isolate: false }),
      project("example-plain-loop", "examples/plain-loop"),
      project("example-langchain-agent", "examples/langchain-agent"),
      project("example-ai-sdk-agent", "examples/ai-sdk-agent"),
      project("example-openai-agents-resume", "examples/openai-agents-resume"),
      project("bench", "bench"),
      project("repo", "."),
    ],
  },
});
