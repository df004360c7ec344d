/**
 * Test hook: when CRASH_AT names this point, tell the parent process (a line on stdout) and
 * wait to be killed. The parent SIGKILLs us, so nothing after this line runs.
 */
export async function crashPoint(name: string): Promise<void> {
  if (process.env.CRASH_AT !== name) return;
  process.stdout.write(`CRASH_POINT ${name}\n`);
  await new Promise(() => {
    setInterval(() => undefined, 1000);
  });
}
