import { describe, expect, it } from "vitest";
import { commandStoreOptions, commandStoreUrl } from "./store-url.js";

describe("commandStoreUrl", () => {
  it("names a store given with --store or by default, and leaves $AGENT_LEDGER_STORE's out", () => {
    const storeUrl = "postgres://app:s3cret@db/ledger";
    expect(commandStoreUrl({ storeUrl, storeSource: "flag" })).toBe(storeUrl);
    expect(commandStoreUrl({ storeUrl, storeSource: "default" })).toBe(storeUrl);
    expect(commandStoreUrl({ storeUrl, storeSource: "env" })).toBeUndefined();
  });
});

describe("commandStoreOptions", () => {
  it("gives the options that name the store in what inspect, export and serve print, none for $AGENT_LEDGER_STORE's", () => {
    const storeUrl = "sqlite:./ledger.db";
    expect(commandStoreOptions({ storeUrl, storeSource: "flag" })).toEqual({ storeUrl });
    expect(commandStoreOptions({ storeUrl, storeSource: "default" })).toEqual({ storeUrl });
    // No key at all: an options object with `storeUrl: undefined` is not the same to a spread.
    expect(commandStoreOptions({ storeUrl, storeSource: "env" })).toStrictEqual({});
  });
});
