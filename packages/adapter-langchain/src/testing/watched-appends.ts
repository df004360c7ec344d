import type { AppendRequest, AppendResult, EventStore } from "@agent-ledger/core";

/**
 * `store`, with `appended` called after each append it commits (with the request and what was
 * stored); every other method is the store's own. A proxy rather than a copy, so a store class
 * with more methods than the interface keeps them all.
 */
export function watchAppends(
  store: EventStore,
  appended: (request: AppendRequest, result: AppendResult) => void,
): EventStore {
  const append: EventStore["append"] = async (request) => {
    const result = await store.append(request);
    appended(request, result);
    return result;
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") return append;
      const value: unknown = Reflect.get(target, property, target);
      // Methods with private fields must run on the store itself, not on the proxy.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
