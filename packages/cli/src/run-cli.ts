import type { EventStore } from "@agent-ledger/core";
import { collectBlobsCommand, collectBlobsHelp } from "./commands/collect-blobs.js";
import type { CommandContext } from "./commands/context.js";
import { deleteCommand, deleteHelp } from "./commands/delete.js";
import { exportCommand, exportHelp } from "./commands/export.js";
import { inspectCommand, inspectHelp } from "./commands/inspect.js";
import { pruneCommand, pruneHelp } from "./commands/prune.js";
import { resolveCommand, resolveHelp } from "./commands/resolve.js";
import { serveCommand, serveHelp } from "./commands/serve.js";
import { sessionsCommand, sessionsHelp } from "./commands/sessions.js";
import { tailCommand, tailHelp } from "./commands/tail.js";
import { upgradeCommand, upgradeHelp } from "./commands/upgrade.js";
import { verifyCommand, verifyHelp } from "./commands/verify.js";
import { CliError, EXIT_CODES, exitCodeOf, refusedMidCommand, usageError } from "./errors.js";
import { terminalJson } from "./format.js";
import type { CliIo } from "./io.js";
import { DEFAULT_STORE_URL, openCliStore, resolveStoreUrl } from "./store.js";

const commands: Record<
  string,
  { run: (context: CommandContext) => Promise<number>; help: string; summary: string }
> = {
  sessions: { run: sessionsCommand, help: sessionsHelp, summary: "list the sessions in the store" },
  inspect: {
    run: inspectCommand,
    help: inspectHelp,
    summary: "a session's run tree, its unresolved calls and what to do about them",
  },
  tail: { run: tailCommand, help: tailHelp, summary: "print (or follow) a session's events" },
  export: {
    run: exportCommand,
    help: exportHelp,
    summary: "a session as jsonl, ATIF or OTLP/JSON",
  },
  verify: {
    run: verifyCommand,
    help: verifyHelp,
    summary: "check a session's hash chains and blobs (or --all)",
  },
  resolve: {
    run: resolveCommand,
    help: resolveHelp,
    summary: "decide an unresolved call: abandon or approve it",
  },
  serve: { run: serveCommand, help: serveHelp, summary: "the web viewer" },
  delete: { run: deleteCommand, help: deleteHelp, summary: "delete a session for good" },
  prune: {
    run: pruneCommand,
    help: pruneHelp,
    summary: "delete the sessions older than an age or a time",
  },
  "collect-blobs": {
    run: collectBlobsCommand,
    help: collectBlobsHelp,
    summary: "delete the blobs no session references",
  },
  upgrade: {
    run: upgradeCommand,
    help: upgradeHelp,
    summary: "upgrade a ledger an older release made",
  },
};

// Own names only: "constructor" is no command.
function commandNamed(name: string | undefined) {
  return name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined;
}

export const HELP = `agent-ledger: inspect, verify, export and view agent-ledger sessions, and delete them;
upgrade a ledger an older release made (no other command changes its schema)

usage: agent-ledger [--store <url>] <command> [options]
       agent-ledger help <command>

commands:
${Object.values(commands)
  .map((command) => command.help.replace(/^/gm, "  "))
  .join("\n")}

store: --store <url>, else $AGENT_LEDGER_STORE, else ${DEFAULT_STORE_URL}
  (sqlite:<path>, postgres://..., mysql://..., redis://...)
  $AGENT_LEDGER_CONNECT_TIMEOUT_MS: how long to wait for a store server (default 10000)

exit codes:
  0  success
  1  verify found tampering, the ledger is an older release's (run agent-ledger upgrade), or
     the command failed (message on stderr)
  2  bad usage: unknown command or option, bad store URL (or a user or password the server
     refused), non-loopback bind without --token, an export --output file that cannot be written
  3  unknown session, attempt or ledger file (or database); export: a blob an event names is lost;
     inspect, export, tail, verify <session>: the session was deleted (prune) while it was read
  4  the store is unavailable: its server cannot be reached or did not answer in time, or
     the SQLite file could not be read or written (locked, disk full, I/O error)
  130  export stopped by Ctrl-C or SIGTERM (an --output file left as it was); so are inspect,
       verify (SQLite's check of the file too), sessions, prune and collect-blobs, between
       pages, saying how far they got, and tail (--follow too), saying after which cursor;
       serve ends with 0 when stopped
`;

/** What `agent-ledger` with no command prints (to stderr: it is bad usage, exit 2). */
const SHORT_USAGE = `usage: agent-ledger [--store <url>] <command> [options]

commands:
${Object.entries(commands)
  .map(([name, { summary }]) => `  ${name.padEnd(14)} ${summary}`)
  .join("\n")}

run agent-ledger help <command> for its options, agent-ledger --help for everything
`;

/** Splits `--store <url>` / `--store=<url>` (anywhere) from the command's own arguments. */
function takeStoreFlag(argv: string[]): { store: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let store: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === "--") {
      rest.push(...argv.slice(index));
      break;
    }
    if (arg === "--store") {
      store = argv[index + 1];
      if (store === undefined)
        throw new CliError({
          code: "invalid-argument",
          message: "--store needs a URL",
          exitCode: EXIT_CODES.usage,
        });
      index++;
    } else if (arg.startsWith("--store=")) store = arg.slice(8);
    else rest.push(arg);
  }
  return { store, rest };
}

/**
 * Runs one `agent-ledger` invocation and returns its exit code; errors are printed to
 * `io.stderr`, never thrown. `bin.js` is this plus process wiring.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let store: EventStore | undefined;
  try {
    const { store: flag, rest } = takeStoreFlag(argv);
    const [name, ...args] = rest;
    // `help inspect` is `inspect --help`.
    const asked = name === "help" ? commandNamed(args[0]) : undefined;
    if (asked && args.length === 1) {
      io.stdout.write(`${asked.help}\n`);
      return EXIT_CODES.ok;
    }
    // `help nosuch` (or `help a b`) is bad usage, as `nosuch` is: the general help would hide
    // that no such command exists.
    if (name === "help" && args.length > 0)
      throw new CliError({
        code: "invalid-argument",
        message:
          args.length === 1
            ? `unknown command ${JSON.stringify(args[0])}`
            : `help takes one command, got ${args.length}`,
        exitCode: EXIT_CODES.usage,
        hint: "run agent-ledger --help",
      });
    // No command: a short usage, not the whole help, on stderr as any bad usage is.
    if (name === undefined) {
      io.stderr.write(SHORT_USAGE);
      return EXIT_CODES.usage;
    }
    if (name === "help" || name === "--help" || name === "-h") {
      io.stdout.write(HELP);
      return EXIT_CODES.ok;
    }
    if (name === "--version" || name === "-v") {
      io.stdout.write("0.1.0\n");
      return EXIT_CODES.ok;
    }
    const command = commandNamed(name);
    if (!command)
      throw new CliError({
        code: "invalid-argument",
        message: `unknown command ${JSON.stringify(name)}`,
        exitCode: EXIT_CODES.usage,
        hint: "run agent-ledger --help",
      });
    // After `--` every argument is an id: a session named "--help" is inspected, not helped.
    const terminator = args.indexOf("--");
    const options = terminator === -1 ? args : args.slice(0, terminator);
    if (options.includes("--help") || options.includes("-h")) {
      io.stdout.write(`${command.help}\n`);
      return EXIT_CODES.ok;
    }
    const storeUrl = resolveStoreUrl({ flag, env: io.env });
    const storeSource =
      flag !== undefined ? "flag" : io.env.AGENT_LEDGER_STORE !== undefined ? "env" : "default";
    const timeoutMs = connectTimeoutMs(io.env.AGENT_LEDGER_CONNECT_TIMEOUT_MS);
    const context: CommandContext = {
      args,
      io,
      storeUrl,
      storeSource,
      openStore: async (options) => {
        store ??= await openCliStore(storeUrl, {
          timeoutMs,
          upgrade: options?.upgrade === true,
          storeSource,
        });
        return store;
      },
    };
    return await command.run(context);
  } catch (caught) {
    const error = refusedMidCommand(caught) ?? caught;
    const code = exitCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    // Messages quote ids and payload text: terminal controls in them (an escape sequence, a
    // bidi override) are shown escaped, as the commands' own output shows them.
    io.stderr.write(`agent-ledger: ${terminalJson(message)}\n`);
    if (error instanceof CliError && error.hint) io.stderr.write(`  ${terminalJson(error.hint)}\n`);
    if (
      code === EXIT_CODES.failure &&
      !(error instanceof CliError) &&
      io.env.AGENT_LEDGER_DEBUG &&
      error instanceof Error &&
      error.stack
    )
      io.stderr.write(`${error.stack}\n`);
    return code;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

/**
 * `$AGENT_LEDGER_CONNECT_TIMEOUT_MS`, 10000 when unset or empty. Anything but a whole number of
 * milliseconds that a timer takes is a usage error (exit 2): 0 or -1 made every store, a local
 * file too, "did not answer" (exit 4, which a script retries later), and "abc" was ignored.
 */
function connectTimeoutMs(value: string | undefined): number {
  if (value === undefined || value === "") return 10_000;
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647)
    throw usageError(
      `$AGENT_LEDGER_CONNECT_TIMEOUT_MS is ${JSON.stringify(value)}: give a whole number of milliseconds from 1 to 2147483647`,
    );
  return Number(value);
}
