import { StoreUnavailableError } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, exitCodeOf, refusedMidCommand, serverRefusal } from "./errors.js";

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

describe("refusedMidCommand", () => {
  it("makes a refusal of the URL's user during a command exit 1 with what to check; a server out of reach stays exit 4", () => {
    const refused = refusedMidCommand(
      new StoreUnavailableError(
        "postgres append failed: permission denied for table runs",
        coded("42501", "permission denied for table runs"),
      ),
    );
    expect(refused?.message).toBe(
      "the server refused the store URL's user: postgres append failed: permission denied for table runs",
    );
    expect(exitCodeOf(refused)).toBe(EXIT_CODES.failure);
    expect(refused?.hint).toContain("check what the store URL's user may do");
    const away = new StoreUnavailableError("postgres append failed", coded("ECONNREFUSED"));
    expect(refusedMidCommand(away)).toBeUndefined();
    expect(exitCodeOf(away)).toBe(EXIT_CODES.unreachable);
  });
});
