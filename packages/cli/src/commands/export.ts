import {
  type AtifTrajectory,
  BlobCache,
  type EventStore,
  LedgerError,
  LedgerIdGenerator,
  resolveEvents,
  SeqGaps,
  stopBeforeNextPage,
  toAtif,
  toOtelSpans,
} from "@agent-ledger/core";
import { notFoundError, usageError } from "../errors.js";
import { terminalLine } from "../format.js";
import { interrupted, LineWriter, type OutputStream, writeOut } from "../io.js";
import { writeJson } from "../json-writer.js";
import { notIntactOf, warnNotIntact } from "../not-intact.js";
import { type OtlpTraceRequest, toOtlpJson } from "../otlp-json.js";
import { openOutputFile } from "../output-file.js";
import { readsToldTo } from "../seq-gaps.js";
import {
  assertNotDeletedWhileRead,
  assertSessionExists,
  ReadsStopped,
  stoppingReads,
} from "../store.js";
import { commandStoreOptions } from "../store-url.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { idArgument } from "./session-args.js";

export const exportHelp = `agent-ledger export <session> [--format jsonl|atif|otlp-json] [--output <file> | -o <file>] [--raw]
  jsonl:     (the default) every event, one JSON envelope per line, in commit order; content kept in the blob
             store is put back in place unless --raw (events exactly as stored; jsonl only)
  atif:      an ATIF v1.7 trajectory (child runs as embedded sub-agent trajectories)
  otlp-json: an OTLP/JSON ExportTraceServiceRequest of the session's GenAI spans; trace and
             span ids derived from the session, run and attempt ids (the same on every export)
  --output:  written beside the file, renamed into place only when complete (exit 2 when it
             cannot be written). A blob whose content the export writes that is lost fails
             the export (exit 3); attachments named only in evidenceRefs are not exported
             (agent-ledger verify checks every blob a run names).
  A run whose seqs have a gap (rows deleted by hand, or lost) is exported as it reads, then a
  warning on stderr that it is not intact and the \`verify\` command to run, as inspect says it.
  Progress goes to stderr when it is a terminal.`;

const formats = ["jsonl", "atif", "otlp-json"] as const;
type ExportFormat = (typeof formats)[number];

const WHOLE_SPANS = {
  attributeCountLimit: Number.POSITIVE_INFINITY,
  attributeValueLengthLimit: Number.POSITIVE_INFINITY,
  eventCountLimit: Number.POSITIVE_INFINITY,
  linkCountLimit: Number.POSITIVE_INFINITY,
  attributePerEventCountLimit: Number.POSITIVE_INFINITY,
  attributePerLinkCountLimit: Number.POSITIVE_INFINITY,
};

/**
 * The session's spans (via `toOtelSpans` and the SDK's in-memory exporter) as OTLP/JSON, with
 * ids derived from the session, run and attempt ids (`LedgerIdGenerator`; the SDK's own are
 * random, and a backend importing a session twice would hold its traces twice): the same
 * session exports the same bytes.
 */
export async function exportOtlpJson(
  store: EventStore,
  sessionId: string,
): Promise<OtlpTraceRequest> {
  // Loaded here: only this format needs the SDK (about 160 files, which every other command
  // would load for nothing).
  const { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
    await import("@opentelemetry/sdk-trace-base");
  const exporter = new InMemorySpanExporter();
  const ids = new LedgerIdGenerator();
  // The export is the session whole: no OTEL_* variable of the shell may sample spans out or
  // cut their attributes (the SDK reads them where its config leaves a setting to them).
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    sampler: new AlwaysOnSampler(),
    spanLimits: WHOLE_SPANS,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  try {
    await toOtelSpans(store, sessionId, provider, { ids });
    await provider.forceFlush();
    return toOtlpJson(exporter.getFinishedSpans(), {
      resourceAttributes: { "service.name": "agent-ledger", "agent_ledger.session.id": sessionId },
    });
  } finally {
    await provider.shutdown();
  }
}

/** Why an export of a session deleted while it was read fails (store.ts). */
const INCOMPLETE = "the export would not be complete";

export async function exportCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs(
    "export",
    {
      args: context.args,
      options: {
        format: { type: "string", default: "jsonl" },
        output: { type: "string", short: "o" },
        raw: { type: "boolean" },
      },
      allowPositionals: true,
    },
    { takesIds: true },
  );
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError("usage: agent-ledger export <session> [--format jsonl|atif|otlp-json]");
  idArgument(sessionId, "<session>");
  const format = values.format as ExportFormat;
  if (!formats.includes(format))
    throw usageError(
      `unknown export format ${JSON.stringify(values.format)}: use ${formats.join(", ")}`,
    );
  // A projection reads the content whatever is asked: taken silently, --raw would promise events
  // as stored and give a document made from the content put back.
  if (values.raw && format !== "jsonl")
    throw usageError(
      `--raw applies to --format jsonl only (the events as stored); ${format} is made from the content put back`,
    );
  const store = await context.openStore();
  await assertSessionExists(store, sessionId, context);
  const { signal, stderr } = context.io;
  const progress = (text: string) => {
    if (stderr.isTTY) stderr.write(`\r\x1b[2K${text}`);
  };
  const stop = (when: string): Promise<number> => {
    progress("\n");
    const left = values.output ? `: ${values.output} left as it was` : "";
    return interrupted(stderr, "export", `${when}${left}`);
  };
  // A run with rows deleted exports as if nothing were missing: said once exported, as inspect
  // says it, from the seqs of the events the export reads (a first read of the whole session
  // held its run tree, where jsonl holds a page).
  const gaps = await SeqGaps.of(store, sessionId);
  const file = values.output ? await openOutputFile(values.output) : undefined;
  const out: OutputStream = file?.stream ?? context.io.stdout;
  let done = false;
  try {
    if (format === "jsonl") {
      let after = 0;
      let count = 0;
      const cache = new BlobCache();
      const lines = new LineWriter(out);
      for (;;) {
        // Ctrl-C: stop between pages; the file that was there stays (the temporary goes). On
        // SQLite with stdout a file, reads and writes are both synchronous: only the turn
        // `stopBeforeNextPage` takes lets the signal's handler run.
        if (await stopBeforeNextPage(signal)) return await stop(`after ${count} events`);
        const page = await store.readSession({ sessionId, after, limit: 1000 });
        gaps.add(page.events);
        const events = values.raw
          ? page.events
          : await resolveEvents(store, page.events, { cache });
        for (const event of events) {
          await lines.line(JSON.stringify(event));
          after = event.commitCursor;
        }
        await lines.flush();
        count += page.events.length;
        progress(`exported ${count} events`);
        if (page.events.length < 1000) break;
      }
      await assertNotDeletedWhileRead(store, sessionId, "export", INCOMPLETE);
      progress(`exported ${count} events\n`);
    } else {
      progress(terminalLine(`projecting session ${sessionId} as ${format}…`));
      // The document is made whole in memory (a projection needs the whole session), then
      // written as it is walked: its text is past the longest string V8 makes long before it
      // is past memory.
      let document: AtifTrajectory | OtlpTraceRequest;
      try {
        const reading = readsToldTo(stoppingReads(store, signal), gaps);
        document =
          format === "atif"
            ? await toAtif(reading, sessionId)
            : await exportOtlpJson(reading, sessionId);
      } catch (error) {
        if (error instanceof ReadsStopped) return await stop("while reading the session");
        throw error;
      }
      await assertNotDeletedWhileRead(store, sessionId, "export", INCOMPLETE);
      if (await stopBeforeNextPage(signal)) return await stop("before writing");
      if (!(await writeJson(out, document, { signal }))) return await stop("while writing");
      await writeOut(out, "\n");
      progress(`exported ${format}\n`);
    }
    done = true;
  } catch (error) {
    // The session existed (checked above): what is missing is a blob an event names, or the
    // session with its blobs, deleted while the export read it.
    if (!LedgerError.isInstance(error, "not-found")) throw error;
    await assertNotDeletedWhileRead(store, sessionId, "export", INCOMPLETE);
    throw notFoundError(
      `${error.message}: the export would not be complete`,
      "--format jsonl --raw writes the events as stored (blob references kept); agent-ledger inspect shows the session with the lost blob marked",
    );
  } finally {
    // Only a complete export replaces the file that was there.
    if (file) await (done ? file.commit() : file.discard());
  }
  await warnNotIntact(stderr, notIntactOf(gaps.found(), sessionId, commandStoreOptions(context)));
  return 0;
}
