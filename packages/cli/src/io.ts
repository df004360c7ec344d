import { stopBeforeNextPage } from "@agent-ledger/core";
import { EXIT_CODES } from "./errors.js";

/** Where a command writes, and what it reads from its environment. Tests pass their own. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Record<string, string | undefined>;
  /** Aborted on SIGINT / SIGTERM: `tail --follow` and `serve` stop cleanly. */
  signal?: AbortSignal;
}

export interface OutputStream {
  write(chunk: string): boolean;
  once?(event: "drain", listener: () => void): unknown;
  isTTY?: boolean;
}

/** Writes and waits for the stream to drain when it asks to (large exports to a pipe). */
export async function writeOut(stream: OutputStream, chunk: string): Promise<void> {
  if (stream.write(chunk) || !stream.once) return;
  await new Promise<void>((resolve) => stream.once?.("drain", resolve));
}

/** Characters gathered before a write: a few syscalls a page, and never V8's longest string. */
export const CHUNK_CHARS = 1 << 20;

/**
 * Writes lines, gathered into chunks of about 1 MiB. A page of events is no unit to gather:
 * resolved, each model request of a long conversation holds the whole conversation, and a page
 * of 1,000 of them is past the longest string V8 makes. With a `signal`, each chunk is written
 * only if it is not aborted (`stopBeforeNextPage`, after a turn of the event loop): once it is,
 * nothing more is, and `line` and `flush` answer false.
 */
export class LineWriter {
  readonly #stream: OutputStream;
  readonly #signal: AbortSignal | undefined;
  #chunk = "";
  #stopped = false;

  constructor(stream: OutputStream, signal?: AbortSignal) {
    this.#stream = stream;
    this.#signal = signal;
  }

  async line(text: string): Promise<boolean> {
    this.#chunk += `${text}\n`;
    return this.#chunk.length >= CHUNK_CHARS ? await this.flush() : !this.#stopped;
  }

  async flush(): Promise<boolean> {
    const chunk = this.#chunk;
    this.#chunk = "";
    if (this.#stopped) return false;
    if (!chunk) return true;
    if (await stopBeforeNextPage(this.#signal)) {
      this.#stopped = true;
      return false;
    }
    await writeOut(this.#stream, chunk);
    return true;
  }
}

/**
 * Says on stderr that `command` was stopped by Ctrl-C or SIGTERM (`agent-ledger export
 * interrupted after 3000 events`), and answers its exit code (130).
 */
export async function interrupted(
  stderr: OutputStream,
  command: string,
  when: string,
): Promise<number> {
  await writeOut(stderr, `agent-ledger: ${command} interrupted ${when}\n`);
  return EXIT_CODES.interrupted;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Says on stderr that a blob an event names is lost (reads show its marker in its place). */
export function warnMissingBlob(stderr: OutputStream, ref: string): void {
  stderr.write(
    `agent-ledger: warning: blob ${ref} named by an event is not in the store; shown as its reference\n`,
  );
}
