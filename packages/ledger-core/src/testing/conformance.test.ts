import { describe, expect, it } from "vitest";
import { ConflictError, LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import {
  type ConformanceRunner,
  eventStoreConformanceCases,
  runEventStoreConformance,
} from "./conformance.js";

/** Delegates everything to a memory store; each mutant overrides one method with a known bug. */
class Delegate implements EventStore {
  readonly inner = new MemoryEventStore();
  init: EventStore["init"] = () => this.inner.init();
  append: EventStore["append"] = (request) => this.inner.append(request);
  readRun: EventStore["readRun"] = (request) => this.inner.readRun(request);
  readSession: EventStore["readSession"] = (request) => this.inner.readSession(request);
  listRuns: EventStore["listRuns"] = (sessionId) => this.inner.listRuns(sessionId);
  listSessions: EventStore["listSessions"] = (request) => this.inner.listSessions(request);
  runHead: EventStore["runHead"] = (request) => this.inner.runHead(request);
  fork: EventStore["fork"] = (request) => this.inner.fork(request);
  putBlob: EventStore["putBlob"] = (content, options) => this.inner.putBlob(content, options);
  getBlob: EventStore["getBlob"] = (ref) => this.inner.getBlob(ref);
  deleteSession: EventStore["deleteSession"] = (sessionId, options) =>
    this.inner.deleteSession(sessionId, options);
  collectBlobs: EventStore["collectBlobs"] = (options) => this.inner.collectBlobs(options);
  describe: EventStore["describe"] = () => this.inner.describe();
  close: EventStore["close"] = () => this.inner.close();
}

const mutants: Record<string, [() => EventStore, string]> = {
  "goes on answering after close()": [
    () => {
      const store = new Delegate();
      store.close = async () => {};
      return store;
    },
    "close() lets an append under way finish, runs once, and every call after it is refused as store-unavailable with nothing written",
  ],
  "reports success for a lost race (Eventuous #553)": [
    () => {
      const store = new Delegate();
      store.append = async (request) => {
        try {
          return await store.inner.append(request);
        } catch (error) {
          if (LedgerError.isInstance(error, "conflict")) return { events: [], deduplicated: false };
          throw error;
        }
      };
      return store;
    },
    "concurrent appends at one position: exactly one wins, the others conflict",
  ],
  "returns a page out of order (emmett #239)": [
    () => {
      const store = new Delegate();
      store.readSession = async (request) => {
        const page = await store.inner.readSession(request);
        return { ...page, events: page.events.reverse() };
      };
      return store;
    },
    "readSession returns commit order across runs, paged by cursor",
  ],
  "checks the position before the closed run": [
    () => {
      const store = new Delegate();
      store.append = async (request) => {
        const head = await store.inner.runHead(request);
        if (head.status !== "running" && head.length !== request.expectedSeq)
          throw new ConflictError({ ...request, actualSeq: head.length });
        return store.inner.append(request);
      };
      return store;
    },
    "every append to a closed run is run-closed, whatever its expectedSeq",
  ],
  "reads the caller's objects after an await": [
    () => {
      const store = new Delegate();
      store.append = async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return store.inner.append(request);
      };
      return store;
    },
    "mutating the input or returned events never changes what is stored",
  ],
  "loses the error path": [
    () => {
      const store = new Delegate();
      store.append = async (request) => {
        try {
          return await store.inner.append(request);
        } catch (error) {
          (error as { path?: string }).path = undefined;
          throw error;
        }
      };
      return store;
    },
    "non-JSON payload and metadata values are non-serializable with their exact path",
  ],
  "reports a deletion it did not do": [
    () => {
      const store = new Delegate();
      store.deleteSession = async (sessionId) => ({
        sessionId,
        deletedEvents: 6,
        deletedRuns: 2,
        deletedBlobs: 2,
        keptBlobs: 1,
      });
      return store;
    },
    "deleteSession removes a closed session's events, runs and unshared blobs, keeps shared ones",
  ],
  "collects blobs inside the grace period": [
    () => {
      const store = new Delegate();
      store.collectBlobs = (options) =>
        store.inner.collectBlobs(options === undefined ? options : { blobGraceMs: 0 });
      return store;
    },
    "collectBlobs deletes the blobs no existing session references once past the grace, and keeps the rest",
  ],
  "deletes a session with an open run": [
    () => {
      const store = new Delegate();
      store.deleteSession = async (sessionId) => {
        for (const run of await store.inner.listRuns(sessionId)) {
          if (run.status !== "running") continue;
          await store.inner.append({
            sessionId,
            runId: run.runId,
            expectedSeq: run.length,
            events: [{ type: "run.cancelled", payload: {} }],
          });
        }
        return store.inner.deleteSession(sessionId, { blobGraceMs: 0 });
      };
      return store;
    },
    "deleteSession refuses an open run (invalid-argument naming every open run, in the same order on every store) and unknown sessions",
  ],
  "deletes what arrived after it checked the runs (as the Redis store did)": [
    () => {
      const store = new Delegate();
      store.deleteSession = async (sessionId, options) => {
        const runs = await store.inner.listRuns(sessionId);
        if (runs.some((run) => run.status === "running"))
          return store.inner.deleteSession(sessionId, options);
        await new Promise((resolve) => setTimeout(resolve, 2));
        // Whatever came meanwhile is closed and deleted with the rest, unseen.
        for (const run of await store.inner.listRuns(sessionId)) {
          if (run.status === "running")
            await store.inner.append({
              sessionId,
              runId: run.runId,
              expectedSeq: run.length,
              events: [{ type: "run.cancelled", payload: {} }],
            });
        }
        return store.inner.deleteSession(sessionId, options);
      };
      return store;
    },
    "deleteSession racing an append that starts a new run in the session never loses the append",
  ],
  "pages a session from one cursor too early": [
    () => {
      const store = new Delegate();
      store.readSession = async (request) =>
        store.inner.readSession(
          request.after ? { ...request, after: Math.max(0, request.after - 1) } : request,
        );
      return store;
    },
    "a random sequence of appends, retries, forks, deletions and reads is answered as the memory store answers it",
  ],
  "answers an unknown blob with nothing": [
    () => {
      const store = new Delegate();
      store.getBlob = async (ref) => store.inner.getBlob(ref).catch(() => new Uint8Array());
      return store;
    },
    "getBlob of an unknown ref is not-found; a malformed ref is invalid-event",
  ],
};

describe("the conformance suite", () => {
  it("has uniquely named cases in every group", () => {
    const cases = eventStoreConformanceCases(() => new MemoryEventStore());
    expect(cases.length).toBeGreaterThanOrEqual(30);
    expect(new Set(cases.map((item) => item.name)).size).toBe(cases.length);
    expect(new Set(cases.map((item) => item.group))).toEqual(
      new Set([
        "append",
        "retry",
        "closed run",
        "concurrency",
        "read",
        "fork",
        "bad input",
        "blobs",
        "retention",
        "against the reference",
        "close",
      ]),
    );
  });

  for (const [bug, [makeStore, caseName]] of Object.entries(mutants)) {
    it(`fails a store that ${bug}`, async () => {
      const item = eventStoreConformanceCases(makeStore).find(
        (candidate) => candidate.name === caseName,
      );
      expect(item, caseName).toBeDefined();
      await expect(item?.run()).rejects.toThrow();
    });
  }

  it("registers through describe/it, skips named cases with it.skip and rejects unknown names", () => {
    const registered: string[] = [];
    const skipped: string[] = [];
    const fakeIt = Object.assign((name: string) => void registered.push(name), {
      skip: (name: string) => void skipped.push(name),
    });
    const runner: ConformanceRunner = { describe: (_name, body) => body(), it: fakeIt };
    const skip = ["a 1 MiB string payload round trips"];
    runEventStoreConformance(() => new MemoryEventStore(), runner, { skip });
    expect(skipped).toEqual(skip);
    expect(registered).not.toContain(skip[0]);
    expect(registered.length + skipped.length).toBe(
      eventStoreConformanceCases(() => new MemoryEventStore()).length,
    );
    expect(() =>
      runEventStoreConformance(() => new MemoryEventStore(), runner, { skip: ["no such case"] }),
    ).toThrow(/no conformance case is named/);
  });

  it("registers with the global describe/it when given no runner (DESIGN §4's one-argument call)", () => {
    const registered: string[] = [];
    const scope = globalThis as { describe?: unknown; it?: unknown };
    const saved = { describe: scope.describe, it: scope.it };
    scope.describe = (_name: string, body: () => void) => body();
    scope.it = (name: string) => void registered.push(name);
    try {
      runEventStoreConformance(() => new MemoryEventStore());
    } finally {
      scope.describe = saved.describe;
      scope.it = saved.it;
    }
    expect(registered.length).toBe(eventStoreConformanceCases(() => new MemoryEventStore()).length);
  });

  it("says how to pass a runner where there is no global one, and names a bad argument", () => {
    const scope = globalThis as { describe?: unknown; it?: unknown };
    expect(scope.describe).toBeUndefined();
    const refusal = (call: () => void) => {
      try {
        call();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const noRunner = refusal(() => runEventStoreConformance(() => new MemoryEventStore()));
    expect(LedgerError.isInstance(noRunner, "invalid-argument")).toBe(true);
    expect(noRunner).toMatchObject({ path: "$.runner" });
    expect(String((noRunner as Error).message)).toMatch(/\{ describe, it \}/);
    const notAFunction = refusal(() =>
      runEventStoreConformance("memory:" as never, { describe, it } as ConformanceRunner),
    );
    expect(notAFunction).toMatchObject({ code: "invalid-argument", path: "$.makeStore" });
    const unknownSkip = refusal(() =>
      runEventStoreConformance(
        () => new MemoryEventStore(),
        { describe, it } as ConformanceRunner,
        {
          skip: ["a 1 MiB string payload round trips", "no such case"],
        },
      ),
    );
    expect(unknownSkip).toMatchObject({ code: "invalid-argument", path: "$.options.skip[1]" });
  });
});
