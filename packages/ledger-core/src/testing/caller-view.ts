/**
 * What a caller branching on an error reads of it, and of its cause: its name, message, `code`,
 * `status` and whether it is an `Error`. A replayed failure must read the same as the live one
 * (core's `rebuiltError`), which each adapter's replay tests compare.
 */
export function seenByCaller(error: unknown) {
  const read = (value: unknown) => {
    const { name, message, code, status } = (value ?? {}) as Error & {
      code?: unknown;
      status?: unknown;
    };
    return { name, message, code, status, isError: value instanceof Error };
  };
  return { ...read(error), cause: read((error as Error | undefined)?.cause) };
}

/** The error `run` rejects with; throws when it resolves (the failure expected did not come). */
export async function rejection(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => {
      throw new Error("expected a rejection, the call resolved");
    },
    (error: unknown) => error,
  );
}
