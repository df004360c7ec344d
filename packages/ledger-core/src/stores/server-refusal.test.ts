import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../events/errors.js";
import { refusedConfiguration, serverRefusal } from "./server-refusal.js";

// What each driver says when the server answered and said no, under the store's
// store-unavailable (the store keeps the driver error as its cause).
const unavailable = (cause: unknown) => new StoreUnavailableError("init failed", cause);
const coded = (code: string, message = "refused") => Object.assign(new Error(message), { code });

describe("serverRefusal", () => {
  it("reads a missing database, refused credentials and a refused privilege from each driver's error", () => {
    const cases: [unknown, string | undefined][] = [
      [coded("3D000"), "no-database"],
      [coded("28P01"), "credentials"],
      [coded("28000"), "credentials"],
      [coded("ER_BAD_DB_ERROR"), "no-database"],
      [coded("ER_ACCESS_DENIED_ERROR"), "credentials"],
      // MariaDB's answer, now and then, to a user that does not exist (seen failing CI once).
      [coded("ER_ACCESS_DENIED_NO_PASSWORD_ERROR"), "credentials"],
      [coded("ER_DBACCESS_DENIED_ERROR"), "database-denied"],
      [new Error("WRONGPASS invalid username-password pair or user is disabled."), "credentials"],
      [new Error("NOAUTH Authentication required."), "credentials"],
      [
        new Error(
          "ERR The user executing the script can't run this command or subcommand script: 6e9d, on @user_script:61.",
        ),
        "permission",
      ],
      [new Error("ERR DB index is out of range"), "no-database"],
      // A user that may not do what was asked (an upgrade's DDL by a user that may only read).
      [coded("42501", "permission denied for database test"), "permission"],
      [coded("ER_TABLEACCESS_DENIED_ERROR"), "permission"],
      [coded("ER_SPECIFIC_ACCESS_DENIED_ERROR"), "permission"],
      [new Error("NOPERM User reader has no permissions to run the 'set' command"), "permission"],
      // A server out of reach is none of these: exit 4 stays.
      [coded("ECONNREFUSED"), undefined],
      [new Error("Connection is closed."), undefined],
    ];
    for (const [cause, refusal] of cases) {
      expect(serverRefusal(unavailable(cause)), String(cause)).toBe(refusal);
    }
  });
});

describe("refusedConfiguration", () => {
  const at = { location: "postgres://h/db", path: "$.connectionString" };

  it("makes a missing database not-found under create: false, invalid-argument at the path otherwise", () => {
    const missing = unavailable(coded("3D000", 'database "db" does not exist'));
    expect(refusedConfiguration(missing, { ...at, create: false })).toMatchObject({
      code: "not-found",
      message:
        'no ledger at postgres://h/db: the database is not there (database "db" does not exist)',
      details: { refusal: "no-database" },
    });
    expect(refusedConfiguration(missing, { ...at, create: undefined })).toMatchObject({
      code: "invalid-argument",
      path: "$.connectionString",
    });
  });

  it("leaves a refused privilege, a server out of reach and the store's own errors as they are", () => {
    const create = undefined;
    expect(refusedConfiguration(unavailable(coded("42501")), { ...at, create })).toBeUndefined();
    expect(
      refusedConfiguration(unavailable(coded("ECONNREFUSED")), { ...at, create }),
    ).toBeUndefined();
    const told = refusedConfiguration(unavailable(coded("28P01")), { ...at, create });
    expect(told).toMatchObject({ code: "invalid-argument", details: { refusal: "credentials" } });
    expect(refusedConfiguration(told, { ...at, create })).toBeUndefined();
  });
});
