import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  applyRedaction,
  DEFAULT_CREDENTIAL_PATHS,
  hashJson,
  type JsonObject,
  type JsonValue,
  type LedgerEvent,
  readWholeSession,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { z } from "zod";
import { resumeRun, runWithLedger } from "./index.js";
import { modelRequestToJson } from "./model-json.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-credentials-", { beforeAll, afterAll });
let files = 0;

async function sqliteLedger(): Promise<{ path: string; store: SqliteEventStore }> {
  const path = join(scratch, `ledger-${++files}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { path, store };
}

// Credentials as gateways and providers name them: none on DEFAULT_CREDENTIAL_PATHS as spelt.
const SECRETS = {
  "X-API-Key": "sk-SECRET-1",
  "x-goog-api-key": "SECRET-2",
  apikey: "SECRET-3",
  "Ocp-Apim-Subscription-Key": "SECRET-4",
  "Proxy-Authorization": "Bearer SECRET-5",
  client_secret: "SECRET-6",
};

function requestsOf(events: readonly LedgerEvent[]): JsonObject[] {
  return events
    .filter((event) => event.type === "model.requested")
    .map((event) => event.payload as JsonObject);
}

/** The model settings the first model.requested of session "s" recorded. */
function firstSettings(events: readonly LedgerEvent[]): JsonValue | undefined {
  const [requested] = requestsOf(events);
  if (!requested) throw new Error("no model.requested");
  return (requested.request as JsonObject).modelSettings;
}

describe("credentials in model settings", () => {
  test("every credential key, in any case and at any depth of providerData, is recorded as [redacted]; other keys as given", async () => {
    const { path, store } = await sqliteLedger();
    const agent = new Agent({
      name: "main",
      instructions: "main",
      modelSettings: {
        providerData: {
          extra_headers: { ...SECRETS, "X-Api-Key": "CONTROL-1", "X-Trace-Id": "trace-1" },
          gateway: { auth: { client_secret: "SECRET-7" }, region: "eu" },
          prompt_cache_key: "conversation-1",
        },
      },
    });
    const model = new ScriptedModel([() => [message("hi")]]);
    await runWithLedger(agent, "hello", runOptions(store, model));
    const settings = firstSettings(await readWholeSession(store, "s"));
    expect(settings).toEqual({
      providerData: {
        extra_headers: {
          "X-API-Key": "[redacted]",
          "x-goog-api-key": "[redacted]",
          apikey: "[redacted]",
          "Ocp-Apim-Subscription-Key": "[redacted]",
          "Proxy-Authorization": "[redacted]",
          client_secret: "[redacted]",
          "X-Api-Key": "[redacted]",
          "X-Trace-Id": "trace-1",
        },
        gateway: { auth: "[redacted]", region: "eu" },
        prompt_cache_key: "conversation-1",
      },
    });
    // Nowhere in the SQLite file either (checkpoints, blobs): the provider still got them.
    store.close();
    const bytes = readFileSync(path, "latin1");
    for (const secret of [...Object.values(SECRETS), "SECRET-7", "CONTROL-1"])
      expect(bytes).not.toContain(secret);
    expect(JSON.stringify(model.requests[0]?.modelSettings)).toContain("sk-SECRET-1");
  });

  test("a request with no credential is recorded and hashed as before the rule (old ledgers still resume)", async () => {
    const { store } = await sqliteLedger();
    // Names that look like credentials outside the settings (a tool parameter, the input) and
    // ordinary settings: the rule must change none of them. `X-Api-Key` and a `password`
    // parameter are what DEFAULT_CREDENTIAL_PATHS removed before: removed as before.
    const search = tool({
      name: "search",
      description: "search",
      parameters: z.object({ page_token: z.string(), password: z.string(), oauth: z.string() }),
      execute: async () => "found",
    });
    const agent = new Agent({
      name: "main",
      instructions: "main",
      tools: [search],
      modelSettings: {
        temperature: 0.2,
        maxTokens: 100,
        providerData: {
          extra_headers: { "X-Trace-Id": "trace-1", "X-Api-Key": "CONTROL-1" },
          metadata: { team: "sales" },
          prompt_cache_key: "conversation-1",
        },
      },
    });
    const model = new ScriptedModel([
      () => [functionCall("search", { page_token: "p", password: "x", oauth: "o" }, "call_1")],
      () => [message("done")],
    ]);
    await runWithLedger(agent, "my apikey is not a key: the token", runOptions(store, model));
    const requested = requestsOf(await readWholeSession(store, "s"));
    expect(requested).toHaveLength(2);
    requested.forEach((payload, index) => {
      const sent = model.requests[index];
      if (!sent) throw new Error(`no request ${index}`);
      // What the adapter recorded before the rule: the request with DEFAULT_CREDENTIAL_PATHS.
      const before = (
        applyRedaction({ request: modelRequestToJson(sent) }, DEFAULT_CREDENTIAL_PATHS, {
          type: "model.requested",
        }) as JsonObject
      ).request as JsonObject;
      expect(payload.request).toEqual(before);
      expect(payload.requestHash).toBe(hashJson(before));
    });
  });
});

// A marker that only the charge's receipt holds: not hex, so no hash or id holds it by chance.
const MARKER = "receipt-for-swordfish";
const hideMarker = (payload: unknown) =>
  JSON.parse(JSON.stringify(payload).replaceAll(MARKER, "[receipt]"));

/** "main" hands off to "closer", who charges (asking a person first) and answers. */
function handoffWithCharge(options: { needsApproval: boolean }) {
  const charge = tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    needsApproval: options.needsApproval,
    execute: async ({ amount }) => `charged ${amount}: ${MARKER}`,
  });
  const closer = new Agent({ name: "closer", instructions: "close", tools: [charge] });
  const main = new Agent({ name: "main", instructions: "sell", handoffs: [closer] });
  const model = new ScriptedModel([
    () => [functionCall("transfer_to_closer", {}, "call_handoff")],
    () => [functionCall("charge", { amount: 7 }, "call_charge")],
    (request) => [message(JSON.stringify(request.input).includes(MARKER) ? "paid" : "not paid")],
  ]);
  return { main, model };
}

describe("the redact option", () => {
  test("runWithLedger: applied to every payload, on the handoff target's child run too", async () => {
    const { store } = await sqliteLedger();
    const { main, model } = handoffWithCharge({ needsApproval: false });
    const result = await runWithLedger(main, "sell", {
      ...runOptions(store, model),
      redact: hideMarker,
    });
    expect(result.status).toBe("completed");
    // The model and the run saw the receipt; the ledger did not.
    expect(result.finalOutput).toBe("paid");
    const events = await readWholeSession(store, "s");
    const runs = new Set(events.map((event) => event.runId));
    expect(runs.size).toBe(2);
    const completed = events.find((event) => event.type === "tool.completed");
    expect(completed?.runId).not.toBe("root");
    expect(completed?.payload).toMatchObject({ result: "charged 7: [receipt]" });
    expect(JSON.stringify(events)).not.toContain(MARKER);
  });

  test("runWithLedger: applied where the run closes the runs it handed off through (a -> b -> c)", async () => {
    const { store } = await sqliteLedger();
    const c = new Agent({ name: "c", instructions: "c" });
    const b = new Agent({ name: "b", instructions: "b", handoffs: [c] });
    const a = new Agent({ name: "a", instructions: "a", handoffs: [b] });
    const model = new ScriptedModel([
      () => [functionCall("transfer_to_b", {}, "h1")],
      () => [functionCall("transfer_to_c", {}, "h2")],
      () => [message(`your ${MARKER}`)],
    ]);
    const result = await runWithLedger(a, "go", {
      ...runOptions(store, model),
      redact: hideMarker,
    });
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe(`your ${MARKER}`);
    const events = await readWholeSession(store, "s");
    expect(new Set(events.map((event) => event.runId)).size).toBe(3);
    // b's run is closed by the run's end with the final output: redacted there too.
    expect(events.filter((event) => event.type === "run.completed")).toHaveLength(3);
    expect(JSON.stringify(events)).not.toContain(MARKER);
  });

  test("resumeRun: applied by the recorder of the run it goes on in (the handoff target's)", async () => {
    const { store } = await sqliteLedger();
    const { main, model } = handoffWithCharge({ needsApproval: true });
    const paused = await runWithLedger(main, "sell", runOptions(store, model));
    expect(paused.status).toBe("interrupted");
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const resumed = await resumeRun(main, {
      ...runOptions(store, model),
      state,
      redact: hideMarker,
    });
    expect(resumed.status).toBe("completed");
    expect(resumed.finalOutput).toBe("paid");
    const events = await readWholeSession(store, "s");
    const completed = events.find((event) => event.type === "tool.completed");
    expect(completed?.runId).not.toBe("root");
    expect(JSON.stringify(events)).not.toContain(MARKER);
  });

  test("false records the model requests as built, credentials and all", async () => {
    const { store } = await sqliteLedger();
    const agent = new Agent({
      name: "main",
      modelSettings: {
        providerData: { extra_headers: { "X-Api-Key": "sk-SECRET-1", apikey: "SECRET-3" } },
      },
    });
    const model = new ScriptedModel([() => [message("hi")]]);
    await runWithLedger(agent, "hello", { ...runOptions(store, model), redact: false });
    expect(firstSettings(await readWholeSession(store, "s"))).toEqual({
      providerData: { extra_headers: { "X-Api-Key": "sk-SECRET-1", apikey: "SECRET-3" } },
    });
  });

  test("a malformed redaction is refused before anything is recorded or called", async () => {
    const { store } = await sqliteLedger();
    const model = new ScriptedModel([() => [message("hi")]]);
    const agent = new Agent({ name: "main" });
    for (const [redact, path] of [
      ["**.apiKey", "$.redact"],
      [["request..apiKey"], "$.redact[0]"],
    ] as const) {
      const refused = runWithLedger(agent, "hello", {
        ...runOptions(store, model),
        redact: redact as never,
      });
      await expect(refused).rejects.toMatchObject({ code: "invalid-argument", path });
      await expect(
        resumeRun(agent, { ...runOptions(store, model), redact: redact as never }),
      ).rejects.toMatchObject({ code: "invalid-argument", path });
    }
    expect(await readWholeSession(store, "s")).toEqual([]);
    expect(model.calls).toBe(0);
  });
});
