import { describe, expect, it } from "vitest";
import { isCredentialKey } from "../events/credential-name.js";
import { withoutCredentialKeys } from "./credential-key.js";

describe("isCredentialKey", () => {
  it("names credentials in any case and spelling: settings, and headers gateways use", () => {
    const keys = [
      "apiKey",
      "api_key",
      "X-API-Key",
      "x-api-key",
      "x-goog-api-key",
      "apikey",
      "Ocp-Apim-Subscription-Key",
      "Authorization",
      "Proxy-Authorization",
      "client_secret",
      "webhookSecret",
      "password",
      "token",
      "access_token",
      "X-Auth-Token",
      "auth",
      "basicAuth",
      "Cookie",
      "credentials",
      "privateKey",
      "connectionString",
      "key",
      "pwd",
      "db_pwd",
      "jwt",
      "clientJwt",
      "pass",
      "Pass",
    ];
    expect(keys.filter((key) => !isCredentialKey(key))).toEqual([]);
  });

  it("leaves ordinary names, those only ending in k, key or tokens, and header containers", () => {
    const keys = [
      "model",
      "temperature",
      "topK",
      "max_tokens",
      "maxTokens",
      "prompt_cache_key",
      "idempotencyKey",
      "X-Trace-Id",
      "extra_headers",
      "headers",
      "metadata",
      "author",
      "passes",
      "bypass",
      "signature",
    ];
    expect(keys.filter(isCredentialKey)).toEqual([]);
  });
});

describe("withoutCredentialKeys", () => {
  it("redacts credential keys inside arrays, and a password or token a URL carries", () => {
    const settings = {
      model: "claude-x",
      mcp_servers: [{ url: "https://mcp.example/sse", authorization_token: "SECRET-1" }],
      tools: [
        { type: "mcp", server_url: "https://x", headers: { Authorization: "Bearer SECRET-2" } },
      ],
      proxy: "http://u:SECRET-3@proxy:8080",
      baseURL: "https://gateway.example/v1?api_key=SECRET-4",
      plain: "https://example.com/v1",
    };
    const cleared = withoutCredentialKeys(settings);
    expect(JSON.stringify(cleared)).not.toContain("SECRET");
    expect(cleared).toMatchObject({
      mcp_servers: [{ url: "https://mcp.example/sse", authorization_token: "[redacted]" }],
      proxy: "http://u:***@proxy:8080",
      baseURL: "https://gateway.example/v1?api_key=***",
      plain: "https://example.com/v1",
    });
  });

  it("masks a URL's password inside prose, and leaves prose with a URL and an address as is", () => {
    const prose = "Read https://docs.example/a first. Mail help@example.com: thanks";
    const settings = {
      instructions: prose,
      note: "Use postgres://app:SECRET-1@db:5432/x to connect, or mail ops@example.com: ok",
    };
    expect(withoutCredentialKeys({ instructions: prose })).toEqual({ instructions: prose });
    expect(withoutCredentialKeys(settings)).toEqual({
      instructions: prose,
      note: "Use postgres://app:***@db:5432/x to connect, or mail ops@example.com: ok",
    });
  });

  it("gives back the value itself when nothing in it is a credential", () => {
    const settings = { model: "m", urls: ["https://example.com/a?page=2"], n: 1 };
    expect(withoutCredentialKeys(settings)).toBe(settings);
  });
});
