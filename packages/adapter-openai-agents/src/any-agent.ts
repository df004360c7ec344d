import type { Agent } from "@openai/agents";

/** An agent of any context and output type: what the adapter instruments, runs and resumes. */
// biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
export type AnyAgent = Agent<any, any>;
