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
const CHUNK_CHARS = 1 << 20;

/**
 * Writes lines, gathered into chunks of about 1 MiB. A page of events is no unit to gather:
 * resolved, each model request of a long conversation holds the whole conversation, and a page
 * of 1,000 of them is past the longest string V8 makes.
 */
export class LineWriter {
  readonly #stream: OutputStream;
  #chunk = "";

  constructor(stream: OutputStream) {
    this.#stream = stream;
  }

  async line(text: string): Promise<void> {
    this.#chunk += `${text}\n`;
    if (this.#chunk.length >= CHUNK_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    const chunk = this.#chunk;
    this.#chunk = "";
    if (chunk) await writeOut(this.#stream, chunk);
  }
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
