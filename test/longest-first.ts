import { statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Seconds each long test file took in a full CI run (a clean clone's, 2 workers, on a quiet
// machine; files under 10 s left out). Vitest's own order runs the projects one after another
// and, without its results cache (a clean clone has none), the files of a project in the
// order found: the `repo` project's long files then started last and ran while the other
// worker idled. Longest first lets the short files fill in at the end. Only the order depends
// on these figures: a file missing here, or timed wrong, still runs.
const seconds = new Map<string, number>([
  ["examples/plain-loop/src/demo-servers.test.ts", 43],
  ["packages/adapter-langchain/src/nested-decision.test.ts", 35],
  ["packages/ledger-core/src/stores/redis/redis-app-client.int.test.ts", 32],
  ["test/packed-install.test.ts", 30],
  ["packages/cli/src/viewer-long-session.test.ts", 30],
  ["packages/ledger-core/src/stores/postgres/postgres-app-pool.int.test.ts", 30],
  ["packages/adapter-langchain/src/unresolved-interrupt.test.ts", 27],
  ["packages/cli/src/viewer-run-chain.test.ts", 26],
  ["examples/ai-sdk-agent/src/agent.test.ts", 25],
  ["examples/openai-agents-resume/src/resume.test.ts", 25],
  ["packages/cli/src/viewer-browsing.test.ts", 25],
  ["packages/cli/src/viewer-decisions.test.ts", 25],
  ["packages/ledger-core/src/stores/redis/redis-race.int.test.ts", 24],
  ["packages/ledger-core/src/stores/mysql/mysql-app-pool.int.test.ts", 23],
  ["packages/adapter-langchain/src/subgraph-crash.test.ts", 22],
  ["packages/adapter-langchain/src/nested-two-levels.test.ts", 21],
  ["packages/ledger-core/src/stores/mysql/mysql-conformance.int.test.ts", 18],
  ["packages/adapter-openai-agents/src/resume-run.test.ts", 17],
  ["packages/cli/src/viewer.test.ts", 17],
  ["packages/ledger-core/src/stores/sql/first-release-upgrade.int.test.ts", 17],
  ["test/framework-demos.test.ts", 16],
  ["packages/ledger-core/src/stores/mysql/mysql-race.int.test.ts", 16],
  ["packages/ledger-core/src/stores/postgres/postgres-conformance.int.test.ts", 16],
  ["packages/ledger-core/src/stores/postgres/postgres-race.int.test.ts", 16],
  ["packages/adapter-langchain/src/saved-refusals.test.ts", 15],
  ["packages/ledger-core/src/stores/redis/redis-reads.int.test.ts", 15],
  ["packages/ledger-core/src/stores/sqlite/sqlite-upgrade.test.ts", 15],
  ["packages/ledger-core/src/stores/sql/collect-race.int.test.ts", 15],
  ["examples/langchain-agent/src/crash-resume.test.ts", 14],
  ["packages/adapter-openai-agents/src/agent-tool-inspect.test.ts", 13],
  ["packages/ledger-core/src/stores/sql/retention-race.int.test.ts", 13],
  ["examples/openai-agents-resume/src/writer-agent.test.ts", 12],
  ["packages/adapter-openai-agents/src/handoff-callback.test.ts", 12],
  ["packages/cli/src/store-password.int.test.ts", 12],
  ["packages/ledger-core/src/stores/mysql/mysql-statements.int.test.ts", 12],
  ["packages/ledger-core/src/stores/sql/collect-blobs.int.test.ts", 12],
  ["packages/adapter-langchain/src/ledger-middleware.test.ts", 11],
  ["packages/adapter-langchain/src/structured-crash.test.ts", 11],
  ["packages/cli/src/commands/deleted-while-read.test.ts", 11],
  ["packages/ledger-core/src/stores/redis/redis-conformance.int.test.ts", 11],
  ["test/readme-snippets.test.ts", 10],
  ["packages/adapter-openai-agents/src/ledger-tool.test.ts", 10],
  ["packages/ledger-core/src/stores/postgres/postgres-store.int.test.ts", 10],
]);

/**
 * The projects whose files share their workers' modules (`isolate: false`) first, each project's
 * files together, then the isolated projects' files. Vitest hands a worker of a shared project the
 * next file only when the queue's next file is of the same project; any other ends the worker, and
 * the next file starts a new one that imports everything again. Ordered longest first across
 * projects, the shared projects' files were interleaved with the others' and most of their workers
 * ran one file. Within each part, longest first.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = new Map(
      files.map((spec) => {
        const file = relative(root, spec.moduleId).replaceAll("\\", "/");
        // Unknown files after the known long ones, larger first (vitest's own guess).
        return [spec, seconds.get(file) ?? statSync(spec.moduleId).size / 1e6] as const;
      }),
    );
    const longestFirst = (specs: TestSpecification[]) =>
      specs.sort((a, b) => (weight.get(b) ?? 0) - (weight.get(a) ?? 0));
    const shared = new Map<string, TestSpecification[]>();
    const isolated: TestSpecification[] = [];
    for (const spec of files) {
      if (spec.project.config.isolate !== false) {
        isolated.push(spec);
        continue;
      }
      const block = shared.get(spec.project.name);
      if (block) block.push(spec);
      else shared.set(spec.project.name, [spec]);
    }
    // The project with the longest file first, so it starts while the run is young.
    const blocks = [...shared.values()].map(longestFirst);
    blocks.sort(
      (a, b) =>
        (weight.get(b[0] as TestSpecification) ?? 0) - (weight.get(a[0] as TestSpecification) ?? 0),
    );
    return [...blocks.flat(), ...longestFirst(isolated)];
  }
}
