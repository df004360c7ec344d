import { describe, expect, it } from "vitest";
import * as entry from "./index.js";

describe("public surface", () => {
  it("exports exactly the documented runtime API", () => {
    expect(Object.keys(entry).sort()).toEqual([
      "AttemptAbandonedError",
      "chatTurnId",
      "innerCallsSettled",
      "ledgerEmbeddingMiddleware",
      "ledgerMiddleware",
      "restoreConversation",
      "restoreMessages",
      "wrapTools",
    ]);
  });
});
