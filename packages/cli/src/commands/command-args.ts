import { type ParseArgsConfig, parseArgs } from "node:util";
import { usageError } from "../errors.js";
import { shellQuote } from "../format.js";

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
  // Node's message names the option as it parsed it (`-a` of `-abc`, `--jsn` of `--jsn=1`) and
  // not which of several occurrences failed; its tokens tell the argument each came from.
  const tokens = optionTokens(config);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const unknown = tokens.find((token) => !Object.hasOwn(options, token.name));
    const typed = unknown === undefined ? option : (config.args[unknown.index] ?? option);
    const known = Object.entries(options)
      .map(([name, { short }]) => `--${name}${short ? ` (-${short})` : ""}`)
      .join(", ");
    return usageError(
      `unknown option ${option} for ${command} (${known ? `options: ${known}` : "it takes none"})`,
      takesIds
        ? `${help}; an id that starts with "-" goes after --: agent-ledger ${command} -- ${shellQuote(typed)}`
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
    // The occurrence Node refused: the first given no value or one that reads as an option (a
    // value given inline, --from=-1, is taken, and so is "-" alone).
    const next = tokens.find(
      (token) =>
        token.name === long &&
        (token.value === undefined ||
          (!token.inlineValue && token.value.length > 1 && token.value.startsWith("-"))),
    )?.value;
    // The long form: Node reads `-o=-x` as the value "=-x".
    return usageError(
      next === undefined
        ? `${option} needs a value`
        : `${option} needs a value: ${JSON.stringify(next)} starts with "-", so it reads as an option (give such a value as --${long}=${shellQuote(next)})`,
      help,
    );
  }
  return usageError((error as Error).message, help);
}

/** The options given, in order, each with the index of the argument it came from. */
function optionTokens(config: ParseArgsConfig & { args: string[] }) {
  const { tokens } = parseArgs({ ...config, strict: false, allowPositionals: true, tokens: true });
  return tokens.filter((token) => token.kind === "option");
}
