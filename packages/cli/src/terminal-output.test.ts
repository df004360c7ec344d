import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin, runPasted } from "./session-fixture.test.data.js";

// ESC starts ANSI/OSC sequences (OSC 52 writes the clipboard, OSC 0 the window title),
// U+009B is a one-byte CSI, U+202E reverses the text after it.
const HOSTILE = "done\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J\u009b31m\u202Eevil\r\nFAKE LINE";
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we look for
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const directory = scratchDirectory("agent-ledger-terminal-", { beforeAll, afterAll });
const storeUrl = `sqlite:${join(directory, "ledger.db")}`;
const sessionId = "terminal-session";

/** Starts a run in session `id` of the test's store and records `more` on it, then closes. */
async function recordIn(
  id: string,
  more: (recorder: SessionRecorder) => Promise<unknown> = async () => {},
  runId?: string,
): Promise<void> {
  const store = await openStore(storeUrl);
  try {
    const actor = { type: "agent", id: "a" } as const;
    const recorder = new SessionRecorder({
      store,
      sessionId: id,
      actor,
      ...(runId === undefined ? {} : { runId }),
    });
    await recorder.startRun();
    await more(recorder);
  } finally {
    await store.close();
  }
}

beforeAll(() =>
  recordIn(sessionId, async (recorder) => {
    await recorder.recordInput(HOSTILE);
    const call = await recorder.beforeToolCall({
      toolCallId: "call-1",
      name: "fetch_page",
      args: { url: HOSTILE },
      effect: { kind: "read", idempotent: true },
    });
    await recorder.toolFailed(call, new Error(HOSTILE));
    await recorder.beforeToolCall({
      toolCallId: "call-2",
      name: "send_mail",
      args: { body: HOSTILE },
      effect: { kind: "write", idempotent: false },
    });
  }),
);

describe("terminal output of text from the ledger", () => {
  it("verify shows ids escaped: an id may hold a bidi override", async () => {
    // Ids refuse C0 and C1 controls, not U+202E, which reverses the text after it.
    const bidiSession = "pay\u202Erun";
    await recordIn(bidiSession, undefined, "r\u2066un");
    for (const json of [[], ["--json"]]) {
      const result = await runBin(["--store", storeUrl, "verify", bidiSession, ...json]);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toMatch(RAW_CONTROL);
      expect(result.stdout).toContain("pay\\u202erun");
    }
  });

  it("a resolve command naming an id with a bidi override shows escapes and works pasted into bash", async () => {
    const bidiSession = "refund\u202Enur";
    await recordIn(bidiSession, (recorder) =>
      recorder.beforeToolCall({ toolCallId: "c1", name: "refund", args: {} }),
    );
    const inspected = await runBin(["--store", storeUrl, "inspect", bidiSession]);
    expect(inspected.stdout).not.toMatch(RAW_CONTROL);
    const command = /agent-ledger resolve .*/.exec(inspected.stdout)?.[0] as string;
    expect(command).toContain("$'refund\\u202enur'");
    // With the reason filled in: the placeholder itself is refused.
    const pasted = await runPasted(command.replace('"reason"', '"refunded by hand"'));
    expect(pasted.code).toBe(0);
    const after = JSON.parse(
      (await runBin(["--store", storeUrl, "inspect", bidiSession, "--json"])).stdout,
    );
    expect(after.unresolved).toEqual([]);
    expect(after.runs[0].steps[0].attempts[0].status).toBe("abandoned");
  });

  it("inspect and tail show control characters as escapes, never raw", async () => {
    for (const command of [["inspect"], ["tail"]]) {
      const result = await runBin(["--store", storeUrl, ...command, sessionId]);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toMatch(RAW_CONTROL);
      expect(result.stdout).not.toMatch(/^FAKE LINE/m);
      expect(result.stdout).toContain("\\u001b]52;c;");
    }
  });

  it("--json keeps every value exact while no control character reaches the terminal", async () => {
    for (const command of [
      ["inspect", "--json"],
      ["tail", "--json"],
    ]) {
      const result = await runBin(["--store", storeUrl, ...command, sessionId]);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toMatch(RAW_CONTROL);
      const text = result.stdout.trim();
      const values =
        command[0] === "tail"
          ? text.split("\n").map((line) => JSON.parse(line))
          : [JSON.parse(text)];
      expect(JSON.stringify(values)).toContain(JSON.stringify(HOSTILE).slice(1, -1));
    }
  });
});
