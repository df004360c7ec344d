import { describe, expect, it } from "vitest";
import { runBin } from "../session-fixture.test.data.js";
import { commandArgs } from "./command-args.js";

const refusal = (message: string, hint: string) =>
  expect.objectContaining({ code: "invalid-argument", exitCode: 2, message, hint });

describe("a command's options told in our words", () => {
  it("names an unknown option, the command and its options, and the command's help", async () => {
    const result = await runBin(["--store", "sqlite:/no/such/l.db", "inspect", "--jsn", "x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      [
        "agent-ledger: unknown option --jsn for inspect (options: --json)",
        '  run agent-ledger help inspect; an id that starts with "-" goes after --: agent-ledger inspect -- --jsn',
        "",
      ].join("\n"),
    );
  });

  it("says an option's value that starts with - reads as an option, and how to give it", async () => {
    const result = await runBin(["--store", "sqlite:/no/such/l.db", "tail", "s", "--from", "-1"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      [
        'agent-ledger: --from needs a value: "-1" starts with "-", so it reads as an option (give such a value as --from=-1)',
        "  run agent-ledger help tail",
        "",
      ].join("\n"),
    );
  });

  it("refuses a value missing, a flag given one and an argument not taken, each with the command's help", () => {
    const options = {
      json: { type: "boolean" },
      output: { type: "string", short: "o" },
    } as const;
    const parse =
      (args: string[], allowPositionals = true) =>
      () =>
        commandArgs("export", { args, options, allowPositionals });
    expect(parse(["s", "-o"])).toThrow(
      refusal("--output needs a value", "run agent-ledger help export"),
    );
    expect(parse(["s", "--json=yes"])).toThrow(
      refusal("--json takes no value", "run agent-ledger help export"),
    );
    expect(parse(["s"], false)).toThrow(
      refusal('export takes no argument "s"', "run agent-ledger help export"),
    );
    // No id to put after --: the hint is the help alone.
    expect(() => commandArgs("sessions", { args: ["-z"], options })).toThrow(
      refusal(
        "unknown option -z for sessions (options: --json, --output (-o))",
        "run agent-ledger help sessions",
      ),
    );
    expect(
      commandArgs("export", { args: ["s", "-o", "x.json"], options, allowPositionals: true }),
    ).toMatchObject({ values: { output: "x.json" }, positionals: ["s"] });
  });

  it("quotes the occurrence that failed and suggests the long form, shell-quoted", () => {
    const options = {
      abandon: { type: "string" },
      from: { type: "string" },
      output: { type: "string", short: "o" },
    } as const;
    const parse = (args: string[]) => () =>
      commandArgs("export", { args, options, allowPositionals: true });
    const help = "run agent-ledger help export";
    expect(parse(["s", "--output", "a.json", "--output"])).toThrow(
      refusal("--output needs a value", help),
    );
    // "-" alone is a value Node takes.
    expect(parse(["s", "--output", "-", "--output"])).toThrow(
      refusal("--output needs a value", help),
    );
    expect(parse(["s", "--from", "3", "--from", "-1"])).toThrow(
      refusal(
        '--from needs a value: "-1" starts with "-", so it reads as an option (give such a value as --from=-1)',
        help,
      ),
    );
    // Node reads -o=-x as the value "=-x": the long form names the value given.
    expect(parse(["s", "-o", "-x"])).toThrow(
      refusal(
        '-o needs a value: "-x" starts with "-", so it reads as an option (give such a value as --output=-x)',
        help,
      ),
    );
    expect(parse(["s", "a", "--abandon", "-not needed"])).toThrow(
      refusal(
        '--abandon needs a value: "-not needed" starts with "-", so it reads as an option (give such a value as --abandon=\'-not needed\')',
        help,
      ),
    );
  });

  it("puts the argument as typed after -- in the hint for an id that starts with -", () => {
    const options = { json: { type: "boolean" }, follow: { type: "boolean", short: "f" } } as const;
    const hint = (command: string, id: string) =>
      `run agent-ledger help ${command}; an id that starts with "-" goes after --: agent-ledger ${command} -- ${id}`;
    const parse = (command: string, args: string[]) => () =>
      commandArgs(command, { args, options, allowPositionals: true }, { takesIds: true });
    expect(parse("inspect", ["-abc"])).toThrow(
      refusal(
        "unknown option -a for inspect (options: --json, --follow (-f))",
        hint("inspect", "-abc"),
      ),
    );
    expect(parse("inspect", ["--jsn=1"])).toThrow(
      refusal(
        "unknown option --jsn for inspect (options: --json, --follow (-f))",
        hint("inspect", "--jsn=1"),
      ),
    );
    expect(parse("tail", ["s", "-fx"])).toThrow(
      refusal("unknown option -x for tail (options: --json, --follow (-f))", hint("tail", "-fx")),
    );
    expect(parse("inspect", ["-a b"])).toThrow(
      refusal(
        "unknown option -a for inspect (options: --json, --follow (-f))",
        hint("inspect", "'-a b'"),
      ),
    );
  });
});
