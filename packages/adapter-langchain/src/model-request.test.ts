import type { Serialized } from "@langchain/core/load/serializable";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { chatRequest, textRequest } from "./model-request.js";

const llm = { lc: 1, type: "not_implemented", id: ["langchain", "FakeChat"] } as Serialized;

describe("a recorded request's conversation", () => {
  it("holds a URL's password as ***, and the rest of each message as sent", () => {
    const request = chatRequest({
      llm,
      messages: [
        [
          new HumanMessage("use postgres://app:SECRET-1@db/x, or mail ops@example.com: thanks"),
          new AIMessage("fetching https://docs.example/a?page=2"),
        ],
      ],
    });
    expect(JSON.stringify(request)).not.toContain("SECRET");
    expect(request.messages).toMatchObject([
      { data: { content: "use postgres://app:***@db/x, or mail ops@example.com: thanks" } },
      { data: { content: "fetching https://docs.example/a?page=2" } },
    ]);
    const text = textRequest({
      llm,
      prompts: ["see https://u:SECRET-2@h.example/?token=SECRET-3"],
    });
    expect(text.prompts).toEqual(["see https://u:***@h.example/?token=***"]);
  });
});
