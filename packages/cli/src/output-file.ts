import { randomBytes } from "node:crypto";
import { createWriteStream, rmSync, type WriteStream } from "node:fs";
import { chmod, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { CliError, EXIT_CODES } from "./errors.js";

/** A file being written: `commit` puts it in place, `discard` leaves what was there. */
export interface OutputFile {
  stream: WriteStream;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * `--output` that cannot be written, named by the user's `path`: the system's message names the
 * `temporary` file written first beside it, which the user never asked for.
 */
function cannotWrite(path: string, error: unknown, temporary?: string): CliError {
  const said = (error as Error).message;
  return new CliError({
    code: "invalid-argument",
    message: `cannot write ${path}: ${temporary === undefined ? said : said.replaceAll(temporary, path)}`,
    exitCode: EXIT_CODES.usage,
    cause: error,
  });
}

function endStream(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

async function opened(stream: WriteStream, path: string, temporary?: string): Promise<WriteStream> {
  try {
    await new Promise<void>((resolve, reject) => {
      stream.once("open", () => resolve());
      stream.once("error", reject);
    });
  } catch (error) {
    throw cannotWrite(path, error, temporary);
  }
  return stream;
}

/** True while process `pid` runs on this host (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the temporary files that exports to `target` left when their process died before it
 * could (SIGKILL, a lost machine): those whose process (the pid in the name) is gone. Those of
 * a process that runs (another export to the same path at this moment) are its own.
 */
async function removeStaleTemporaries(target: string): Promise<void> {
  const directory = dirname(target);
  const prefix = `.${basename(target)}.`;
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    await rm(join(directory, name), { force: true });
  }
}

/**
 * Opens `--output` so that a failed export (a lost blob, a store gone mid-way) leaves the file
 * that was there as it was: the export goes to a temporary file beside it, renamed into place
 * on `commit` (same directory, so the rename is atomic) and removed on `discard`, or when the
 * process exits first (a second Ctrl-C). One that a killed export left is removed by the next
 * export to the same path. A path that is not a regular file (`/dev/stdout`, a FIFO) cannot be
 * replaced: it is written directly. Failing to open answers exit 2 with the path, not an
 * unhandled stream error.
 */
export async function openOutputFile(path: string): Promise<OutputFile> {
  // Through a symlink: the file it points at is replaced, the link stays.
  const target = await realpath(path).catch(() => path);
  const existing = await stat(target).catch(() => undefined);
  if (existing !== undefined && !existing.isFile()) {
    const stream = await opened(createWriteStream(target), path);
    return { stream, commit: () => endStream(stream), discard: () => endStream(stream) };
  }
  await removeStaleTemporaries(target);
  const temporary = join(
    dirname(target),
    `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  // `wx`: never through a file someone else put at that name.
  const stream = await opened(createWriteStream(temporary, { flags: "wx" }), path, temporary);
  const removeAtExit = () => rmSync(temporary, { force: true });
  process.once("exit", removeAtExit);
  // Until the temporary is renamed or removed: an exit in between (a second Ctrl-C) removes it.
  const settled = () => process.removeListener("exit", removeAtExit);
  return {
    stream,
    async commit() {
      try {
        await endStream(stream);
        if (existing !== undefined) await chmod(temporary, existing.mode & 0o7777);
        await rename(temporary, target);
      } catch (error) {
        await rm(temporary, { force: true });
        throw cannotWrite(path, error, temporary);
      } finally {
        settled();
      }
    },
    async discard() {
      await endStream(stream).catch(() => undefined);
      await rm(temporary, { force: true });
      settled();
    },
  };
}
