import { shellQuote } from "@agent-ledger/core";

/** "12 ms", "1.4 s", "3 m 04 s", "2 h 05 m". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, "0")} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} m`;
}

/** "1 run", "2 runs": a count and its noun, singular for one. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** "1 byte", "1023 bytes", "1.5 KiB (1536 bytes)", up to GiB: the exact count stays. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return counted(bytes, "byte");
  const [size, unit] =
    bytes < 1024 ** 2
      ? [bytes / 1024, "KiB"]
      : bytes < 1024 ** 3
        ? [bytes / 1024 ** 2, "MiB"]
        : [bytes / 1024 ** 3, "GiB"];
  return `${size.toFixed(1)} ${unit} (${bytes} bytes)`;
}

/** One line of a JSON value, cut to `max` characters. */
export function preview(value: unknown, max = 60): string {
  if (value === undefined || value === null) return "";
  let text = typeof value === "string" ? value : JSON.stringify(value);
  text = text.replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// One quoting for every command agent-ledger prints, the adapters' included: core's.
export { shellQuote };

// C0 and C1 controls (ESC starts ANSI and OSC sequences, U+009B is a one-byte CSI) and the
// invisible direction controls: the embeddings, overrides and isolates that reorder what
// follows them, and the marks (U+061C ALM, U+200E LRM, U+200F RLM) that move the neutral
// characters beside them. Newlines are matched apart.
const TERMINAL_UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we escape
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
function escapeCharacter(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * A line of text from the ledger as a terminal may show it: every control character (a newline
 * too) written as `\uXXXX`, so a tool result cannot move the cursor, set the title, write the
 * clipboard or forge a line.
 */
export function terminalLine(text: string): string {
  return text.replace(TERMINAL_UNSAFE, escapeCharacter).replace(/\n/g, "\\u000a");
}

/**
 * JSON text for a terminal: JSON.stringify leaves C1 and bidi controls raw inside strings;
 * written as `\uXXXX` escapes they read back as the same value.
 */
export function terminalJson(json: string): string {
  return json.replace(TERMINAL_UNSAFE, escapeCharacter);
}
