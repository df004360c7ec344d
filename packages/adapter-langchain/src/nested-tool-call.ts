/**
 * The tool runs in progress, to tell a tool call of the model from a tool that a tool calls.
 * A tool that calls another with its own config (callbacks and all) also hands it its
 * `toolCall`: LangChain then starts the inner tool with the outer call's toolCallId. The
 * inner call is not the model's tool call: it is recorded as a call of its own, without an id
 * (ledgerMiddleware's claim on that id is the outer call's).
 */
export class ToolRuns {
  readonly #running = new Set<string>();

  /** A tool run started, recorded by the handler or by ledgerMiddleware. */
  started(runId: string): void {
    this.#running.add(runId);
  }

  ended(runId: string): void {
    this.#running.delete(runId);
  }

  /** True for a tool started by a running tool (a direct child of its run). */
  isNested(parentRunId: string | undefined): boolean {
    return parentRunId !== undefined && this.#running.has(parentRunId);
  }
}
