/**
 * A shell-safe rendering of an argument for a command agent-ledger prints (the CLI's `resolve`
 * hints, an adapter's refusal that names the command deciding a call). A value holding a
 * character a terminal must not show raw (an id may hold a bidi override) is written in ANSI-C
 * quotes (`$'pay\u202erun'`, bash and zsh): the command shows escapes, and pasted it passes the
 * exact value. Escaping such a command for the terminal afterwards would change the value it names.
 */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(value)) return value;
  if (!NOT_SHOWN_RAW.test(value)) return `'${value.replace(/'/g, "'\\''")}'`;
  return `$'${value.replace(/[\\']/g, "\\$&").replace(NOT_SHOWN_RAW_ALL, escapeCharacter)}'`;
}

// C0 and C1 controls (ESC starts ANSI and OSC sequences, U+009B is a one-byte CSI), newlines
// among them, and the invisible direction controls: the embeddings, overrides and isolates that
// reorder what follows them, and the marks (U+061C ALM, U+200E LRM, U+200F RLM) that move the
// neutral characters beside them. A value holding one is written in ANSI-C quotes, so that a
// terminal-safe rendering of the line around it leaves the command as it is.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we escape
const NOT_SHOWN_RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const NOT_SHOWN_RAW_ALL = new RegExp(NOT_SHOWN_RAW.source, "g");

function escapeCharacter(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
