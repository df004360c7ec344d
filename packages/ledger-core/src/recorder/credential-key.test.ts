import { describe, expect, it } from "vitest";
import { isCredentialKey } from "./credential-key.js";

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
    ];
    expect(keys.filter(isCredentialKey)).toEqual([]);
  });
});
