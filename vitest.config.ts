import { defineConfig } from "vitest/config";

// One vitest run covers every workspace; each package is a project so a package's tests can
// be run alone with `vitest run --project <name>`. Workspace packages resolve to their built
// `dist/` (npm test builds first with `tsc -b`), exactly as a user would import them.
const project = (name: string, root: string) => ({
  test: {
    name,
    root,
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [
      project("core", "packages/ledger-core"),
      project("langchain", "packages/adapter-langchain"),
      project("ai-sdk", "packages/adapter-ai-sdk"),
      project("openai-agents", "packages/adapter-openai-agents"),
      project("cli", "packages/cli"),
      project("example-plain-loop", "examples/plain-loop"),
      project("example-langchain-agent", "examples/langchain-agent"),
      project("example-ai-sdk-agent", "examples/ai-sdk-agent"),
      project("example-openai-agents-resume", "examples/openai-agents-resume"),
      project("bench", "bench"),
      project("repo", "."),
    ],
  },
});
