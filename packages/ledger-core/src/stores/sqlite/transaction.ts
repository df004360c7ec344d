import { runSync, type WriteProgram } from "../sql/write-program.js";
import type { SqliteBackendState } from "./backend-state.js";
import { writeStatements } from "./write-statements.js";
import { executeStep } from "./write-steps.js";

/** `SqliteBackend.write`: the program in one IMMEDIATE transaction, made once per connection. */
export async function writeProgram<T>(
  state: SqliteBackendState,
  program: () => WriteProgram<T>,
): Promise<T> {
  if (state.transaction === undefined) {
    const statements = writeStatements(state);
    state.transaction = state.database.transaction((make: () => WriteProgram<unknown>) => {
      state.heads.begin(statements.dataVersion.get() as number);
      return runSync(make(), (step) => executeStep(state, step, statements));
    }).immediate;
  }
  const transaction = state.transaction;
  return keepingHeads(state, () => transaction(program) as T);
}

/**
 * Runs a write transaction and tells the connection's heads how it ended: committed, what it
 * remembered holds; rolled back (it threw), what it remembered may never have been written.
 */
export function keepingHeads<T>(state: SqliteBackendState, transaction: () => T): T {
  let result: T;
  try {
    result = transaction();
  } catch (error) {
    state.heads.forgetAll();
    throw error;
  }
  state.heads.committed();
  return result;
}
