import { type CollectBlobsOptions, DEFAULT_BLOB_GRACE_MS, isValidId } from "@agent-ledger/core";
import { usageError } from "../errors.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";

/**
 * Returns `value` when it can be an id (§6: 1-255 characters, no control characters); else
 * bad usage (exit 2) naming the argument, before the store turns it down as invalid-event.
 */
export function idArgument<T extends string | undefined>(value: T, name: string): T {
  const text: string | undefined = value;
  if (text !== undefined && !isValidId(text as unknown))
    throw usageError(
      `${name} ${JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)} is not a valid id: 1-255 characters without control characters`,
    );
  return value;
}

/** The longest wait a timer takes (ms): setTimeout fires at once for a longer one. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * `--<name> <value>` as an integer from `min` to `max`, written in decimal digits (`fallback`
 * when absent); else bad usage (exit 2) naming the option and quoting the value. `max` is at most Number.MAX_SAFE_INTEGER: past it a number has no
 * exact integer (`--from 99999999999999999999` was 1e20, which the store refused as its own
 * `$.after`, exit 1).
 */
export function numberOption(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  // Digits only: Number() read "0x0e" as 14, "1e3" as 1000 and "" as 0.
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max)
    throw usageError(
      `--${name} must be an integer >= ${min} and <= ${max} (digits only), not ${JSON.stringify(value)}`,
    );
  return parsed;
}

/** The arguments of a command that reads one session: `<session> [--json]`. */
export function sessionArgs(
  context: CommandContext,
  command: string,
): { sessionId: string; json: boolean } {
  const { sessionId, json } = sessionOrAllArgs(context, command, { all: false });
  return { sessionId: sessionId as string, json };
}

/**
 * `<session> [--json]`, or with `all` also `--all [--json]` (every session: `sessionId`
 * undefined); else bad usage (exit 2).
 */
export function sessionOrAllArgs(
  context: CommandContext,
  command: string,
  { all }: { all: boolean },
): { sessionId: string | undefined; json: boolean } {
  const { values, positionals } = commandArgs(
    command,
    {
      args: context.args,
      options: { json: { type: "boolean" }, ...(all ? { all: { type: "boolean" } } : {}) },
      allowPositionals: true,
    },
    { takesIds: true },
  );
  const json = values.json === true;
  if ((values as { all?: boolean }).all === true) {
    if (positionals.length > 0)
      throw usageError(
        `${command} --all takes no <session>: --all is every session of the store`,
        `run agent-ledger ${command} <session> for one session, or agent-ledger ${command} --all`,
      );
    return { sessionId: undefined, json };
  }
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError(
      `usage: agent-ledger ${command} <session> [--json]${all ? `, or ${command} --all [--json]` : ""}`,
    );
  return { sessionId: idArgument(sessionId, "<session>"), json };
}

const durationUnits: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * `--<name> <duration>` in milliseconds: a whole number of `ms`, `s`, `m`, `h` or `d`
 * (`undefined` when absent); else bad usage (exit 2). A bare number is bad usage, with
 * `unit: "required"` every one: `prune --older-than 30` meant 30 days to whoever typed it, and
 * read as 30 ms it deleted every closed session; with `unit: "unless-zero"` every one but 0,
 * which is 0 in any unit: `--blob-grace 10` meant 10 minutes, and read as 10 ms it left a writer
 * 10 ms to name a blob it had just put before the blob was deleted.
 */
export function durationOption(
  name: string,
  value: string | undefined,
  options: { unit: "required" | "unless-zero" },
): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (match !== null && match[2] === undefined && options.unit === "required")
    throw usageError(
      `--${name} needs a unit: ${match[1]}d for days, ${match[1]}h for hours, ${match[1]}m for minutes (ms, s, m, h or d; a month is 30d)`,
    );
  if (
    match !== null &&
    match[2] === undefined &&
    options.unit === "unless-zero" &&
    Number(match[1]) !== 0
  )
    throw usageError(
      `--${name} needs a unit: ${match[1]}m for minutes, ${match[1]}s for seconds, ${match[1]}ms for milliseconds (ms, s, m, h or d; a bare number only as 0)`,
    );
  const ms =
    match === null ? Number.NaN : Number(match[1]) * (durationUnits[match[2] ?? "ms"] ?? 1);
  if (!Number.isSafeInteger(ms))
    throw usageError(
      options.unit === "required"
        ? `--${name} must be a duration: a whole number of ms, s, m, h or d (30d, 12h, 90m)`
        : `--${name} must be a duration: 0 or a whole number of ms, s, m, h or d (500ms, 30s, 10m, 2h, 1d)`,
    );
  return ms;
}

/** A duration in milliseconds as `durationOption` reads it, in its largest whole unit. */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m", "s"] as const) {
    const size = durationUnits[unit] as number;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** The --blob-grace values the helps show: what `blobGraceOption` takes. */
export const BLOB_GRACE_FORMS = "0, 500ms, 30s, 10m, 2h, 1d: a unit is needed but for 0";

/**
 * `--blob-grace` as the store's retention options (`deleteSession`, `collectBlobs`): `{}` when
 * absent, so the store's default applies.
 */
export function blobGraceOption(value: string | undefined): CollectBlobsOptions {
  const blobGraceMs = durationOption("blob-grace", value, { unit: "unless-zero" });
  return blobGraceMs === undefined ? {} : { blobGraceMs };
}

/** The grace those options give, as text (the store's default when they name none). */
export function graceText(options: CollectBlobsOptions): string {
  return formatDuration(options.blobGraceMs ?? DEFAULT_BLOB_GRACE_MS);
}
