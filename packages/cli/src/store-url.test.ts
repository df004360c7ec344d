import { describe, expect, it } from "vitest";
import { commandStoreUrl } from "./store-url.js";

describe("commandStoreUrl", () => {
  it("names a store given with --store or by default, and leaves $AGENT_LEDGER_STORE's out", () => {
    const storeUrl = "postgres://app:s3cret@db/ledger";
    expect(commandStoreUrl({ storeUrl, storeSource: "flag" })).toBe(storeUrl);
    expect(commandStoreUrl({ storeUrl, storeSource: "default" })).toBe(storeUrl);
    expect(commandStoreUrl({ storeUrl, storeSource: "env" })).toBeUndefined();
  });
});
