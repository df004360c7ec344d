import { assertOneOf, assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { canonicalJson } from "../events/canonical.js";
import { NotFoundError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { MESSAGE_LIST_FIELDS } from "./externalize.js";
import { asEscape, asMarker, type ListNode, setOwn } from "./marker.js";

const decoder = new TextDecoder();

/**
 * Blobs fetched and values materialized while resolving, shared across calls (pass the same
 * cache to resolve many events: a message stored once is fetched and parsed once). Resolved
 * values may share structure (the same message object in several requests): treat them as
 * read-only, or copy before changing them. A cache used with `missingBlobs: "keep"` holds
 * values with kept markers: give a strict reader a cache of its own.
 */
export class BlobCache {
  readonly bytes = new Map<string, Uint8Array>();
  readonly texts = new Map<string, string>();
  readonly values = new Map<string, JsonValue>();
  readonly lists = new Map<string, JsonValue[]>();
  /** Refs named by events whose blobs are not in the store (filled when `missingBlobs: "keep"`). */
  readonly missing = new Set<string>();
}

export interface ResolveOptions {
  cache?: BlobCache;
  /**
   * What a reference to a blob that is not in the store does (default `"throw"`: `not-found`).
   * `"keep"` leaves that marker in place, as stored, and adds its ref to `cache.missing`, so a
   * reader can still show everything else and say what is lost.
   */
  missingBlobs?: "throw" | "keep";
}

const RESOLVE_OPTIONS: KnownKeys<ResolveOptions> = { cache: true, missingBlobs: true };

/**
 * Checks the options of resolvePayload / resolveEvents: `missingBlobs: "kep"` was read as
 * "throw", and a misspelt key dropped without a word.
 */
function assertResolveOptions(options: ResolveOptions, call: string): void {
  assertOptions(options, RESOLVE_OPTIONS, call, { keysAt: "$" });
  assertOneOf(options.missingBlobs, "$.missingBlobs", ["throw", "keep"]);
}

/** Fetches the refs not in the cache, in one batch when the store has `getBlobs`. */
async function fetchBlobs(store: EventStore, cache: BlobCache, refs: Iterable<string>) {
  const missing = [...new Set(refs)].filter(
    (ref) => !cache.bytes.has(ref) && !cache.missing.has(ref),
  );
  if (missing.length === 0) return;
  if (store.getBlobs) {
    const found = await store.getBlobs(missing);
    for (const [ref, bytes] of found) cache.bytes.set(ref, bytes);
  } else {
    await Promise.all(
      missing.map(async (ref) => {
        try {
          cache.bytes.set(ref, await store.getBlob(ref));
        } catch (error) {
          if (!(error as { code?: string }).code?.includes("not-found")) throw error;
        }
      }),
    );
  }
}

/**
 * Checks that the blobs `refs` name are in the store (fetching them into the cache): a missing
 * one is `not-found`, or with `missingBlobs: "keep"` added to `cache.missing`. For a reader
 * that resolves only part of what it read but must still say what is lost.
 */
export async function checkBlobs(
  store: EventStore,
  refs: ReadonlySet<string>,
  options: ResolveOptions & { cache: BlobCache },
): Promise<void> {
  const { cache } = options;
  await fetchBlobs(store, cache, refs);
  for (const ref of refs) {
    if (cache.bytes.has(ref)) continue;
    // A missing blob is not-found (or, kept, never asked for again).
    if (options.missingBlobs !== "keep") bytesOf(cache, ref);
    cache.missing.add(ref);
  }
}

/**
 * The events whose payloads hold markers, and the blobs they name (`evidenceRefs`): what
 * resolving them reads. An event without markers (an evidence record's attachments, say) is
 * not read.
 */
export function markedEvents(events: readonly LedgerEvent[]): {
  marked: LedgerEvent[];
  refs: Set<string>;
} {
  const marked: LedgerEvent[] = [];
  const refs = new Set<string>();
  for (const event of events) {
    if (!hasMarkers(event.payload)) continue;
    marked.push(event);
    for (const ref of event.evidenceRefs ?? []) refs.add(ref);
  }
  return { marked, refs };
}

function bytesOf(cache: BlobCache, ref: string): Uint8Array {
  const bytes = cache.bytes.get(ref);
  if (bytes === undefined)
    throw new NotFoundError(`blob ${ref} named by an event is not in the store`, { ref });
  return bytes;
}

function parsed(cache: BlobCache, ref: string): JsonValue {
  return JSON.parse(decoder.decode(bytesOf(cache, ref))) as JsonValue;
}

/** Refs reachable from `value` whose blobs are not fetched yet (one level). */
function pendingRefs(
  cache: BlobCache,
  value: JsonValue,
  out: Set<string>,
  visited: Set<string>,
): void {
  if (value === null || typeof value !== "object") return;
  const found = asMarker(value);
  if (found) {
    // Each blob is scanned once per round, however many events or lists name it.
    if (visited.has(found.ref) || cache.missing.has(found.ref)) return;
    visited.add(found.ref);
    if (!cache.bytes.has(found.ref)) {
      out.add(found.ref);
      return;
    }
    if (found.$ledger === "text") return;
    if (found.$ledger === "list") {
      if (cache.lists.has(found.ref)) return;
      const node = parsed(cache, found.ref) as unknown as ListNode;
      if (node.prev !== null) pendingRefs(cache, { $ledger: "list", ref: node.prev }, out, visited);
      for (const item of node.items) pendingRefs(cache, listItem(item), out, visited);
      return;
    }
    if (cache.values.has(found.ref)) return;
    pendingRefs(cache, parsed(cache, found.ref), out, visited);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) pendingRefs(cache, item, out, visited);
    return;
  }
  // An escaped user object: its own fields are data, never a marker.
  const source = asEscape(value) ?? value;
  for (const key of Object.keys(source)) pendingRefs(cache, source[key] as JsonValue, out, visited);
}

/** Fetches everything `values` reach, level by level (each level one batch). */
async function prefetch(
  store: EventStore,
  cache: BlobCache,
  values: JsonValue[],
  keepMissing: boolean,
): Promise<void> {
  for (;;) {
    const refs = new Set<string>();
    const visited = new Set<string>();
    for (const value of values) pendingRefs(cache, value, refs, visited);
    if (refs.size === 0) return;
    // A missing blob goes to `missing` (or throws): never asked for again, not a loop.
    await checkBlobs(store, refs, { cache, missingBlobs: keepMissing ? "keep" : "throw" });
  }
}

/** A list item as a value to resolve: a ref string names a message blob. */
function listItem(item: JsonValue): JsonValue {
  return typeof item === "string" ? { $ledger: "json", ref: item } : item;
}

function materialize(cache: BlobCache, value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object") return value;
  const found = asMarker(value);
  if (found) {
    const { ref } = found;
    // Only a reader that asked to keep them gets here with refs in `missing` (prefetch threw).
    if (cache.missing.has(ref)) return value;
    if (found.$ledger === "text") {
      let text = cache.texts.get(ref);
      if (text === undefined) {
        text = decoder.decode(bytesOf(cache, ref));
        cache.texts.set(ref, text);
      }
      return text;
    }
    if (found.$ledger === "list") return materializeList(cache, ref);
    let resolved = cache.values.get(ref);
    if (resolved === undefined) {
      resolved = materialize(cache, parsed(cache, ref));
      cache.values.set(ref, resolved);
    }
    return resolved;
  }
  if (Array.isArray(value)) return value.map((item) => materialize(cache, item));
  const escaped = asEscape(value);
  const source = escaped ?? value;
  const out: JsonObject = {};
  for (const key of Object.keys(source))
    setOwn(out, key, materialize(cache, source[key] as JsonValue));
  return out;
}

function materializeList(cache: BlobCache, ref: string): JsonValue[] {
  const cached = cache.lists.get(ref);
  if (cached) return cached.slice();
  // Walk back to the nearest materialized list (or the root) without recursion.
  const chain: ListNode[] = [];
  let base: JsonValue[] = [];
  let cursor: string | null = ref;
  const refs: string[] = [];
  while (cursor !== null) {
    const known = cache.lists.get(cursor);
    if (known) {
      base = known;
      break;
    }
    if (cache.missing.has(cursor)) {
      // The lost node stands for every message it and its ancestors held: kept as its marker.
      base = [{ $ledger: "list", ref: cursor }];
      break;
    }
    const node = parsed(cache, cursor) as unknown as ListNode;
    chain.push(node);
    refs.push(cursor);
    cursor = node.prev;
  }
  let list = base;
  for (let index = chain.length - 1; index >= 0; index--) {
    const node = chain[index] as ListNode;
    list = list.concat(node.items.map((item) => materialize(cache, listItem(item))));
    cache.lists.set(refs[index] as string, list);
  }
  return list.slice();
}

/**
 * A payload with every blob reference (§8 markers: text, json, list) replaced by its content,
 * and escaped user objects restored. Values without markers come back unchanged.
 */
export async function resolvePayload(
  store: EventStore,
  value: JsonValue,
  options: ResolveOptions = {},
): Promise<JsonValue> {
  assertResolveOptions(options, "resolvePayload");
  const cache = options.cache ?? new BlobCache();
  await prefetch(store, cache, [value], options.missingBlobs === "keep");
  return materialize(cache, value);
}

/**
 * Events with their payloads resolved (`resolvePayload`), everything else as stored. The
 * blobs the events name in `evidenceRefs` are fetched first in one batch, so a whole run
 * usually resolves in one or two round trips. Store reads (`readRun`, `readSession`) return
 * events verbatim; call this where content is needed (inspection, replay, projections).
 */
export async function resolveEvents(
  store: EventStore,
  events: readonly LedgerEvent[],
  options: ResolveOptions = {},
): Promise<LedgerEvent[]> {
  assertResolveOptions(options, "resolveEvents");
  const cache = options.cache ?? new BlobCache();
  // One cheap walk finds the payloads that hold markers; only those are prefetched and
  // rebuilt. Most events of a long session (tool calls, small requests) have none, and
  // inspection of 100k events should cost little more than reading them.
  const { marked, refs } = markedEvents(events);
  if (marked.length === 0) return events.slice();
  if (refs.size > 0) await fetchBlobs(store, cache, refs);
  await prefetch(
    store,
    cache,
    marked.map((event) => event.payload),
    options.missingBlobs === "keep",
  );
  const withMarkers = new Set(marked);
  return events.map((event) =>
    withMarkers.has(event) ? { ...event, payload: materialize(cache, event.payload) } : event,
  );
}

function hasMarkers(value: JsonValue): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (hasMarkers(value[index] as JsonValue)) return true;
    }
    return false;
  }
  if (Object.hasOwn(value, "$ledger")) return true;
  for (const key in value) {
    const item = value[key];
    if (item !== null && typeof item === "object" && hasMarkers(item)) return true;
  }
  return false;
}

/**
 * The message list named by the last `model.requested` of some stored (unresolved) events, as
 * `{ ref, items }` (items: every message ref, oldest first), so a resumed recorder's next
 * request extends it instead of starting a new root. Undefined when there is none.
 */
export async function lastListOf(
  store: EventStore,
  events: readonly LedgerEvent[],
  options: ResolveOptions = {},
): Promise<{ ref: string; items: string[] } | undefined> {
  const cache = options.cache ?? new BlobCache();
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index] as LedgerEvent;
    if (event.type !== "model.requested") continue;
    const payload = event.payload as JsonObject | null;
    const stored = payload?.request;
    if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return undefined;
    // A request with a `$ledger` key of its own is stored escaped, its list marker inside.
    const request = asEscape(stored) ?? stored;
    const field = MESSAGE_LIST_FIELDS.find((name) => request[name] !== undefined);
    const found = field === undefined ? undefined : asMarker(request[field] as JsonValue);
    if (found?.$ledger !== "list") return undefined;
    const nodes: ListNode[] = [];
    for (let cursor: string | null = found.ref; cursor !== null; ) {
      await fetchBlobs(store, cache, [cursor]);
      const node = parsed(cache, cursor) as unknown as ListNode;
      nodes.push(node);
      cursor = node.prev;
    }
    const items = nodes
      .reverse()
      .flatMap((node) =>
        node.items.map((item) => (typeof item === "string" ? item : canonicalJson(item))),
      );
    return { ref: found.ref, items };
  }
  return undefined;
}
