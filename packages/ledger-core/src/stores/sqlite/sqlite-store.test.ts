import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LedgerError } from "../../events/errors.js";
import type { NewEvent } from "../../events/types.js";
import { blobRef, prepareBlob } from "../../store/blob.js";
import { openStore } from "../../store/open-store.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { SqliteBackend } from "./sqlite-backend.js";
import { SqliteEventStore } from "./sqlite-store.js";
import { databaseAtMigration } from "./testing/older-database.js";

const folder = scratchDirectory("ledger-sqlite-store-", { beforeAll, afterAll });
let count = 0;
const freshPath = () => join(folder, `store-${++count}.db`);

describe("SqliteEventStore", () => {
  it("init({ create: false }) makes no file where there is none, and opens a ledger that is there", async () => {
    const path = freshPath();
    await checkInitWithoutCreate({
      open: () => new SqliteEventStore({ path }),
      leftovers: async () => (existsSync(path) ? 1 : 0),
    });
    // openStore too: the URL form reading tools pass.
    const missing = freshPath();
    const failure = await openStore(`sqlite:${missing}`, { create: false }).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(failure, "not-found")).toBe(true);
    expect(existsSync(missing)).toBe(false);
  });

  it("init({ create: false }) leaves a SQLite file that holds no ledger exactly as it was (no table, no WAL)", async () => {
    const path = freshPath();
    const other = new Database(path);
    other.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('theirs')");
    other.close();
    const before = readFileSync(path);
    const store = new SqliteEventStore({ path });
    const failure = await store.init({ create: false }).catch((error: unknown) => error);
    await store.close();
    expect(LedgerError.isInstance(failure, "not-found")).toBe(true);
    expect((failure as Error).message).toMatch(/has no agent-ledger tables/);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("a store closed before its first use refuses instead of opening its file", async () => {
    const path = freshPath();
    const store = new SqliteEventStore({ path });
    await store.close();
    const failure = await store.init().catch((error: unknown) => error);
    expect(LedgerError.isInstance(failure, "store-unavailable")).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it("a file that is not SQLite: not-found for a reader, invalid-argument at $.url for a writer (no retry mends it), and left as it was", async () => {
    const path = freshPath();
    writeFileSync(path, "notes, not a database\n");
    const reader = await openStore(`sqlite:${path}`, { create: false }).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(reader, "not-found")).toBe(true);
    expect((reader as Error).message).toBe(
      `no ledger at ${path}: the file is not a SQLite database`,
    );
    const writer = await openStore(`sqlite:${path}`).catch((error: unknown) => error);
    expect(LedgerError.isInstance(writer, "invalid-argument"), String(writer)).toBe(true);
    expect((writer as LedgerError).path).toBe("$.url");
    expect((writer as LedgerError).message).toContain(`${path} is not a SQLite database file`);
    expect((writer as LedgerError).message).toContain("name the ledger's file");
    expect(((writer as LedgerError).cause as { code?: string }).code).toBe("SQLITE_NOTADB");
    const direct = await new SqliteEventStore({ path }).init().catch((error: unknown) => error);
    expect(direct).toMatchObject({ code: "invalid-argument", path: "$.path" });
    expect(readFileSync(path, "utf8")).toBe("notes, not a database\n");
  });

  it("two handles on one file (two processes) answer random sequences as the reference does, and racing writers through both lose nothing", async () => {
    // Each caches run heads and cursors for its connection: the other's commits must show.
    const path = freshPath();
    const handles = [new SqliteEventStore({ path }), new SqliteEventStore({ path })];
    await checkSharedHandles(handles);
  });

  it("an append that names blobs takes the one-transaction path at the head, and indexes them", async () => {
    const store = new SqliteEventStore({ path: freshPath() });
    await store.init();
    const sessionId = "refs";
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    // Put with no session: only the append's index keeps these blobs from collectBlobs.
    const refs = await store.putBlobs(["first", "second"]);
    const write = vi.spyOn(SqliteBackend.prototype, "write");
    try {
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 1,
        events: [{ type: "x.named", evidenceRefs: refs }],
      });
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 2,
      events: [{ type: "run.completed" }],
    });
    expect(await store.deleteSession(sessionId, { blobGraceMs: 0 })).toMatchObject({
      deletedBlobs: 2,
    });
    await store.close();
  });

  it("an append that carries blobs stores them in its one transaction at the head", async () => {
    const store = new SqliteEventStore({ path: freshPath() });
    await store.init();
    const address = { sessionId: "carried", runId: "r" };
    const [started] = (
      await store.append({ ...address, expectedSeq: 0, events: [{ type: "run.started" }] })
    ).events;
    const [message, list] = ["a message", "its list node"].map((text) => prepareBlob(text).ref);
    const write = vi.spyOn(SqliteBackend.prototype, "write");
    const put = vi.spyOn(SqliteBackend.prototype, "putBlobs");
    try {
      await store.append({
        ...address,
        expectedSeq: 1,
        events: [{ type: "x.named", evidenceRefs: [message as string, list as string] }],
        blobs: ["a message", "its list node"],
      });
      expect(write).not.toHaveBeenCalled();
      expect(put).not.toHaveBeenCalled();
      // An id the session already holds fails the insert after the blob's: the transaction
      // rolls back whole (then the program, in its own, answers duplicate-event).
      const clash = prepareBlob("never stored").ref;
      await expect(
        store.append({
          ...address,
          expectedSeq: 2,
          events: [{ eventId: started?.eventId, type: "x.named", evidenceRefs: [clash] }],
          blobs: ["never stored"],
        }),
      ).rejects.toMatchObject({ code: "duplicate-event" });
      await expect(store.getBlob(clash)).rejects.toMatchObject({ code: "not-found" });
    } finally {
      write.mockRestore();
      put.mockRestore();
    }
    expect(new TextDecoder().decode(await store.getBlob(list as string))).toBe("its list node");
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
    await store.append({ ...address, expectedSeq: 2, events: [{ type: "run.completed" }] });
    expect(await store.deleteSession("carried", { blobGraceMs: 0 })).toMatchObject({
      deletedBlobs: 2,
    });
    await store.close();
  });

  it("refuses a file: URL that names no local path with invalid-argument at $.url, through openStore too", async () => {
    for (const url of ["file://server/share/ledger.db", "file:///var/a%2Fb.db"]) {
      const error = await openStore(url, { create: false }).then(
        () => undefined,
        (refusal: unknown) => refusal,
      );
      expect(LedgerError.isInstance(error, "invalid-argument")).toBe(true);
      expect((error as LedgerError).path).toBe("$.url");
      expect((error as LedgerError).message).toMatch(/^\$\.url: .*File URL (host|path) must/);
    }
  });

  it("opens through openStore for a file and for :memory:", async () => {
    for (const url of [`sqlite:${freshPath()}`, "sqlite::memory:"]) {
      const store = await openStore(url);
      const written = await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", payload: { url } }],
      });
      expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toEqual(written.events);
      await store.close();
    }
  });

  it("promises durability in describe(): WAL and synchronous=FULL", async () => {
    const path = freshPath();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(store.describe()).toEqual({
      kind: "sqlite",
      location: path,
      durability: { journal_mode: "wal", synchronous: 2 },
    });
    await store.close();
  });

  it("stores the whole event as its JSON text, \\u0000 and astral characters included", async () => {
    const path = freshPath();
    const store = new SqliteEventStore({ path });
    await store.init();
    const payload = { text: "nul\u0000 tab\t emoji 😀 ß", nested: { z: 1, a: [true, null] } };
    const { events } = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "input.received", payload }],
    });
    await store.close();
    const raw = new Database(path, { readonly: true });
    const row = raw.prepare("SELECT body FROM events").get() as { body: string };
    raw.close();
    expect(row.body).toBe(JSON.stringify(events[0]));
    expect(JSON.parse(row.body).payload).toEqual(payload);
  });

  it("keeps a long body compressed, returns it verbatim, and still reads TEXT bodies", async () => {
    const path = freshPath();
    const store = new SqliteEventStore({ path });
    await store.init();
    const long = { text: "nul\u0000 emoji 😀 ".repeat(80), ids: ["a".repeat(64), "b".repeat(64)] };
    const input: NewEvent[] = [
      { eventId: "e0", type: "run.started", payload: long },
      { eventId: "e1", type: "input.received", payload: { short: true } },
    ];
    const { events } = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: input,
    });
    const raw = new Database(path);
    const rows = raw.prepare("SELECT body FROM events ORDER BY seq").all() as { body: unknown }[];
    const first = rows[0]?.body;
    expect(first).toBeInstanceOf(Buffer);
    expect((first as Buffer).byteLength).toBeLessThan(JSON.stringify(events[0]).length / 2);
    expect(rows[1]?.body).toBe(JSON.stringify(events[1]));
    expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toEqual(events);
    expect((await store.readSession({ sessionId: "s" })).events).toEqual(events);
    // A retry of the same append compares with the stored (decompressed) bodies.
    const again = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: input,
    });
    expect(again.deduplicated).toBe(true);
    // A body written as TEXT (as every body was before compression) reads the same.
    raw.prepare("UPDATE events SET body = ? WHERE seq = 0").run(JSON.stringify(events[0]));
    raw.close();
    expect((await store.readRun({ sessionId: "s", runId: "r" })).events).toEqual(events);
    await store.close();
  });

  it("applies the migrations once however often init() runs, and refuses a newer schema", async () => {
    const path = freshPath();
    const store = new SqliteEventStore({ path });
    await Promise.all([store.init(), store.init()]);
    await store.init();
    await store.close();
    const raw = new Database(path);
    expect(raw.prepare("SELECT version FROM schema_version").all()).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
    ]);
    raw.prepare("INSERT INTO schema_version VALUES (99, 'future', 'now')").run();
    raw.close();
    const newer = new SqliteEventStore({ path });
    const error = await newer.init().catch((failure: unknown) => failure);
    // A newer release's ledger: the store answered, so not store-unavailable (sqlite-upgrade.test.ts).
    expect(LedgerError.isInstance(error, "invalid-argument")).toBe(true);
    expect(String(error)).toMatch(/version 99/);
    await newer.close();
  });

  it("upgrades a database of the first two migrations: blobs and refs keyed by digest", async () => {
    const path = freshPath();
    const raw = databaseAtMigration(path, 2);
    // Rows as the 0001 schema kept them: the text reference as the key, one encoded, one
    // stored before the header byte existed.
    const kept = prepareBlob("kept by session b ".repeat(20));
    const orphan = prepareBlob("named by session a only");
    const legacy = Buffer.from("a blob from before the header byte");
    const legacyRef = blobRef(legacy);
    const insert = raw.prepare(
      "INSERT INTO blobs (blob_ref, content, touched_at) VALUES (?, ?, 0)",
    );
    insert.run(kept.ref, Buffer.from(kept.stored));
    insert.run(orphan.ref, Buffer.from(orphan.stored));
    insert.run(legacyRef, legacy);
    raw.close();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(new TextDecoder().decode(await store.getBlob(kept.ref))).toBe(
      "kept by session b ".repeat(20),
    );
    expect(Buffer.from(await store.getBlob(legacyRef))).toEqual(legacy);
    for (const [sessionId, refs] of [
      ["a", [kept.ref, orphan.ref]],
      ["b", [kept.ref]],
    ] as const) {
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [
          { type: "run.started", evidenceRefs: [...refs] },
          { type: "run.completed", payload: {} },
        ],
      });
    }
    const deleted = await store.deleteSession("a", { blobGraceMs: 0 });
    expect(deleted).toMatchObject({ deletedEvents: 2, deletedBlobs: 1 });
    await expect(store.getBlob(orphan.ref)).rejects.toMatchObject({ code: "not-found" });
    expect(new TextDecoder().decode(await store.getBlob(kept.ref))).toContain("session b");
    await store.close();
  });

  it("uses a database the application opened and leaves it open on close()", async () => {
    const database = new Database(freshPath());
    const store = new SqliteEventStore({ database });
    await store.init();
    await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    await store.close();
    expect(database.open).toBe(true);
    expect(database.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 1 });
    database.close();
  });

  // A folder that is not there stays missing however often a supervisor retries: not
  // store-unavailable (which it retries), but the set-up mistake it is, and which folder.
  it("refuses a path in a folder that does not exist with invalid-argument, on first use, making nothing", async () => {
    const missingFolder = join(folder, "missing-dir");
    const path = join(missingFolder, "x.db");
    const store = new SqliteEventStore({ path });
    const error = await store.init().catch((failure: unknown) => failure);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect((error as LedgerError).path).toBe("$.path");
    expect((error as LedgerError).message).toContain(
      `the folder ${missingFolder} of the SQLite database ${path} does not exist`,
    );
    expect((error as LedgerError).message).toContain(`mkdir -p ${missingFolder}`);
    expect((error as LedgerError).cause).toBeInstanceOf(Error);
    const throughUrl = await openStore(`sqlite:${path}`).catch((failure: unknown) => failure);
    expect(throughUrl).toMatchObject({ code: "invalid-argument", path: "$.url" });
    expect(existsSync(missingFolder)).toBe(false);
    // A reader is told there is no ledger there.
    const reader = new SqliteEventStore({ path });
    const missing = await reader.init({ create: false }).catch((failure: unknown) => failure);
    expect(LedgerError.isInstance(missing, "not-found")).toBe(true);
  });

  it("refuses a directory with invalid-argument, for a writer and a reader, through openStore too", async () => {
    const refusals = [
      await Promise.resolve()
        .then(() => new SqliteEventStore({ path: folder }))
        .catch((error: unknown) => error),
      await openStore(`sqlite:${folder}`).catch((error: unknown) => error),
      await openStore(`sqlite:${folder}`, { create: false }).catch((error: unknown) => error),
    ];
    for (const [index, refusal] of refusals.entries()) {
      expect(LedgerError.isInstance(refusal, "invalid-argument"), String(refusal)).toBe(true);
      // openStore's caller gave a URL.
      expect((refusal as LedgerError).path).toBe(index === 0 ? "$.path" : "$.url");
      expect((refusal as LedgerError).message).toContain(`${folder} is a directory`);
    }
    for (const path of [5, "", undefined])
      expect(() => new SqliteEventStore({ path: path as string })).toThrow(
        expect.objectContaining({ code: "invalid-argument", path: "$.path" }),
      );
  });

  it("maps a driver failure during append to store-unavailable with the cause", async () => {
    const database = new Database(freshPath());
    const store = new SqliteEventStore({ database });
    await store.init();
    database.exec("DROP TABLE runs");
    const error = await store
      .append({ sessionId: "s", runId: "r", expectedSeq: 0, events: [{ type: "run.started" }] })
      .catch((failure: unknown) => failure);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect(((error as LedgerError).cause as { code?: string }).code).toBe("SQLITE_ERROR");
    database.close();
  });
});
