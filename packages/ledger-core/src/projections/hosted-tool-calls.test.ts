import { describe, expect, it } from "vitest";
import type { JsonObject } from "../events/json.js";
import { hostedToolCallsOf, programCallersOf } from "./hosted-tool-calls.js";

describe("hosted-tool-calls' call ids", () => {
  it("reads a program's call id, and the caller of a call it made, in the SDK's spelling and the Responses API's", () => {
    const sdk: JsonObject = {
      output: [
        { type: "program", id: "prg_1", callId: "call_program", code: "print(1)" },
        {
          type: "function_call",
          id: "fc_1",
          callId: "call_price",
          name: "price",
          arguments: "{}",
          caller: { type: "program", callerId: "call_program" },
        },
      ],
    };
    // The Responses API's items: the ids in `call_id`, the caller in `caller_id`.
    const responses: JsonObject = {
      output: [
        { type: "program", id: "prg_1", call_id: "call_program", code: "print(1)" },
        {
          type: "function_call",
          id: "fc_1",
          call_id: "call_price",
          name: "price",
          arguments: "{}",
          caller: { type: "program", caller_id: "call_program" },
        },
      ],
    };
    for (const response of [sdk, responses]) {
      expect(hostedToolCallsOf(response).map((call) => call.id)).toEqual(["call_program"]);
      expect(Object.fromEntries(programCallersOf(response))).toEqual({
        call_price: "call_program",
      });
    }
  });
});
