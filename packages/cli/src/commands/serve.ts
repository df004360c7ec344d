import { usageError } from "../errors.js";
import { writeOut } from "../io.js";
import { sessionHasEvents } from "../store.js";
import { commandStoreOptions } from "../store-url.js";
import { reachableUrls } from "../viewer/reachable-urls.js";
import { isLoopbackHost } from "../viewer/security.js";
import { startViewer } from "../viewer/viewer-server.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { idArgument, MAX_TIMER_MS, numberOption } from "./session-args.js";

export const serveHelp = `agent-ledger serve [--port <n>] [--host <address>] [--token <secret>] [--session <id>] [--poll-ms <ms>]
  Read-only web viewer. Binds 127.0.0.1 on a free port unless told otherwise and prints the
  URL. Binding any other address is refused without --token (or AGENT_LEDGER_VIEWER_TOKEN;
  at least 8 characters); with a token every request must carry it (the printed URL does).
  The page's resolve commands name the store as inspect's do (a password in it shown as ***;
  one from $AGENT_LEDGER_STORE left to the environment). Bound to every address (--host
  0.0.0.0 or ::), it prints the URL with the machine's name, and with each of its addresses.
  Ctrl-C or SIGTERM stops it (exit 0).`;

export async function serveCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs("serve", {
    args: context.args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      session: { type: "string" },
      "poll-ms": { type: "string" },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0)
    throw usageError(
      "usage: agent-ledger serve [--port <n>] [--host <address>] [--token <secret>]",
    );
  idArgument(values.session, "--session");
  // Number("") is 0: an empty --port (an unset variable) bound a port of the system's choice.
  const port =
    values.port === undefined ? 0 : /^\d{1,5}$/.test(values.port) ? Number(values.port) : -1;
  if (port < 0 || port > 65535)
    throw usageError(`--port must be a whole number 0..65535, not ${JSON.stringify(values.port)}`);
  const pollMs = numberOption("poll-ms", values["poll-ms"], 1000, 50, MAX_TIMER_MS);
  const token = values.token ?? context.io.env.AGENT_LEDGER_VIEWER_TOKEN;
  if (token !== undefined && token.length < 8)
    throw usageError(
      // The token may come from the environment: name where the short one came from.
      `${values.token === undefined ? "$AGENT_LEDGER_VIEWER_TOKEN" : "--token"} must be at least 8 characters`,
    );
  // Refuse a bad bind before touching the store.
  const host = values.host ?? "127.0.0.1";
  if (!isLoopbackHost(host) && !token)
    throw usageError(
      `refusing to serve on ${host} without --token: the ledger holds prompts, tool arguments and results`,
      "bind 127.0.0.1 (the default), or pass --token <secret> and share the printed URL",
    );
  if (!isLoopbackHost(host))
    context.io.stderr.write(
      `agent-ledger: warning: serving on ${host} over plain HTTP: the token and what the ledger holds cross the network unencrypted\n  put it behind a TLS proxy, or keep the default 127.0.0.1 and reach it through an SSH tunnel (ssh -L)\n`,
    );
  const store = await context.openStore();
  // The page names the store in its commands as inspect does: one from the environment not at
  // all (the command run there finds it), any other with its password as ***.
  let viewer: Awaited<ReturnType<typeof startViewer>>;
  try {
    viewer = await startViewer({
      store,
      host,
      port,
      pollMs,
      ...commandStoreOptions(context),
      ...(token ? { token } : {}),
    });
  } catch (error) {
    // An address it cannot listen on is the command's (exit 2), not the store's (exit 4).
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "string" && LISTEN_ERRORS.includes(code))
      throw usageError(
        `cannot listen on ${host}:${port}: ${code}`,
        code === "EADDRINUSE"
          ? "another program has the port: pick another --port, or leave it out for a free one"
          : "give --host an address of this machine",
      );
    throw error;
  }
  if (values.session !== undefined && !(await sessionHasEvents(store, values.session)))
    context.io.stderr.write(
      `agent-ledger: warning: no session ${JSON.stringify(values.session)} in the store (yet): its page waits for its first events and shows the session once they come\n`,
    );
  // Bound to every address (0.0.0.0), the URL names the machine and its addresses: one that
  // names 0.0.0.0 opens nothing on a colleague's machine.
  const reachable = reachableUrls(viewer.url, host);
  const lines = [`agent-ledger viewer on ${reachable.url}`];
  if (reachable.said !== undefined) lines.push(reachable.said);
  for (const other of reachable.others) lines.push(`  ${other}`);
  if (values.session !== undefined)
    lines.push(`session: ${reachableUrls(viewer.sessionUrl(values.session), host).url}`);
  lines.push("(read-only; Ctrl-C to stop)");
  await writeOut(context.io.stdout, `${lines.join("\n")}\n`);
  await new Promise<void>((resolve) => {
    if (!context.io.signal) return;
    if (context.io.signal.aborted) return resolve();
    context.io.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await viewer.close();
  return 0;
}

/** What listening on an address a person gave can fail with. */
const LISTEN_ERRORS = [
  "EADDRINUSE",
  "EADDRNOTAVAIL",
  "EACCES",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
];
