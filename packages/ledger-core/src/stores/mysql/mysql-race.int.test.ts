import mysql from "mysql2/promise";
import { afterAll, describe, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkRaceOutcome, runAppendRace } from "../sql/testing/race-check.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const databases: string[] = [];
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;
afterAll(async () => {
  for (const database of databases) await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin?.end();
});

const writers = 8;
const perWriter = 25;

describe.skipIf(!available)("MysqlEventStore across processes", () => {
  for (const sharedRun of [true, false]) {
    it(`8 processes append to ${sharedRun ? "one run" : "separate runs"} while a reader tails, each also sending batches that must be refused whole`, async () => {
      // An empty database: the children also race on init().
      const database = `ledger_race_${uuidv7().replaceAll("-", "")}`;
      databases.push(database);
      await admin?.query(`CREATE DATABASE \`${database}\``);
      const url = new URL(SERVER_URLS.mysql);
      url.pathname = `/${database}`;
      const reader = new MysqlEventStore({ uri: url.toString() });
      try {
        const outcome = await runAppendRace({
          target: { kind: "mysql", location: url.toString() },
          reader,
          sessionId: "race",
          sharedRun,
          writers,
          perWriter,
        });
        checkRaceOutcome(outcome, { writers, perWriter, sharedRun });
      } finally {
        await reader.close();
      }
    });
  }
});
