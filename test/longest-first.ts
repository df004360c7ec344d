import { statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Seconds each long test file took in a full CI run (2 workers, a loaded machine; files under
// 10 s left out). Three were changed after that run and have no such figure yet: theirs are
// the run's, scaled by what the file alone took after the change over before (mysql-app-pool
// 148 s x 0.45, postgres-app-pool 65 s x 0.73, mysql-conformance 42 s x 0.77). Vitest's own
// order runs the projects one after another and, without its results cache (a clean clone
// has none), the files of a project in the order found: the `repo` project's long files then
// started last and ran while the other worker idled. Longest first lets the short files fill
// in at the end. Only the order depends on these figures:
// a file missing here, or timed wrong, still runs.
const seconds = new Map<string, number>([
  ["test/packed-install.test.ts", 138],
  ["packages/adapter-openai-agents/src/agent-tool-inspect.test.ts", 95],
  ["packages/ledger-core/src/stores/mysql/mysql-app-pool.int.test.ts", 67],
  ["test/framework-demos.test.ts", 63],
  ["packages/cli/src/cli-postgres.int.test.ts", 56],
  ["packages/cli/src/cli-sqlite.test.ts", 56],
  ["packages/cli/src/cli-mysql.int.test.ts", 50],
  ["packages/ledger-core/src/stores/postgres/postgres-app-pool.int.test.ts", 47],
  ["packages/cli/src/viewer.test.ts", 43],
  ["packages/cli/src/cli-redis.int.test.ts", 41],
  ["test/readme-snippets.test.ts", 39],
  ["examples/plain-loop/src/demo-servers.test.ts", 37],
  ["packages/ledger-core/src/stores/mysql/mysql-conformance.int.test.ts", 32],
  ["examples/ai-sdk-agent/src/agent.test.ts", 31],
  ["packages/ledger-core/src/stores/redis/redis-app-client.int.test.ts", 30],
  ["packages/adapter-openai-agents/src/resume-run.test.ts", 29],
  ["packages/cli/src/viewer-long-session.test.ts", 29],
  ["packages/ledger-core/src/stores/postgres/postgres-conformance.int.test.ts", 27],
  ["packages/adapter-openai-agents/src/handoff-callback.test.ts", 26],
  ["packages/cli/src/commands/resolve.test.ts", 26],
  ["examples/openai-agents-resume/src/resume.test.ts", 25],
  ["examples/langchain-agent/src/crash-resume.test.ts", 23],
  ["packages/adapter-langchain/src/nested-decision.test.ts", 23],
  ["packages/cli/src/viewer-run-chain.test.ts", 23],
  ["packages/ledger-core/src/stores/sqlite/file-check.test.ts", 22],
  ["packages/adapter-langchain/src/unresolved-interrupt.test.ts", 21],
  ["packages/cli/src/commands/inspect.test.ts", 21],
  ["packages/ledger-core/src/stores/redis/redis-race.int.test.ts", 21],
  ["packages/ledger-core/src/stores/mysql/mysql-store.int.test.ts", 20],
  ["packages/ledger-core/src/stores/sql/collect-race.int.test.ts", 20],
  ["packages/ledger-core/src/stores/sql/first-release-upgrade.int.test.ts", 20],
  ["packages/adapter-openai-agents/src/paused-run.test.ts", 19],
  ["packages/adapter-openai-agents/src/reused-call-ids.test.ts", 19],
  ["packages/ledger-core/src/stores/postgres/postgres-store.int.test.ts", 18],
  ["packages/ledger-core/src/stores/sql/retention-race.int.test.ts", 18],
  ["packages/ledger-core/src/stores/sqlite/sqlite-upgrade.test.ts", 17],
  ["packages/cli/src/commands/prune.test.ts", 16],
  ["test/readme-install.test.ts", 15],
  ["packages/adapter-langchain/src/retriever.test.ts", 15],
  ["packages/adapter-openai-agents/src/ledger-tool.test.ts", 15],
  ["packages/cli/src/cli-upgrade.int.test.ts", 15],
  ["packages/cli/src/resolve-settle-fails.test.ts", 14],
  ["packages/cli/src/commands/deleted-while-read.test.ts", 14],
  ["packages/cli/src/commands/session-args.test.ts", 14],
  ["packages/ledger-core/src/stores/mysql/mysql-race.int.test.ts", 14],
  ["packages/ledger-core/src/stores/sql/collect-blobs.int.test.ts", 14],
  ["packages/adapter-langchain/src/tool-node.test.ts", 13],
  ["packages/ledger-core/src/stores/postgres/postgres-race.int.test.ts", 13],
  ["packages/ledger-core/src/stores/redis/redis-store.int.test.ts", 12],
  ["packages/ledger-core/src/stores/sql/migrations-in-sync.test.ts", 12],
  ["packages/cli/src/store.test.ts", 11],
  ["packages/cli/src/viewer-decisions.test.ts", 11],
  ["packages/ledger-core/src/stores/redis/redis-cluster.int.test.ts", 11],
  ["packages/adapter-openai-agents/src/approval-decisions.test.ts", 10],
  ["packages/adapter-openai-agents/src/ledger-local-tool.test.ts", 10],
  ["packages/ledger-core/src/projections/run-chain.test.ts", 10],
  ["packages/ledger-core/src/store/public-types.test.ts", 10],
]);

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
    return [...files].sort((a, b) => (weight.get(b) ?? 0) - (weight.get(a) ?? 0));
  }
}
