import { stopBeforeNextPage } from "@agent-ledger/core";
import { CHUNK_CHARS, type OutputStream, writeOut } from "./io.js";

/** How `jsonChunks` and `writeJson` write a value. */
export interface JsonTextOptions {
  /**
   * True: as `JSON.stringify(value)`, without whitespace (the viewer's answers: indented, the
   * text of a chain of 5,000 child runs is gigabytes of spaces). Default: as
   * `JSON.stringify(value, null, 2)`.
   */
  compact?: boolean;
  /**
   * Applied to the JSON text of each string, keys and values (quotes included; a string longer
   * than a chunk in parts): format.ts's `terminalJson` for text a terminal shows. It must
   * change no `"` nor leave a raw control character.
   */
  escapeStrings?: (json: string) => string;
}

export interface WriteJsonOptions extends JsonTextOptions {
  /** Checked before each chunk (`stopBeforeNextPage`): once aborted, nothing more is written. */
  signal?: AbortSignal;
}

/**
 * Writes `value` to `stream` as `JSON.stringify(value, null, 2)` would give it (`compact`:
 * `JSON.stringify(value)`), byte for byte (key order, indentation, escapes, `toJSON`, members
 * that are undefined or functions left out of objects and written as `null` in arrays),
 * without ever making that text: a session's document is past the longest string V8 makes
 * long before it is past memory. Chunks of at most about 1 MiB are written as the stream takes
 * them; a string longer than that goes in parts of its own, never split inside a surrogate
 * pair. The tree is walked with a stack of its own, so no depth of nesting overflows the call
 * stack (JSON.stringify fails at about 4,000 levels on Node's default stack: the ATIF
 * trajectory of a chain of 2,000 child runs). Like JSON.stringify, it throws a TypeError on a
 * cycle or a BigInt; what came before is written by then. Resolves true once the whole value
 * is written, false when `signal` stopped it first. A value JSON.stringify makes no text of
 * (undefined, a function) writes nothing.
 */
export async function writeJson(
  stream: OutputStream,
  value: unknown,
  options: WriteJsonOptions = {},
): Promise<boolean> {
  for (const chunk of jsonChunks(value, options)) {
    if (await stopBeforeNextPage(options.signal)) return false;
    await writeOut(stream, chunk);
  }
  return true;
}

const GAP = "  ";

/** Indentations of the first levels, made once: those of deeper levels are made per level. */
const INDENTS = Array.from({ length: 64 }, (_, depth) => GAP.repeat(depth));

function indentation(depth: number): string {
  return INDENTS[depth] ?? GAP.repeat(depth);
}

/** An object or array being written: its members (keys, or indexes up to `length`) in turn. */
interface ContainerFrame {
  kind: "container";
  holder: object;
  /** The object's own enumerable keys as JSON.stringify takes them; undefined for an array. */
  keys: string[] | undefined;
  length: number;
  next: number;
  /** Its depth: its members are indented one level more. */
  depth: number;
  /** Indentation of its members. */
  indent: string;
  /** A member was written (and with it the opening bracket). */
  opened: boolean;
}

/** A string longer than a chunk, written in parts: the next starts at `start`. */
interface StringFrame {
  kind: "string";
  text: string;
  start: number;
}

/**
 * What JSON.stringify writes for `value` as the member `key`: its `toJSON(key)` when it has
 * one, a Number, String or Boolean object as its primitive.
 */
function serialized(value: unknown, key: string): unknown {
  if (
    (typeof value === "object" && value !== null) ||
    typeof value === "function" ||
    typeof value === "bigint"
  ) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) return value;
  if (value instanceof Number) return Number(value);
  if (value instanceof String) return String(value);
  if (value instanceof Boolean) return value.valueOf();
  if (value instanceof BigInt) return value.valueOf();
  return value;
}

/** The text of a value that is not an object; undefined for one JSON.stringify leaves out. */
function primitiveText(value: unknown): string | undefined {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
    case "object":
      return "null";
    default:
      return undefined;
  }
}

/**
 * The next part of a string written in parts: the escape of a slice of about a chunk that
 * splits no surrogate pair (a lone surrogate is escaped as it is in the whole), with the quote
 * that opens or closes it.
 */
function nextPart(frame: StringFrame, quote: (text: string) => string): string {
  const { text, start } = frame;
  let end = Math.min(start + CHUNK_CHARS, text.length);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) {
    const following = text.charCodeAt(end);
    if (following >= 0xdc00 && following <= 0xdfff) end--;
  }
  frame.start = end;
  const part = quote(text.slice(start, end)).slice(1, -1);
  return `${start === 0 ? '"' : ""}${part}${end === text.length ? '"' : ""}`;
}

/**
 * The text `writeJson` writes of `root`, in chunks of at most about CHUNK_CHARS (a string
 * longer than that in parts, each a chunk or in one), made as they are taken and walked
 * without recursion: a response body (the viewer's `Readable.from`) as well as a stream.
 */
export function* jsonChunks(
  root: unknown,
  options: JsonTextOptions = {},
): Generator<string, void, undefined> {
  const { escapeStrings } = options;
  // What stands between members, and before a member and its container's end: JSON.stringify
  // without a gap writes no line breaks and no space after a key's colon.
  const newline = options.compact ? "" : "\n";
  const afterMember = `,${newline}`;
  const openArray = `[${newline}`;
  const openObject = `{${newline}`;
  const colon = options.compact ? ":" : ": ";
  const indentOf = options.compact ? () => "" : indentation;
  const quote =
    escapeStrings === undefined
      ? (text: string) => JSON.stringify(text)
      : (text: string) => escapeStrings(JSON.stringify(text));
  // A document repeats its keys: each short one quoted once (a bounded number of them). The
  // quoted key alone: a cached `"key": ` is a rope every piece shares, three times slower.
  const quotedKeys = new Map<string, string>();
  const quoteKey = (key: string): string => {
    let quoted = quotedKeys.get(key);
    if (quoted !== undefined) return quoted;
    quoted = quote(key);
    if (key.length <= 64 && quotedKeys.size < 10_000) quotedKeys.set(key, quoted);
    return quoted;
  };
  const stack: (ContainerFrame | StringFrame)[] = [];
  // The objects and arrays being written (those on the stack): one met again inside itself is
  // a cycle.
  const open = new Set<object>();
  // The text of a value, with what it needs pushed: an object or array ("", its members to
  // come), a string longer than a chunk ("", its parts to come); undefined: left out.
  const enter = (value: unknown, depth: number): string | undefined => {
    if (typeof value === "string") {
      if (value.length <= CHUNK_CHARS) return quote(value);
      stack.push({ kind: "string", text: value, start: 0 });
      return "";
    }
    if (typeof value !== "object" || value === null) return primitiveText(value);
    if (open.has(value)) throw new TypeError("Converting circular structure to JSON");
    open.add(value);
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    const length = keys === undefined ? (value as unknown[]).length : keys.length;
    const indent = indentOf(depth + 1);
    stack.push({
      kind: "container",
      holder: value,
      keys,
      length,
      next: 0,
      depth,
      indent,
      opened: false,
    });
    return "";
  };

  // Gathered with `+=`: V8 makes a rope of the pieces and copies it once, when it is written
  // (four times faster than pieces in an array joined).
  let chunk = "";
  let piece = enter(serialized(root, ""), 0) ?? "";
  for (;;) {
    // At most a chunk gathered; a piece past that (a long string's) goes alone.
    if (chunk.length + piece.length > CHUNK_CHARS && chunk.length > 0) {
      yield chunk;
      chunk = "";
    }
    if (piece.length < CHUNK_CHARS) chunk += piece;
    else yield piece;

    const frame = stack[stack.length - 1];
    if (frame === undefined) break;
    if (frame.kind === "string") {
      piece = nextPart(frame, quote);
      if (frame.start === frame.text.length) stack.pop();
      continue;
    }
    const { keys } = frame;
    if (frame.next === frame.length) {
      stack.pop();
      open.delete(frame.holder);
      const close = keys === undefined ? "]" : "}";
      if (frame.opened) piece = `${newline}${indentOf(frame.depth)}${close}`;
      else piece = keys === undefined ? "[]" : "{}";
      continue;
    }
    const index = frame.next++;
    const key = keys === undefined ? String(index) : (keys[index] as string);
    let member = serialized((frame.holder as Record<string, unknown>)[key], key);
    if (member === undefined || typeof member === "function" || typeof member === "symbol") {
      piece = "";
      if (keys !== undefined) continue;
      member = null;
    }
    const separator = frame.opened ? afterMember : keys === undefined ? openArray : openObject;
    frame.opened = true;
    const text = enter(member, frame.depth + 1) as string;
    piece =
      keys === undefined
        ? `${separator}${frame.indent}${text}`
        : `${separator}${frame.indent}${quoteKey(key)}${colon}${text}`;
  }
  if (chunk.length > 0) yield chunk;
}
