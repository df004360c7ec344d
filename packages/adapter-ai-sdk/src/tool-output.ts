import type { JsonObject, JsonValue } from "@agent-ledger/core";
import { type BytesPath, type BytesPaths, toJsonValueAndBytes } from "./plain-json.js";

/**
 * What `tool.completed` holds for a tool's output: the output as plain JSON (bytes as base64,
 * as in every payload), and in the event's metadata where the bytes were
 * (`{ aiSdk: { bytes: [[key, ...], ...], buffers?, arrayBuffers? } }`, the last two the paths
 * among them that held a Node `Buffer`, an `ArrayBuffer`), so that a replay hands back the same
 * shape.
 * A tool's `toModelOutput` reads its output on replay as it did live: given a base64 string
 * where it had a `Uint8Array`, it would build another prompt, and the next model call would
 * no longer match the recorded one.
 */
export function encodeToolOutput(output: unknown): { result: JsonValue; metadata?: JsonObject } {
  const { json, bytes, buffers, arrayBuffers } = toJsonValueAndBytes(output, "$.result");
  // A Date is recorded as its ISO string; given that string on replay, the SDK would hand the
  // model a text output where it had a JSON one (`{ type: "json" }`): it is a Date again.
  if (output instanceof Date && typeof json === "string")
    return { result: json, metadata: { aiSdk: { date: true } } };
  if (bytes.length === 0) return { result: json };
  // A Buffer (fs.readFile's) and an ArrayBuffer (fetch's) come back as one: a toModelOutput
  // calling the Buffer's toString("base64"), or reading the ArrayBuffer's byteLength, would build
  // another prompt from a plain Uint8Array.
  const aiSdk: JsonObject = { bytes };
  if (buffers.length > 0) aiSdk.buffers = buffers;
  if (arrayBuffers.length > 0) aiSdk.arrayBuffers = arrayBuffers;
  return { result: json, metadata: { aiSdk } };
}

function wasDate(metadata: JsonObject | undefined): boolean {
  const aiSdk = metadata?.aiSdk;
  return (
    typeof aiSdk === "object" && aiSdk !== null && !Array.isArray(aiSdk) && aiSdk.date === true
  );
}

function isBytesPath(value: unknown): value is BytesPath {
  return (
    Array.isArray(value) &&
    value.every((key) => typeof key === "string" || (typeof key === "number" && key >= 0))
  );
}

function bytesPathsOf(
  metadata: JsonObject | undefined,
  key: "bytes" | keyof BytesPaths,
): BytesPath[] {
  const aiSdk = metadata?.aiSdk;
  if (aiSdk === null || typeof aiSdk !== "object" || Array.isArray(aiSdk)) return [];
  const paths = aiSdk[key];
  return Array.isArray(paths) ? paths.filter(isBytesPath) : [];
}

function fromBase64(text: string, kind: "bytes" | keyof BytesPaths): Uint8Array | ArrayBuffer {
  const bytes = Buffer.from(text, "base64");
  if (kind === "buffers") return bytes;
  const copy = new Uint8Array(bytes);
  return kind === "arrayBuffers" ? copy.buffer : copy;
}

/**
 * The output a recorded `tool.completed` stands for: its JSON, with bytes back where they were,
 * and a Date again if the tool returned one.
 */
export function decodeToolOutput(result: JsonValue, metadata: JsonObject | undefined): unknown {
  if (typeof result === "string" && wasDate(metadata)) return new Date(result);
  const paths = bytesPathsOf(metadata, "bytes");
  if (paths.length === 0) return result;
  const kinds = new Map<string, keyof BytesPaths>();
  for (const kind of ["buffers", "arrayBuffers"] as const)
    for (const path of bytesPathsOf(metadata, kind)) kinds.set(JSON.stringify(path), kind);
  // A copy: the recorded value stays as the ledger holds it.
  const root: Record<string, unknown> = { value: structuredClone(result) };
  for (const path of paths) {
    let holder: Record<string | number, unknown> = root;
    let key: string | number = "value";
    let depth = 0;
    for (const next of path) {
      // Own keys only: the path comes from the ledger and must stay inside the value.
      const inner = Object.hasOwn(holder, key) ? holder[key] : undefined;
      if (inner === null || typeof inner !== "object") break;
      holder = inner as Record<string | number, unknown>;
      key = next;
      depth++;
    }
    if (depth < path.length) continue;
    const value = Object.hasOwn(holder, key) ? holder[key] : undefined;
    // Written by encodeToolOutput: anything else there is left as recorded.
    if (typeof value === "string")
      holder[key] = fromBase64(value, kinds.get(JSON.stringify(path)) ?? "bytes");
  }
  return root.value;
}
