import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { messageToJson, safeParams } from "./plain-json.js";

describe("messageToJson", () => {
  it("keeps the message's values as toJsonValue makes them JSON, not as toDict() copies them", () => {
    const message = new ToolMessage({
      content: "content x",
      tool_call_id: "call-1",
      name: "query",
      artifact: { when: new Date(0), totals: new Map([["eur", 12]]), lc: 1, nested: { lc: 2 } },
    });
    // toDict() would give `when: {}`, `totals: {}` and the artifact wrapped in __lc_escaped__.
    expect(messageToJson(message)).toEqual({
      type: "tool",
      data: {
        content: "content x",
        tool_call_id: "call-1",
        name: "query",
        artifact: {
          when: "1970-01-01T00:00:00.000Z",
          totals: { eur: 12 },
          lc: 1,
          nested: { lc: 2 },
        },
        additional_kwargs: {},
        response_metadata: {},
      },
    });
  });

  it("leaves out the random id and the chunk fragments, as before", () => {
    const message = new AIMessage({
      id: "run-123",
      content: "",
      tool_calls: [{ id: "c1", name: "lookup", args: { since: new Date(0) } }],
    });
    const json = messageToJson(message);
    expect(json.data).not.toHaveProperty("id");
    expect(json.data).toMatchObject({
      tool_calls: [{ id: "c1", name: "lookup", args: { since: "1970-01-01T00:00:00.000Z" } }],
    });
  });
});

describe("safeParams", () => {
  it("drops credentials in any casing: header containers, cookies, secret keys, auth, passwords", () => {
    const headers = { Cookie: "sid=1", "Ocp-Apim-Subscription-Key": "k1", "X-Trace": "t" };
    expect(
      safeParams({
        model: "gpt-x",
        defaultHeaders: headers,
        default_headers: headers,
        headers,
        extraHeaders: headers,
        cookie: "sid=2",
        cookies: ["sid=3"],
        apiKey: "k2",
        api_key: "k3",
        "x-api-key": "k4",
        adminAPIKey: "k5",
        privateKey: "pk2",
        private_key: "pk",
        subscriptionKey: "k6",
        "Ocp-Apim-Subscription-Key": "k7",
        secretAccessKey: "aws",
        accessKeyId: "aws-id",
        key: "google-key",
        auth: "user:pass",
        basicAuth: "user:pass",
        Authorization: "Bearer t",
        password: "p",
        client_secret: "s",
        webhookSecret: "s2",
        credentials: { token: "t" },
        googleCredentials: "c",
        accessToken: "t2",
        refresh_token: "t3",
        connectionString: "Endpoint=sb://x;SharedAccessKey=k",
        // per-call values
        signal: "s",
        callbacks: [],
        timeout: 1,
        // nested: a client's options carry the same
        configuration: { apiKey: "k8", baseURL: "https://api.example", defaultQuery: { key: "q" } },
      }),
    ).toEqual({
      model: "gpt-x",
      configuration: { baseURL: "https://api.example", defaultQuery: {} },
    });
  });

  it("keeps ordinary parameters (those whose name merely ends in k, key or tokens)", () => {
    const params = {
      model: "claude-x",
      temperature: 0.2,
      maxTokens: 100,
      max_tokens: 100,
      max_completion_tokens: 100,
      topK: 40,
      top_k: 40,
      topP: 0.9,
      stop: ["\n"],
      prompt_cache_key: "conversation-1",
      tools: [{ type: "function", function: { name: "lookup" } }],
      response_format: { type: "json_object" },
      streaming: true,
    };
    expect(safeParams(params)).toEqual(params);
  });
});

describe("safeParams on the parameters providers send in lists", () => {
  it("drops credentials inside arrays and masks the password or token of a URL", () => {
    const params = safeParams({
      model: "claude-x",
      // Anthropic's MCP connector; OpenAI's remote MCP tool.
      mcp_servers: [
        { type: "url", url: "https://mcp.example/sse", authorization_token: "SECRET-1" },
      ],
      tools: [
        {
          type: "mcp",
          server_url: "https://mcp.example",
          headers: { Authorization: "Bearer SECRET-2" },
          authorization: "SECRET-3",
        },
      ],
      stop: ["\n"],
      dsn: "postgres://u:SECRET-4@h/db",
      baseURL: "https://user:SECRET-5@proxy.example/v1",
      pwd: "SECRET-6",
      jwt: "SECRET-7",
    });
    expect(JSON.stringify(params)).not.toContain("SECRET");
    expect(params).toEqual({
      model: "claude-x",
      mcp_servers: [{ type: "url", url: "https://mcp.example/sse" }],
      tools: [{ type: "mcp", server_url: "https://mcp.example" }],
      stop: ["\n"],
      dsn: "postgres://u:***@h/db",
      baseURL: "https://user:***@proxy.example/v1",
    });
  });
});
