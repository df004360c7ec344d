import { inflateRawSync } from "node:zlib";
import { deflateRaw, MAX_DEFLATE_INPUT_BYTES, prepareDictionary } from "../../codec/deflate.js";
import { type StoredEventPlace, unreadableEvent } from "../../store/unreadable-event.js";

/**
 * How the SQLite store keeps an event body (the event JSON, returned to readers verbatim).
 * - A TEXT value: the JSON itself (every body written before this codec, and every short one).
 * - A BLOB value: one header byte, then the JSON compressed. `0x01`: deflate-raw with the
 *   preset dictionary `BODY_DICTIONARY_V1` (never edit it: stored rows depend on its bytes;
 *   a new dictionary gets a new header byte).
 * An envelope is mostly ids, hashes and the same keys in every row; SQLite compresses
 * nothing, so a model event of ~1 KB took ~1 KB. With the dictionary of the wire format's
 * keys and values it takes about a third. Short bodies (below `MIN_COMPRESS_CHARS`) stay
 * TEXT: they gain little, and the append of a small event pays no deflate call.
 */
const BODY_DEFLATE_V1 = 1;
const MIN_COMPRESS_CHARS = 512;

/**
 * The wire vocabulary: envelope keys in the order events are serialized, type names, the
 * blob markers and the common payload keys of the recorder and the adapters. deflate finds
 * matches anywhere in it; the most frequent strings are last (shortest distances).
 */
export const BODY_DICTIONARY_V1 = Buffer.from(
  [
    '"type":"attempt.abandoned","type":"attempt.approved","type":"checkpoint.saved",',
    '"type":"evidence.recorded","type":"input.received","type":"model.failed",',
    '"type":"run.cancelled","type":"run.failed","type":"tool.failed","reason":"',
    '"classification":"","summary":"","key":"","effect":{"kind":"unknown","idempotent":false},',
    '{"kind":"none","idempotent":true},{"kind":"read","kind":"write",',
    '"error":{"name":"Error","message":"","stack":"Error: \\n    at ","cause":',
    '"metadata":{},"retryOf":"","parentRunId":"","framework":"langchain","framework":"openai-agents",',
    '"actor":{"type":"human","id":"","actor":{"type":"system","id":"","actor":{"type":"tool","id":"',
    '"type":"tool.completed","payload":{"toolCallId":"call_","result":',
    '"type":"tool.requested","payload":{"toolCallId":"call_","name":"","args":{',
    '"role":"system","role":"assistant","role":"tool","role":"user","content":"',
    '"messages":[{"tool_calls":[],"toolCalls":[{"type":"function","function":{"arguments":"',
    '"model":"","temperature":0,"tools":[',
    '{"$ledger":"json","ref":"sha256:{"$ledger":"escape","value":{"state":',
    '"type":"run.completed","payload":{"output":',
    '"finishReason":{"unified":"stop","raw":"stop"},"finishReason":"tool-calls","stop",',
    '"usage":{"inputTokens":{"total":,"noCache":,"cacheRead":},"outputTokens":{"total":,"text":,"reasoning":}},',
    '"warnings":[],"providerMetadata":{},"response":{"id":"","modelId":"","timestamp":"',
    '"type":"model.completed","payload":{"response":{"content":[{"type":"text","text":',
    '{"type":"tool-call","toolCallId":"","toolName":"","input":"',
    '"type":"model.requested","payload":{"request":{"model":{"provider":"","modelId":"',
    '"prompt":{"$ledger":"list","ref":"sha256:"},"requestHash":"',
    '"causedByEventId":"',
    '{"$ledger":"text","ref":"sha256:',
    '{"schemaVersion":1,"eventId":"","sessionId":"","runId":"","seq":,"type":"run.started",',
    '"stepId":"","attemptId":"","actor":{"type":"agent","id":"","framework":"ai-sdk"},"recordedAt":"20',
    '"payload":{},"evidenceRefs":["sha256:","sha256:"],"prevHash":null,"prevHash":"","hash":"","commitCursor":',
  ].join(""),
  "utf8",
);

/**
 * Bodies shaped as the recorder writes a model call and a tool call (ids, hashes, the
 * envelope's keys, a short request and answer), from which the encoder prepares the code it
 * writes bodies of up to 1 KiB with (codec/deflate.ts). Only how small those bodies come out
 * depends on them: each stored stream carries its code, so they may change at any time.
 */
function sampleBodies(): Uint8Array[] {
  let state = 0x5eed;
  const hex = (length: number) => {
    let text = "";
    while (text.length < length) {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      text += (state >>> 8).toString(16).padStart(6, "0");
    }
    return text.slice(0, length);
  };
  const id = (at: string) => `01a24a12-${at}-7${hex(3)}-a${hex(3)}-${hex(12)}`;
  const session = id("4cd1");
  const run = id("4cd1");
  let seq = 0;
  let previous = hex(64);
  const event = (type: string, step: string, attempt: string, cause: string, payload: string) => {
    const hash = hex(64);
    const causedBy = cause === "" ? "" : `"causedByEventId":"${cause}",`;
    const body = `{"schemaVersion":1,"eventId":"${id("4cd8")}","sessionId":"${session}","runId":"${run}","seq":${++seq},"type":"${type}","stepId":"${step}","attemptId":"${attempt}",${causedBy}"actor":{"type":"agent","id":"support-agent"},"recordedAt":"2026-12-06T06:37:23.0${30 + seq}Z","payload":${payload},"prevHash":"${previous}","hash":"${hash}","commitCursor":${seq + 1}}`;
    previous = hash;
    return Buffer.from(body, "utf8");
  };
  const modelStep = id("4cd8");
  const modelAttempt = id("4cd8");
  const toolStep = id("4cde");
  const toolAttempt = id("4cde");
  return [
    event(
      "model.requested",
      modelStep,
      modelAttempt,
      "",
      `{"request":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Where is my order 1042? It was due on Friday."}],"temperature":0},"requestHash":"${hex(64)}"}`,
    ),
    event(
      "model.completed",
      modelStep,
      modelAttempt,
      id("4cd8"),
      `{"response":{"content":[{"type":"text","text":"I will look up the tracking number."},{"type":"tool-call","toolCallId":"call_7","toolName":"track_order","input":"{\\"orderId\\":1042}"}],"finishReason":"tool-calls","usage":{"inputTokens":212,"outputTokens":31}}}`,
    ),
    event(
      "tool.requested",
      toolStep,
      toolAttempt,
      id("4cdd"),
      `{"toolCallId":"call_7","name":"track_order","args":{"orderId":1042},"effect":{"kind":"unknown","idempotent":false},"requestHash":"${hex(64)}"}`,
    ),
    event(
      "tool.completed",
      toolStep,
      toolAttempt,
      id("4cde"),
      `{"result":{"status":"in transit","carrier":"DHL","eta":"2026-12-08"},"toolCallId":"call_7"}`,
    ),
  ];
}

const PREPARED_DICTIONARY_V1 = prepareDictionary(BODY_DICTIONARY_V1, sampleBodies());
/** A body's UTF-8 bytes, reused across calls. */
const utf8Scratch = Buffer.allocUnsafe(MAX_DEFLATE_INPUT_BYTES * 3);

/** The value to store in `events.body` for an event's JSON. */
export function encodeBody(body: string): string | Buffer {
  if (body.length < MIN_COMPRESS_CHARS) return body;
  return deflateBody(body);
}

/**
 * The format byte, then the body's UTF-8 bytes deflate-raw with `BODY_DICTIONARY_V1`
 * (codec/deflate.ts: our encoder up to 16 KiB, whose setup costs less than zlib's per-call
 * stream and dictionary load for a 1 KB body; zlib beyond). `decodeBody` reads either.
 */
function deflateBody(body: string): Buffer {
  // A UTF-16 unit takes at most 3 UTF-8 bytes: a body of 16 Ki units fits the scratch whole.
  const bytes =
    body.length <= MAX_DEFLATE_INPUT_BYTES
      ? utf8Scratch.subarray(0, utf8Scratch.write(body, 0, "utf8"))
      : Buffer.from(body, "utf8");
  return deflateRaw(bytes, PREPARED_DICTIONARY_V1, BODY_DEFLATE_V1);
}

/**
 * The event JSON of a stored `events.body` value (TEXT as is, BLOB decompressed). A value no
 * version of the codec wrote is `tamper-detected` at `place` (see unreadableEvent).
 */
export function decodeBody(value: unknown, place?: () => StoredEventPlace): string {
  if (typeof value === "string") return value;
  const where = place ?? (() => ({}));
  if (value instanceof Uint8Array && value[0] === BODY_DEFLATE_V1) {
    try {
      return inflateRawSync(value.subarray(1), { dictionary: BODY_DICTIONARY_V1 }).toString("utf8");
    } catch (error) {
      throw unreadableEvent(where(), error);
    }
  }
  throw unreadableEvent(
    where(),
    value instanceof Uint8Array
      ? `a body of unknown format ${value[0] ?? "(empty)"}`
      : `a body of SQLite type ${value === null ? "NULL" : typeof value}`,
  );
}
