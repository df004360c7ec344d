import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresBackend } from "./postgres-backend.js";
import { PostgresEventStore } from "./postgres-store.js";
import {
  type LocalPgbouncer,
  localPgbouncerUnavailable,
  startLocalPgbouncer,
} from "./testing/local-pgbouncer.js";

// Many deployments put PgBouncer in transaction mode between their services and PostgreSQL. It
// hands each transaction to any of its server connections, while node-postgres remembers per
// client which named statements it prepared: a named statement may reach a server connection
// that does not know it (or already has it). Debian's PgBouncer 1.18 does not track them.

const available =
  (await serverAvailable("postgres")) && (await localPgbouncerUnavailable()) === undefined;
const schema = freshPlaces(afterAll).schema("pooler");
let bouncer: LocalPgbouncer | undefined;

beforeAll(async () => {
  // Two server connections for many clients: a client's statements land on either.
  if (available) bouncer = await startLocalPgbouncer(SERVER_URLS.postgres, 2);
}, 30_000);

afterAll(async () => {
  await bouncer?.stop();
});

describe.skipIf(!available)("PostgresEventStore through PgBouncer in transaction mode", () => {
  it("records every call in its one statement: after a refused statement name, none goes to the transactional program", async () => {
    // Watched before the store is made: a store binds the backend's methods when constructed.
    const programs = vi.spyOn(PostgresBackend.prototype, "write");
    const store = new PostgresEventStore({
      connectionString: (bouncer as LocalPgbouncer).url,
      schema,
    });
    try {
      await store.init();
      const actor = { type: "agent", id: "pooled" } as const;
      // Six recorders of their own sessions, and four runs of one more session (the group
      // commit's statement), all at once.
      const shared = uuidv7();
      const recorders = [
        ...Array.from(
          { length: 6 },
          () => new SessionRecorder({ store, sessionId: uuidv7(), actor }),
        ),
        ...Array.from(
          { length: 4 },
          () => new SessionRecorder({ store, sessionId: shared, actor }),
        ),
      ];
      const runs = await Promise.all(recorders.map((recorder) => recorder.startRun()));
      // Each run started through the program (a new run has no cached head), and nothing else.
      expect(programs).toHaveBeenCalledTimes(recorders.length);
      await Promise.all(
        recorders.map(async (recorder, index) => {
          for (let call = 0; call < 30; call++)
            await recorder.beforeModelCall({
              request: { model: "m", messages: [{ role: "user", content: `${index}: ${call}` }] },
            });
        }),
      );
      expect(programs).toHaveBeenCalledTimes(recorders.length);
      for (const [index, recorder] of recorders.entries()) {
        const runId = runs[index]?.runId as string;
        const events = (await store.readRun({ sessionId: recorder.sessionId, runId })).events;
        expect(events.map((event) => event.seq)).toEqual(
          Array.from({ length: 31 }, (_, seq) => seq),
        );
        expect(await verifyRun(store, { sessionId: recorder.sessionId, runId })).toMatchObject({
          ok: true,
        });
      }
      const cursors = (await store.readSession({ sessionId: shared })).events.map(
        (event) => event.commitCursor,
      );
      expect(cursors).toEqual(Array.from({ length: 4 * 31 }, (_, index) => index + 1));
    } finally {
      programs.mockRestore();
      await store.close();
    }
  }, 60_000);
});
