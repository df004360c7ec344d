import { freshPlaces, SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "./chromium.test.data.js";
import { runBin, runPasted, startBin, storeWithPay } from "./session-fixture.test.data.js";

// A store URL with a password, which the CLI opens and must never print: a PostgreSQL ledger (a
// SQLite URL carries no query, so no secret, and a file's name is no secret to hide). The
// local server's trust authentication takes the URL's password unread; a server that asks for
// one (AGENT_LEDGER_POSTGRES_URL) is given its own.
const available = await serverAvailable("postgres");
const places = freshPlaces(afterAll);

/** A ledger in a schema of its own with a `pay` call in flight, its URL and the URL's password. */
async function storeWithSecret(): Promise<{ url: string; secret: string; attemptId: string }> {
  const url = new URL(SERVER_URLS.postgres);
  if (url.password === "") url.password = "s3cret-pw";
  url.searchParams.set("schema", places.schema("cli_pw"));
  const { attemptId } = await storeWithPay(url.toString());
  return { url: url.toString(), secret: url.password, attemptId };
}

/** `url` as the CLI shows it: the password as ***. */
const shownUrl = (url: string, secret: string) => url.replace(`:${secret}@`, ":***@");

describe.skipIf(!available)("the resolve command inspect prints", () => {
  it("never shows the store's password: left to $AGENT_LEDGER_STORE when it came from there", async () => {
    const { url, secret, attemptId } = await storeWithSecret();
    const env = { AGENT_LEDGER_STORE: url };
    const text = await runBin(["inspect", "pay"], env);
    const json = await runBin(["inspect", "pay", "--json"], env);
    expect(text.code).toBe(0);
    expect(json.code).toBe(0);
    const command = `agent-ledger resolve --abandon "reason" -- pay ${attemptId}`;
    expect(text.stdout).toContain(`check the effect, then: ${command}\n`);
    expect(JSON.parse(json.stdout).nextSteps).toEqual([{ action: "resolve", command }]);
    for (const output of [text, json]) expect(output.stdout + output.stderr).not.toContain(secret);
    // Pasted where the environment names the store, it runs.
    expect((await runPasted(command.replace('"reason"', '"checked"'), env)).code).toBe(0);
  });

  it("shows a password given with --store as *** and says it was left out", async () => {
    const { url, secret, attemptId } = await storeWithSecret();
    const text = await runBin(["--store", url, "inspect", "pay"]);
    const json = await runBin(["--store", url, "inspect", "pay", "--json"]);
    expect(text.code).toBe(0);
    expect(json.code).toBe(0);
    const command = `agent-ledger resolve --abandon "reason" --store '${shownUrl(url, secret)}' -- pay ${attemptId}`;
    expect(text.stdout).toContain(`check the effect, then: ${command}\n`);
    expect(text.stdout).toContain("the store URL's password is left out, shown as ***");
    expect(JSON.parse(json.stdout).nextSteps).toEqual([
      { action: "resolve", command, passwordLeftOut: true },
    ]);
    for (const output of [text, json]) expect(output.stdout + output.stderr).not.toContain(secret);
  });
});

describe.skipIf(!available)("agent-ledger serve: the store URL's password", () => {
  // The same URL, given the same way, reads the same from `inspect` and from `serve`'s page:
  // with --store its password as ***, from $AGENT_LEDGER_STORE not at all (serve passed that
  // one to the page, which inspect leaves to the environment). Never the password itself.
  it("serve's page and inspect print the same resolve command for the same store URL", async () => {
    const { url, secret, attemptId } = await storeWithSecret();
    const resolve = (storeOption: string) =>
      `agent-ledger resolve --abandon "reason"${storeOption} -- pay ${attemptId}`;
    const shown = ` --store '${shownUrl(url, secret)}'`;
    for (const { given, env, steps } of [
      {
        given: ["--store", url],
        env: {},
        steps: [{ action: "resolve", command: resolve(shown), passwordLeftOut: true }],
      },
      {
        given: [],
        env: { AGENT_LEDGER_STORE: url },
        steps: [{ action: "resolve", command: resolve("") }],
      },
    ]) {
      const inspect = await runBin([...given, "inspect", "pay", "--json"], env);
      expect(inspect.code).toBe(0);
      expect(JSON.parse(inspect.stdout).nextSteps).toEqual(steps);
      const server = await startBin([...given, "serve"], /viewer on (http:\/\/\S+)\n/, env);
      try {
        const base = server.match[1] as string;
        const session = await fetch(new URL("/api/session?id=pay", base));
        const text = await session.text();
        expect(JSON.parse(text).nextSteps).toEqual(steps);
        const config = await (await fetch(new URL("/api/config", base))).text();
        for (const served of [text, config, server.output(), server.errors()])
          expect(served).not.toContain(secret);
        expect(inspect.stdout + inspect.stderr).not.toContain(secret);
        if (haveChromium)
          await expectPageSays({
            base,
            command: steps[0]?.command as string,
            passwordLeftOut: given.length > 0,
            secret,
          });
      } finally {
        server.child.kill("SIGTERM");
      }
    }
  });
});

/** The session page shows `command`, and says the password was left out where it was. */
async function expectPageSays(options: {
  base: string;
  command: string;
  passwordLeftOut: boolean;
  secret: string;
}) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(new URL("#/session/pay", options.base).toString());
    const unresolved = page.locator('[data-testid="unresolved"]');
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    expect(await unresolved.textContent()).toContain(options.command);
    const note = page.locator('[data-testid="password-left-out"]');
    expect(await note.count()).toBe(options.passwordLeftOut ? 1 : 0);
    if (options.passwordLeftOut)
      expect(await note.textContent()).toContain(
        "The store URL's password is left out, shown as ***",
      );
    expect(await page.content()).not.toContain(options.secret);
  } finally {
    await browser.close();
  }
}
