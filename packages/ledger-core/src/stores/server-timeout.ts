import { InvalidArgumentError } from "../events/errors.js";
import { takeUrlParam } from "../store/open-store.js";

/**
 * How long a store made from a URL waits for its server at each step (a connection, the reply
 * to a statement or command) unless `timeoutMs` says otherwise. Long enough for what is slow
 * on purpose (a statement waiting behind another writer's lock, a large blob on a slow link),
 * short enough that an agent whose server went silent (a partition, a failover, a firewall
 * dropping packets) hears `store-unavailable` instead of waiting for good.
 */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The query parameter of a PostgreSQL, MySQL or Redis URL that sets `timeoutMs`. */
export const TIMEOUT_PARAM = "timeoutMs";

/** The longest delay a Node timer takes (about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A bound as given: a whole number of milliseconds, 0 meaning that the store sets none (the
 * driver's own settings apply). Refused otherwise, at `path`.
 */
export function checkTimeoutMs(path: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS)
    throw new InvalidArgumentError(
      path,
      `timeoutMs is a whole number of milliseconds from 0 (no bound of the store's) to ${MAX_TIMER_MS}`,
    );
  return value;
}

/**
 * `?timeoutMs=` taken out of a store URL (it is the store's, not the driver's) and checked, or
 * undefined when the URL has none.
 */
export function takeTimeoutParam(url: URL, path: string): number | undefined {
  const text = takeUrlParam(url, TIMEOUT_PARAM);
  if (text === undefined) return undefined;
  return checkTimeoutMs(path, /^\d+$/.test(text) ? Number(text) : Number.NaN);
}

/**
 * The bound of a store: the option, else the URL's parameter, else DEFAULT_TIMEOUT_MS for a
 * client the store makes; undefined (none of the store's) for a client the application made
 * without the option.
 */
export function storeTimeoutMs(options: {
  option: unknown;
  fromUrl: number | undefined;
  owned: boolean;
}): number | undefined {
  if (options.option !== undefined) return checkTimeoutMs("$.timeoutMs", options.option);
  return options.fromUrl ?? (options.owned ? DEFAULT_TIMEOUT_MS : undefined);
}

/** A wait on the server that passed the store's bound; the connection it was on is destroyed. */
export class ServerTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  readonly timeoutMs: number;
  /** What was waited for: a connection (no statement was sent on it yet) or a reply. */
  readonly what: "reply" | "connection";

  constructor(what: "reply" | "connection", timeoutMs: number) {
    super(
      what === "reply"
        ? `no reply from the server within ${timeoutMs} ms (timeoutMs)`
        : `no connection to the server within ${timeoutMs} ms (timeoutMs): none free in the pool, or the server did not answer`,
    );
    this.name = "ServerTimeoutError";
    this.timeoutMs = timeoutMs;
    this.what = what;
  }
}

/**
 * What a store says of a wait on its server that passed a bound, and the error it passed with
 * (the store error's `cause`), or undefined when `error` is no timeout: found in `error` or its
 * causes, a ServerTimeoutError (the store's own bound) or an error `driverTimeout` recognises
 * as its driver's (which says it in words of its own, or not at all).
 */
export function timeoutIn(
  error: unknown,
  driverTimeout?: (error: Error) => string | undefined,
): { message: string; error: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof ServerTimeoutError) return { message: current.message, error: current };
    const message = driverTimeout?.(current);
    if (message !== undefined) return { message, error: current };
    current = current.cause;
  }
  return undefined;
}

/**
 * `wait` or, after `timeoutMs` (none when 0), a ServerTimeoutError, once `expire` has been
 * called (it destroys whatever was waiting, so nothing is left half done). A late answer of
 * `wait` is dropped, a late failure too.
 */
export function withinBound<T>(options: {
  wait: Promise<T>;
  timeoutMs: number;
  what: "reply" | "connection";
  expire: () => void;
}): Promise<T> {
  const { wait, timeoutMs } = options;
  if (timeoutMs === 0) return wait;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      options.expire();
      reject(new ServerTimeoutError(options.what, timeoutMs));
    }, timeoutMs);
    wait.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The connection a pool hands out (`waiting`) within `timeoutMs`; one that comes after the
 * bound passed is given back to the pool (`release`).
 */
export function connectionWithin<C>(
  waiting: Promise<C>,
  timeoutMs: number,
  release: (connection: C) => void,
): Promise<C> {
  return withinBound({
    wait: waiting,
    timeoutMs,
    what: "connection",
    expire: () => {
      waiting.then(release, () => {});
    },
  });
}

/**
 * `target` with the methods `overrides` names replaced and every other one bound to it: a
 * driver's pool or connection as the store uses it, its waits bounded.
 */
export function overriding<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, property) {
      if (typeof property === "string" && Object.hasOwn(overrides, property))
        return overrides[property];
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
