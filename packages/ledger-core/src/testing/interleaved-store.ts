import type { EventStore } from "../store/event-store.js";

/**
 * `store` with `before(method, args)` awaited before each of its calls: the write another
 * process makes between two reads of a command (an agent appending, `prune` deleting the
 * session), placed exactly where a race would put it. `before` decides when to act, from the
 * method's name and arguments; it writes through a store of its own (another connection).
 */
export function interleavedStore<S extends EventStore>(
  store: S,
  before: (method: string, args: unknown[]) => Promise<void>,
): S {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        await before(String(property), args);
        return value.apply(target, args);
      };
    },
  });
}
