import {
  type AppendRequest,
  type EventStore,
  hashJson,
  type JsonObject,
  type NewEvent,
} from "@agent-ledger/core";

// A namespaced tool's call as the adapter recorded it before it named the namespace: under the
// tool's bare name (`forecast`, not `weather.forecast`), its request hash over that name.
function underBareName(event: NewEvent): NewEvent {
  const payload = event.payload as JsonObject | undefined;
  if (event.type !== "tool.requested" || typeof payload?.name !== "string") return event;
  const dot = payload.name.indexOf(".");
  if (dot === -1) return event;
  const name = payload.name.slice(dot + 1);
  return {
    ...event,
    payload: { ...payload, name, requestHash: hashJson({ name, args: payload.args ?? null }) },
  };
}

/**
 * `store`, recording as the adapter did before a namespaced tool's call was named in its
 * namespace: a ledger a run recorded then, for the tests that resume such a run.
 */
export function recordingBareToolNames(store: EventStore): EventStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === "append")
        return (request: AppendRequest) =>
          target.append({ ...request, events: request.events.map(underBareName) });
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
