import type { Context, Span } from "@opentelemetry/api";

// `@opentelemetry/api` is an optional peer: only its types are imported, so loading
// `@agent-ledger/core` never loads it. Its enums are used by value below.
export const SPAN_KIND_INTERNAL = 0;
export const SPAN_KIND_CLIENT = 2;
export const STATUS_ERROR = 2;
// The api stores the active span under this global symbol (createContextKey uses Symbol.for,
// stable since 1.0 so duplicated api copies interoperate); parentage goes through it.
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

class ParentContext implements Context {
  readonly #values: Map<symbol, unknown>;
  constructor(values: Map<symbol, unknown> = new Map()) {
    this.#values = values;
  }
  getValue(key: symbol): unknown {
    return this.#values.get(key);
  }
  setValue(key: symbol, value: unknown): Context {
    return new ParentContext(new Map(this.#values).set(key, value));
  }
  deleteValue(key: symbol): Context {
    const values = new Map(this.#values);
    values.delete(key);
    return new ParentContext(values);
  }
}

export function under(span: Span | undefined): Context {
  const root = new ParentContext();
  return span ? root.setValue(SPAN_KEY, span) : root;
}
