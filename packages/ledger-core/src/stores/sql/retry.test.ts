import { describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { withRetries } from "./retry.js";
import type { DriverErrorKind } from "./sql-backend.js";

/** A driver error of one kind, as a backend's classify would see it. */
class KindError extends Error {
  constructor(readonly kind: DriverErrorKind) {
    super(kind);
  }
}

/** Fails with `kinds` in turn, then returns the attempt that succeeded. */
function failing(kinds: (DriverErrorKind | LedgerError)[]) {
  const attempts: number[] = [];
  const run = async (attempt: number) => {
    attempts.push(attempt);
    const next = kinds[attempt - 1];
    if (next === undefined) return attempt;
    throw next instanceof LedgerError ? next : new KindError(next);
  };
  return { attempts, run };
}

const classify = (error: unknown) => (error as KindError).kind;
const fail = (error: unknown, kind: DriverErrorKind) =>
  new Error(`gave up on ${kind}: ${(error as Error).message}`);

describe("withRetries", () => {
  it("runs again after the kinds the policy names, and returns the first success", async () => {
    const { attempts, run } = failing(["transient", "unique", "transient"]);
    const result = await withRetries({ run, classify, retry: ["unique", "transient"], fail });
    expect(result).toBe(4);
    expect(attempts).toEqual([1, 2, 3, 4]);
  });

  it("gives up at once on a kind the policy does not name", async () => {
    const { attempts, run } = failing(["unique"]);
    await expect(withRetries({ run, classify, retry: ["transient"], fail })).rejects.toThrow(
      "gave up on unique",
    );
    expect(attempts).toEqual([1]);
  });

  it("gives up after five attempts, with the last failure", async () => {
    const { attempts, run } = failing(Array<DriverErrorKind>(9).fill("transient"));
    await expect(withRetries({ run, classify, retry: ["transient"], fail })).rejects.toThrow(
      "gave up on transient",
    );
    expect(attempts).toEqual([1, 2, 3, 4, 5]);
  });

  it("passes a ledger error on as it is, without classifying or retrying it", async () => {
    const refused = new LedgerError("run-closed", "closed");
    const { attempts, run } = failing([refused]);
    await expect(
      withRetries({ run, classify, retry: ["unique", "transient", "unavailable"], fail }),
    ).rejects.toBe(refused);
    expect(attempts).toEqual([1]);
  });

  it("runs once with an empty policy", async () => {
    const { attempts, run } = failing(["transient"]);
    await expect(withRetries({ run, classify, retry: [], fail })).rejects.toThrow("gave up");
    expect(attempts).toEqual([1]);
  });
});
