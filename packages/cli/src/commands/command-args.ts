import { type ParseArgsConfig, parseArgs } from "node:util";
import { usageError } from "../errors.js";

/**
 * `parseArgs` (strict) of a command's `args`, its errors told in our words: Node's own spoke of
 * "a positional argument", and named no command ("unknown option --jsn for inspect (options:
 * --json)"), and `--from -1` was "argument is ambiguous". Bad usage, exit 2.
 */
export function commandArgs<T extends ParseArgsConfig & { args: string[] }>(
  command: string,
  config: T,
  /** Whether the command takes ids, which may start with "-" (the hint then says how). */
  { takesIds = false }: { takesIds?: boolean } = {},
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  try {
    return parseArgs({ ...config, strict: true });
  } catch (error) {
    throw argsError({ command, config, takesIds }, error);
  }
}

/** `parseArgs`' error (`ERR_PARSE_ARGS_*`) as a usage error; any other error as it is. */
function argsError(
  {
    command,
    config,
    takesIds,
  }: { command: string; config: ParseArgsConfig & { args: string[] }; takesIds: boolean },
  error: unknown,
): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS")) return error;
  const options = config.options ?? {};
  const help = `run agent-ledger help ${command}`;
  // The first quoted name in Node's message: '--jsn', '-z', '--from <value>', '-o, --output
  // <value>', 'x'.
  const named = /'([^']*)'/.exec((error as Error).message)?.[1] ?? "";
  const option = /--[^ ,]+/.exec(named)?.[0] ?? (named.split(/[ ,]/)[0] as string);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const known = Object.entries(options)
      .map(([name, { short }]) => `--${name}${short ? ` (-${short})` : ""}`)
      .join(", ");
    return usageError(
      `unknown option ${option} for ${command} (${known ? `options: ${known}` : "it takes none"})`,
      takesIds
        ? `${help}; an id that starts with "-" goes after --: agent-ledger ${command} -- ${option}`
        : help,
    );
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL")
    return usageError(`${command} takes no argument ${JSON.stringify(named)}`, help);
  // An option given no value (last on the line, or before another that starts with "-"), or a
  // flag given one (--json=yes).
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = option.replace(/^-+/, "");
    const long = Object.hasOwn(options, name)
      ? name
      : Object.entries(options).find(([, { short }]) => short === name)?.[0];
    const flag = long !== undefined && options[long]?.type === "boolean";
    if (flag) return usageError(`--${long} takes no value`, help);
    const short = long === undefined ? undefined : options[long]?.short;
    const at = config.args.findIndex(
      (arg) => arg === `--${long}` || (short !== undefined && arg === `-${short}`),
    );
    const next = at === -1 ? undefined : config.args[at + 1];
    return usageError(
      next === undefined
        ? `${option} needs a value`
        : `${option} needs a value: ${JSON.stringify(next)} starts with "-", so it reads as an option (give such a value as ${option}=${next})`,
      help,
    );
  }
  return usageError((error as Error).message, help);
}
