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
});
