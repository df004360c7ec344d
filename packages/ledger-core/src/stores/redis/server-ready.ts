import type { Redis } from "ioredis";

/** The longest wait between two looks at a server loading its data. */
const MAX_LOADING_WAIT_MS = 1000;

/**
 * How long to wait before asking again a server whose `INFO` this is, or undefined when it is
 * ready: one still loading its data from disk (`loading:1`, after a restart) answers each
 * command with a LOADING error; it says how long it expects (`loading_eta_seconds`).
 */
export function loadingWaitMs(info: string): number | undefined {
  if (!/^loading:1\b/m.test(info)) return undefined;
  const eta = Number(/^loading_eta_seconds:(\d+)/m.exec(info)?.[1]);
  return Number.isInteger(eta) && eta > 0 ? Math.min(eta * 1000, MAX_LOADING_WAIT_MS) : 100;
}

/** `INFO`'s fields by name, as ioredis hands them to its connector (a sentinel's checks `role`). */
function infoFields(info: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of info.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0 && at < line.length - 1) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

type ReadyCheck = (callback: (error: Error | null, info?: object) => void) => void;

/**
 * Makes the ready check of a client the store made quiet for a user the server refuses INFO.
 * ioredis' own (its private `_readyCheck`, run on each connection before a command is sent)
 * waits while the server loads its data, and for a user without +info (a reader's ACL needs
 * none: the store reads no more than the server's version with it) goes on, printing "Skipping
 * the ready check" on stderr, in the CLI and in an application alike. This one does the same
 * without the warning. Not `enableReadyCheck: false`: ioredis then marks the client ready when
 * a connection closes before its handshake replies, and a recorder's call made while the
 * server is silent waits for ever.
 */
export function quietReadyCheck(client: Redis): void {
  const check: ReadyCheck = (callback) => {
    client.info().then(
      (info) => {
        const wait = loadingWaitMs(info);
        if (wait === undefined) callback(null, infoFields(info));
        else setTimeout(() => check(callback), wait);
      },
      (error: Error) => {
        if (error.message?.startsWith("NOPERM")) callback(null, {});
        else callback(error);
      },
    );
  };
  (client as unknown as { _readyCheck: ReadyCheck })._readyCheck = check;
}
