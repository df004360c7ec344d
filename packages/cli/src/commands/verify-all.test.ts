import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendEndedRun,
  runCliInterrupted,
  tamperWithEvent,
} from "../interrupt-fixture.test.data.js";
import { runBin } from "../session-fixture.test.data.js";

const folder = scratchDirectory("agent-ledger-verify-all-", { beforeAll, afterAll });
/** An id with a bidi override: printed escaped, never obeyed. */
const HOSTILE = "c\u202eevil";

/** A ledger of sessions a (runs r1, r2), b (r1, r2) and HOSTILE (r1); `tamper`: b's r2 edited. */
async function ledger(name: string, options: { tamper: boolean }): Promise<string> {
  const path = join(folder, name);
  const store = await openStore(`sqlite:${path}`);
  for (const [sessionId, runIds] of [
    ["a", ["r1", "r2"]],
    ["b", ["r1", "r2"]],
    [HOSTILE, ["r1"]],
  ] as const)
    for (const runId of runIds) await appendEndedRun(store, sessionId, runId);
  await store.close();
  if (options.tamper) tamperWithEvent(path, { sessionId: "b", runId: "r2", seq: 0 });
  return `sqlite:${path}`;
}

describe("agent-ledger verify --all", () => {
  it("checks every session: a line each, the failing runs under their session, a summary; exit 1", async () => {
    const storeUrl = await ledger("tampered.db", { tamper: true });
    const text = await runBin(["--store", storeUrl, "verify", "--all"]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toBe(
      [
        "ok      session a  2 run(s)",
        "FAILED  session b",
        "  TAMPERED  run r2  bad seq 0: content does not match its hash",
        "ok      session c\\u202eevil  1 run(s)",
        "3 session(s), 5 run(s): 1 run(s) in 1 session(s) fail verification",
        "",
      ].join("\n"),
    );

    const json = await runBin(["--store", storeUrl, "verify", "--all", "--json"]);
    expect(json.code, json.stderr).toBe(1);
    expect(json.stdout).not.toContain("\u202e");
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      sessions: [
        { sessionId: "a", ok: true, runs: 2, failing: [] },
        {
          sessionId: "b",
          ok: false,
          runs: 2,
          failing: [
            {
              runId: "r2",
              ok: false,
              length: 0,
              badSeq: 0,
              reason: "content does not match its hash",
            },
          ],
        },
        { sessionId: HOSTILE, ok: true, runs: 1, failing: [] },
      ],
      // SQLite's own check of the file: sound (a row was edited, not its pages).
      file: { ok: true, problems: [] },
    });
  });

  it("exits 0 when all is intact, and on a store with no sessions", async () => {
    const intact = await runBin([
      "--store",
      await ledger("intact.db", { tamper: false }),
      "verify",
      "--all",
    ]);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout.trimEnd().split("\n").at(-1)).toBe("3 session(s), 5 run(s): all intact");

    const empty = `sqlite:${join(folder, "empty.db")}`;
    await (await openStore(empty)).close();
    const text = await runBin(["--store", empty, "verify", "--all"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("0 session(s), 0 run(s): all intact\n");
    const json = await runBin(["--store", empty, "verify", "--all", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: true,
      sessions: [],
      file: { ok: true, problems: [] },
    });
  });

  it("is bad usage with a session, as verify is without one", async () => {
    const storeUrl = await ledger("usage.db", { tamper: false });
    const both = await runBin(["--store", storeUrl, "verify", "--all", "a"]);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe("");
    expect(both.stderr).toContain("verify --all takes no <session>");
    const neither = await runBin(["--store", storeUrl, "verify", "--json"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain(
      "usage: agent-ledger verify <session> [--json], or verify --all",
    );
  });

  it("stopped part way (Ctrl-C): says how far it got and what fails so far, and prints no verdict", async () => {
    const storeUrl = await ledger("stopped.db", { tamper: true });
    // Ctrl-C once session b's failing run is out: the next session is not begun.
    expect(
      await runCliInterrupted(["--store", storeUrl, "verify", "--all"], "TAMPERED  run r2"),
    ).toEqual({
      code: 130,
      stdout:
        "ok      session a  2 run(s)\nFAILED  session b\n  TAMPERED  run r2  bad seq 0: content does not match its hash\n",
      stderr:
        "agent-ledger: verify interrupted after checking 2 session(s) (4 run(s)): 1 run(s) in 1 session(s) fail verification (above); the other sessions were not checked\n",
    });
    // --json prints its document only whole: stopped, nothing.
    expect(await runCliInterrupted(["--store", storeUrl, "verify", "--all", "--json"])).toEqual({
      code: 130,
      stdout: "",
      stderr:
        "agent-ledger: verify interrupted after checking 0 session(s) (0 run(s)): the ledger's result is not known\n",
    });
  });
});
