import { type EventStore, MemoryEventStore, StoreUnavailableError } from "@agent-ledger/core";
import { interleavedStore } from "@agent-ledger/core/testing";
import { describe, expect, it } from "vitest";
import { textOutput as text } from "../text-output.test.data.js";
import type { CommandContext } from "./context.js";
import { tailCommand } from "./tail.js";

const actor = { type: "agent", id: "a" } as const;

/** Appends a note to run r of session s at `seq`. */
async function note(store: EventStore, seq: number): Promise<void> {
  await store.append({
    sessionId: "s",
    runId: "r",
    expectedSeq: seq,
    events: [{ type: "x.note", actor, payload: { seq } }],
  });
}

/** `tail s --follow --interval 10` on `store` (shown as `storeUrl`) until `signal` aborts. */
function following(store: EventStore, signal: AbortSignal, storeUrl: string) {
  const stdout = text();
  const stderr = text();
  const context: CommandContext = {
    args: ["s", "--follow", "--interval", "10"],
    io: { stdout, stderr, env: {}, signal },
    storeUrl,
    storeSource: "flag",
    openStore: async () => store,
  };
  return { context, stdout, stderr };
}

describe("tail --follow while the store's server is away", () => {
  it("keeps following through an outage, says so once, and prints each event once in order", async () => {
    const ledger = new MemoryEventStore();
    await ledger.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", actor, payload: {} }],
    });
    const stop = new AbortController();
    let reads = 0;
    // The 3rd to 5th reads fail as a restarted or failed-over server's do; an agent appends
    // meanwhile, and the read after the outage sees its events.
    const store = interleavedStore(ledger, async (method) => {
      if (method !== "readSession") return;
      reads++;
      if (reads === 3) await note(ledger, 1);
      if (reads >= 3 && reads <= 5)
        throw new StoreUnavailableError(
          "postgres readSession failed: connect ECONNREFUSED 127.0.0.1:5432",
        );
      if (reads === 6) await note(ledger, 2);
      if (reads === 8) stop.abort();
    });
    const { context, stdout, stderr } = following(store, stop.signal, "postgres://app@db/ledger");
    // Before, the first failed poll ended tail --follow with store-unavailable (exit 4).
    expect(await tailCommand(context)).toBe(130); // stopped (Ctrl-C)
    const seqs = stdout.text
      .trim()
      .split("\n")
      .map((line) => /r:(\d+)/.exec(line)?.[1]);
    expect(seqs).toEqual(["0", "1", "2"]);
    expect(stderr.text.match(/ECONNREFUSED/g)).toHaveLength(1);
    expect(stderr.text).toContain("answers again");
  });

  it("without --follow, an outage still ends tail with store-unavailable", async () => {
    const ledger = new MemoryEventStore();
    await note(ledger, 0);
    const store = interleavedStore(ledger, async (method) => {
      if (method === "readSession")
        throw new StoreUnavailableError("redis readSession failed: no connection");
    });
    const context: CommandContext = {
      args: ["s"],
      io: { stdout: text(), stderr: text(), env: {} },
      storeUrl: "redis://cache/0",
      storeSource: "flag",
      openStore: async () => store,
    };
    await expect(tailCommand(context)).rejects.toMatchObject({ code: "store-unavailable" });
  });
});

describe("tail --follow on a session with no events yet", () => {
  it("waits for its first events, says so once, and prints them as they come", async () => {
    const ledger = new MemoryEventStore();
    const stop = new AbortController();
    let reads = 0;
    // The agent starts after tail: its first event lands after three empty reads.
    const store = interleavedStore(ledger, async (method) => {
      if (method !== "readSession") return;
      reads++;
      if (reads === 4) await note(ledger, 0);
      if (reads === 6) await note(ledger, 1);
      if (reads === 8) stop.abort();
    });
    const { context, stdout, stderr } = following(store, stop.signal, "sqlite:./agent-ledger.db");
    // Before, it exited 3 (unknown session) where serve --session waits.
    expect(await tailCommand(context)).toBe(130); // stopped (Ctrl-C)
    expect(stdout.text.match(/r:\d+/g)).toEqual(["r:0", "r:1"]);
    expect(stderr.text.match(/waiting for its first events/g)).toHaveLength(1);
  });

  it("without --follow, an unknown session is still not-found", async () => {
    const context: CommandContext = {
      args: ["s"],
      io: { stdout: text(), stderr: text(), env: {} },
      storeUrl: "sqlite:./agent-ledger.db",
      storeSource: "flag",
      openStore: async () => new MemoryEventStore(),
    };
    await expect(tailCommand(context)).rejects.toMatchObject({ code: "not-found" });
  });
});
