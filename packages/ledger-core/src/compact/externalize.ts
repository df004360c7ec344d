import { assertObjectArgument } from "../events/argument-checks.js";
import { canonicalJson } from "../events/canonical.js";
import { InvalidArgumentError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import { blobRef } from "../store/blob.js";
import type { EventStore } from "../store/event-store.js";
import { escapeObject, type ListNode, MARKER_KEY, marker, setOwn } from "./marker.js";

/** Options of payload externalization (`SessionRecorder`'s `compact`). */
export interface CompactOptions {
  /** A subtree (object, array or string) whose JSON is larger goes to a blob. Default 4096. */
  thresholdBytes?: number;
  /** In model requests and responses, a string of at least this many bytes goes to a blob. Default 1024. */
  textThresholdBytes?: number;
}

export const DEFAULT_THRESHOLD_BYTES = 4096;
export const DEFAULT_TEXT_THRESHOLD_BYTES = 1024;

/** Request fields holding the chat message list, in the order they are looked for. */
export const MESSAGE_LIST_FIELDS = ["messages", "prompt", "input"] as const;

/**
 * The `compact` option checked: a threshold that is not a non-negative integer ("4k", -1,
 * NaN) compared false or true against every size and sent every payload, every model name
 * and id included, to a blob without a word. `invalid-argument` naming it instead.
 */
function compactOptionsOf(options: unknown): CompactOptions {
  if (options === undefined || typeof options === "boolean") return {};
  assertObjectArgument(
    options,
    "$.compact",
    "compact must be false or { thresholdBytes?, textThresholdBytes? }",
  );
  const given = options as Record<string, unknown>;
  for (const key of ["thresholdBytes", "textThresholdBytes"]) {
    const value = given[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < 0))
      throw new InvalidArgumentError(
        `$.compact.${key}`,
        `${key} must be a non-negative integer (bytes)`,
      );
  }
  return given as CompactOptions;
}

/** The outcome of externalizing one event's payload fields. */
export interface CompactedEvent {
  /** New blobs to put before the event is appended (ref -> content). */
  blobs: Map<string, string>;
  /** Every ref the event reaches that this recorder has not seen committed in the session. */
  evidenceRefs: string[];
}

const encoder = new TextEncoder();
const MAX_MEMOIZED_REFS = 50_000;
/**
 * A message whose externalized form (long strings already replaced by text refs) is at most
 * this long is kept inline in its list node rather than in a blob of its own: a separate blob
 * would cost a 71-byte ref in the node, a row, an index entry and a reference-index row for a
 * wrapper like `{"role":"user","content":{"$ledger":"text",...}}`. Its content is still shared
 * by sha256 (the text blob); the list node itself is content-addressed.
 */
export const INLINE_MESSAGE_BYTES = 512;

/**
 * A message list this small, with nothing in it moved to a blob, that extends no stored list
 * stays inline in the request: a list node would cost a blob write (its own transaction) on
 * every short model call, for nothing to share yet. Once the conversation grows past it, the
 * next request starts a list node.
 */
export const INLINE_LIST_BYTES = 2048;

function utf8Length(text: string): number {
  // Cheap bounds first: every UTF-16 unit is 1 to 3 UTF-8 bytes.
  return Buffer.byteLength(text, "utf8");
}

/**
 * Externalizes large content of one recorder's payloads into content-addressed blobs (§8).
 * Keeps, per run, the previous request's message list so the next request stores only the
 * messages it appends (a list node naming the previous list), and the refs already committed
 * in this session, so a long conversation never re-puts (or re-indexes) what it stored before.
 */
export class PayloadCompactor {
  readonly #threshold: number;
  readonly #textThreshold: number;
  readonly #enabled: boolean;
  /** Refs named by events of this session that are committed: no put, no re-index. */
  readonly #committed = new Set<string>();
  /**
   * Refs of contents already hashed, by the content string itself. Adapters re-send the same
   * string objects turn after turn, and V8 caches a string's hash in the string, so a lookup
   * here is far cheaper than a sha256 over the text again. Bounded; cleared when full.
   */
  readonly #refsByContent = new Map<string, string>();
  #lastList: { ref: string; items: string[] } | undefined;

  constructor(options: CompactOptions | false | undefined) {
    this.#enabled = options !== false;
    const given = compactOptionsOf(options);
    this.#threshold = given.thresholdBytes ?? DEFAULT_THRESHOLD_BYTES;
    this.#textThreshold = given.textThresholdBytes ?? DEFAULT_TEXT_THRESHOLD_BYTES;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** Starts one event's externalization. */
  begin(): CompactSession {
    return new CompactSession(this, this.#threshold, this.#textThreshold, this.#enabled);
  }

  /** @internal The sha256 ref of some content (memoized). */
  refOf(content: string): string {
    let ref = this.#refsByContent.get(content);
    if (ref === undefined) {
      ref = blobRef(encoder.encode(content));
      if (this.#refsByContent.size >= MAX_MEMOIZED_REFS) this.#refsByContent.clear();
      this.#refsByContent.set(content, ref);
    }
    return ref;
  }

  /** @internal The memoized ref of some content, if it was hashed before. */
  knownRef(content: string): string | undefined {
    return this.#refsByContent.get(content);
  }

  /** @internal */
  isCommitted(ref: string): boolean {
    return this.#committed.has(ref);
  }

  /** Marks the refs of a committed event (their blobs were put before it). */
  committed(refs: Iterable<string>): void {
    for (const ref of refs) this.#committed.add(ref);
  }

  /** @internal */
  get lastList(): { ref: string; items: string[] } | undefined {
    return this.#lastList;
  }

  /** Remembers the message list of the last request (set once its event is committed). */
  setLastList(list: { ref: string; items: string[] } | undefined): void {
    this.#lastList = list;
  }
}

/** Externalization of one event: collects its new blobs and refs. */
export class CompactSession {
  readonly #owner: PayloadCompactor;
  readonly #threshold: number;
  readonly #textThreshold: number;
  readonly #enabled: boolean;
  readonly blobs = new Map<string, string>();
  readonly #refs = new Set<string>();
  /** Content moved to blobs so far (committed before or not). */
  #emitted = 0;
  /** The message list this event's request names (to remember once committed). */
  list: { ref: string; items: string[] } | undefined;

  constructor(owner: PayloadCompactor, threshold: number, textThreshold: number, enabled: boolean) {
    this.#owner = owner;
    this.#threshold = threshold;
    this.#textThreshold = textThreshold;
    this.#enabled = enabled;
  }

  /** Stores `content` as a blob (unless committed before) and returns its ref. */
  #use(ref: string, content: string): string {
    if (!this.#owner.isCommitted(ref)) {
      this.#refs.add(ref);
      this.blobs.set(ref, content);
    }
    return ref;
  }

  #emit(content: string): string {
    this.#emitted++;
    const ref = this.#owner.refOf(content);
    if (!this.#owner.isCommitted(ref)) {
      this.#refs.add(ref);
      this.blobs.set(ref, content);
    }
    return ref;
  }

  result(): CompactedEvent {
    return { blobs: this.blobs, evidenceRefs: [...this.#refs] };
  }

  /**
   * A value with large parts externalized. `text`: strings of `textThresholdBytes` or more go
   * to blobs (model requests and responses); otherwise only subtrees over `thresholdBytes`.
   * With compaction off it only escapes user objects that use the marker key (as
   * `escapeMarkers` does for payloads that are never compacted).
   */
  value(value: JsonValue, options: { text: boolean }): JsonValue {
    return this.#walk(value, options.text, true).value;
  }

  #walk(value: JsonValue, text: boolean, top: boolean): { value: JsonValue; size: number } {
    if (typeof value === "string") {
      if (!this.#enabled) return { value, size: value.length + 2 };
      const limit = text ? Math.min(this.#textThreshold, this.#threshold) : this.#threshold;
      if (value.length * 3 < limit) return { value, size: value.length + 2 };
      // Seen before (a history re-sent): no need to measure or hash it again.
      const known = this.#owner.knownRef(value);
      if (known !== undefined && value.length >= limit)
        return { value: marker("text", this.#use(known, value)), size: 90 };
      const bytes = utf8Length(value);
      if (bytes < limit) return { value, size: bytes + 2 };
      const out = marker("text", this.#emit(value));
      return { value: out, size: 90 };
    }
    if (value === null || typeof value !== "object") {
      return { value, size: String(value).length };
    }
    let out: JsonValue;
    let size = 2;
    if (Array.isArray(value)) {
      const items: JsonValue[] = [];
      for (const item of value) {
        const child = this.#walk(item, text, false);
        items.push(child.value);
        size += child.size + 1;
      }
      out = items;
    } else {
      const object: JsonObject = {};
      for (const key of Object.keys(value)) {
        const child = this.#walk(value[key] as JsonValue, text, false);
        setOwn(object, key, child.value);
        size += key.length + 4 + child.size;
      }
      out = Object.hasOwn(value, MARKER_KEY) ? escapeObject(object) : object;
    }
    if (this.#enabled && !top && size > this.#threshold) {
      return { value: marker("json", this.#emit(canonicalJson(out))), size: 90 };
    }
    return { value: out, size };
  }

  /**
   * A model request: its message list (the first array among `messages`, `prompt`, `input`)
   * becomes a list node that extends the previous request's list when this one starts with
   * it; each message is a blob (by the hash of its canonical JSON); long strings anywhere go
   * to blobs; so does any other large subtree.
   */
  request(request: JsonValue): JsonValue {
    if (!this.#enabled || request === null || typeof request !== "object" || Array.isArray(request))
      return this.value(request, { text: true });
    const field = MESSAGE_LIST_FIELDS.find((name) => Array.isArray(request[name]));
    if (field === undefined) return this.value(request, { text: true });
    const messages = request[field] as JsonValue[];
    // Item keys: a blob ref, or the canonical JSON of a message kept inline in the node.
    const stored: JsonValue[] = [];
    const emittedBefore = this.#emitted;
    const items = messages.map((message) => {
      const compacted = this.#walk(message, true, true).value;
      const json = canonicalJson(compacted);
      if (
        json.length <= INLINE_MESSAGE_BYTES &&
        compacted !== null &&
        typeof compacted === "object"
      ) {
        stored.push(compacted);
        return json;
      }
      const ref = this.#emit(json);
      stored.push(ref);
      return ref;
    });
    const last = this.#owner.lastList;
    // Inline only when nothing of the list went to a blob: then there is no put to batch with.
    if (last === undefined && this.#emitted === emittedBefore) {
      let total = 0;
      for (const json of items) total += json.length;
      if (total <= INLINE_LIST_BYTES) {
        this.list = undefined;
        const inline: JsonObject = {};
        for (const key of Object.keys(request)) {
          setOwn(
            inline,
            key,
            key === field ? stored : this.#walk(request[key] as JsonValue, true, false).value,
          );
        }
        return Object.hasOwn(request, MARKER_KEY) ? escapeObject(inline) : inline;
      }
    }
    const extends_ =
      last !== undefined &&
      last.items.length <= items.length &&
      last.items.every((ref, index) => items[index] === ref);
    const node: ListNode = extends_
      ? { prev: last.ref, items: stored.slice(last.items.length) }
      : { prev: null, items: stored };
    const listRef =
      extends_ && node.items.length === 0 ? last.ref : this.#emit(canonicalJson(node as never));
    this.list = { ref: listRef, items };
    // Keep the field order of the request: the list marker where the list was.
    const out: JsonObject = {};
    for (const key of Object.keys(request)) {
      setOwn(
        out,
        key,
        key === field
          ? marker("list", listRef)
          : this.#walk(request[key] as JsonValue, true, false).value,
      );
    }
    return Object.hasOwn(request, MARKER_KEY) ? escapeObject(out) : out;
  }
}

/**
 * Puts an event's new blobs, for the session whose event will name them (retention collects
 * them with it even if that event never commits): one batched call when the store has
 * `putBlobs`. The recorder sends them with the append instead (`AppendRequest.blobs`, one
 * commit); this is for code that compacts with `PayloadCompactor` and appends on its own.
 */
export async function putCompactedBlobs(
  store: EventStore,
  blobs: Map<string, string>,
  sessionId: string,
): Promise<void> {
  if (blobs.size === 0) return;
  const contents = [...blobs.values()];
  const options = { sessionId };
  if (store.putBlobs) await store.putBlobs(contents, options);
  else await Promise.all(contents.map((content) => store.putBlob(content, options)));
}
