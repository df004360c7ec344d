import { resumeRun, runWithLedger } from "../index.js";
import { isType, payloadOf, type Scenario } from "./crash-points.test.data.js";
import { nestedAgentToolsFixture } from "./nested-agent-tools.js";
import { firstInterruption, runOptions } from "./recorded-run.js";
import { researchFixture } from "./research-agents.js";
import { agentToolFixture } from "./writer-agent.js";

export const AGENT_TOOL_CRASH_SCENARIOS = {
  "writer as a tool: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  "writer as a tool, not instrumented: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: false,
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  "writer as a tool, model recorded only: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: "model only",
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  // Its writer records write, but has a plain SDK tool too: its run cannot say it records
  // every call, so the writer_tool call is a decision of its own, besides the write inside it.
  "writer as a tool, partly instrumented: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: "partly",
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  // A second process, on the ledger the one above left: the resume asks about writer_tool, a
  // person rejects it, and it dies right after main's model answered that (before the run ends).
  "writer as a tool, partly instrumented, resumed, writer_tool rejected: dies after the next model call":
    async (child) => {
      const second = agentToolFixture({ writeNeedsApproval: false, instrumented: "partly" });
      second.model.calls = 1;
      const paused = await resumeRun(second.main, runOptions(child.store, second.model));
      child.asked(paused.interruptions);
      const { state, item } = firstInterruption(paused);
      state.reject(item);
      const store = child.dyingAfter(isType("model.completed"));
      await resumeRun(second.main, { ...runOptions(store, second.model), state });
    },
  // Right after the writer_tool call's request is committed: its writer has not started.
  "writer as a tool: dies right after its call is requested": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false });
    const store = child.dyingAfter(
      (event) => event.type === "tool.requested" && payloadOf(event).name === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  // Right after the writer's child run started, before its first model call was requested.
  "writer as a tool: dies right after its run started": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false });
    const store = child.dyingAfter(
      (event) => event.type === "run.started" && payloadOf(event).asToolOf === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  // A second process, on the ledger "dies right after its run started" left: the resume makes
  // writer_tool again by itself (its retry, going on on the child run the first attempt started),
  // and dies inside the write its writer makes there.
  "writer as a tool, resumed: dies inside write": async (child) => {
    const second = agentToolFixture({
      writeNeedsApproval: false,
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    second.model.calls = 1;
    await resumeRun(second.main, runOptions(child.store, second.model));
  },
  "writer as a tool, model recorded only: dies right after its run started": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false, instrumented: "model only" });
    const store = child.dyingAfter(
      (event) => event.type === "run.started" && payloadOf(event).asToolOf === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  // Outer -> mid -> inner -> charge, agents as tools two levels deep; dies inside the charge.
  "nested agent tools: dies inside charge": async (child) => {
    const first = nestedAgentToolsFixture({ afterEffect: child.afterEffect("charge 7") });
    await runWithLedger(first.outer, "go", runOptions(child.store, first.model));
  },
  // boss calls research on "lamps", then on "chairs"; dies inside the search on "chairs".
  "research twice: dies inside the second call's search": async (child) => {
    const first = researchFixture({
      secondTopic: "chairs",
      search: true,
      afterEffect: child.afterEffect("search chairs"),
    });
    await runWithLedger(first.boss, "go", runOptions(child.store, first.model));
  },
} satisfies Record<string, Scenario>;
