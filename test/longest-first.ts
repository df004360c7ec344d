import { statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Seconds each long test file took in a full CI run (2 workers, on a machine other work kept
// busy; files under 10 s left out). Vitest's own order runs the projects one after another
// and, without its results cache (a clean clone has none), the files of a project in the
// order found: the `repo` project's long files then started last and ran while the other
// worker idled. Longest first lets the short files fill in at the end. Only the order depends
// on these figures: a file missing here, or timed wrong, still runs.
const seconds = new Map<string, number>([
  ["packages/adapter-openai-agents/src/agent-tool-inspect.test.ts", 86],
  ["packages/cli/src/cli-postgres.int.test.ts", 63],
  ["packages/cli/src/cli-sqlite.test.ts", 60],
  ["test/packed-install.test.ts", 59],
  ["packages/cli/src/cli-redis.int.test.ts", 47],
  ["packages/cli/src/cli-mysql.int.test.ts", 40],
  ["packages/ledger-core/src/stores/mysql/mysql-app-pool.int.test.ts", 35],
  ["packages/ledger-core/src/stores/redis/redis-app-client.int.test.ts", 33],
  ["examples/openai-agents-resume/src/resume.test.ts", 33],
  ["packages/ledger-core/src/stores/postgres/postgres-conformance.int.test.ts", 33],
  ["packages/ledger-core/src/stores/postgres/postgres-app-pool.int.test.ts", 33],
  ["packages/cli/src/commands/resolve.test.ts", 31],
  ["examples/langchain-agent/src/crash-resume.test.ts", 25],
  ["packages/ledger-core/src/stores/sql/first-release-upgrade.int.test.ts", 25],
  ["packages/adapter-langchain/src/nested-decision.test.ts", 24],
  ["packages/adapter-langchain/src/nested-two-levels.test.ts", 23],
  ["examples/plain-loop/src/demo-servers.test.ts", 23],
  ["test/framework-demos.test.ts", 21],
  ["packages/cli/src/viewer-browsing.test.ts", 20],
  ["packages/cli/src/viewer-long-session.test.ts", 18],
  ["examples/ai-sdk-agent/src/agent.test.ts", 15],
  ["packages/ledger-core/src/stores/sqlite/sqlite-upgrade.test.ts", 15],
  ["packages/cli/src/viewer-run-chain.test.ts", 15],
  ["packages/ledger-core/src/stores/sql/collect-blobs.int.test.ts", 15],
  ["packages/ledger-core/src/stores/postgres/postgres-store.int.test.ts", 14],
  ["packages/ledger-core/src/stores/redis/redis-cluster.int.test.ts", 14],
  ["packages/adapter-openai-agents/src/handoff-callback.test.ts", 14],
  ["packages/cli/src/commands/inspect.test.ts", 14],
  ["packages/cli/src/viewer.test.ts", 14],
  ["packages/ledger-core/src/stores/sql/retention-race.int.test.ts", 14],
  ["packages/cli/src/commands/session-args.test.ts", 13],
  ["packages/ledger-core/src/stores/mysql/mysql-conformance.int.test.ts", 13],
  ["packages/adapter-openai-agents/src/paused-run.test.ts", 13],
  ["packages/ledger-core/src/stores/redis/redis-race.int.test.ts", 12],
  ["packages/ledger-core/src/stores/redis/redis-reads.int.test.ts", 12],
  ["packages/adapter-ai-sdk/src/person-abandoned-calls.test.ts", 12],
  ["packages/ledger-core/src/stores/sql/collect-race.int.test.ts", 12],
  ["packages/adapter-openai-agents/src/ledger-tool.test.ts", 12],
  ["packages/ledger-core/src/stores/mysql/mysql-race.int.test.ts", 12],
  ["packages/cli/src/store.test.ts", 12],
  ["packages/adapter-ai-sdk/src/abandoned-tool-calls.test.ts", 11],
  ["packages/cli/src/cli-upgrade.int.test.ts", 11],
  ["packages/adapter-ai-sdk/src/sibling-outcomes.test.ts", 11],
  ["packages/adapter-langchain/src/unresolved-interrupt.test.ts", 11],
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
