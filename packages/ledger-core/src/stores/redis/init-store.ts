import {
  InvalidArgumentError,
  newerLedgerError,
  noLedgerError,
  olderLedgerError,
  StoreUnavailableError,
} from "../../events/errors.js";
import type { InitOptions } from "../../store/event-store.js";
import { refusedConfiguration } from "../server-refusal.js";
import {
  assertSelectedDatabase,
  assertServerVersion,
  evictsLedgerKeys,
  readDurability,
  unavailable,
} from "./client.js";
import { schemaKey } from "./keys.js";
import { migrateBlobsFromLayout1, migrateSessionIndexFromLayout2 } from "./layout-migration.js";
import type { RedisStoreState } from "./store-state.js";

/**
 * Version of the key layout (keys.ts); init() moves a layout-1 or 2 database to it
 * (layout-migration.ts), unless told not to upgrade, and refuses any other.
 */
const LAYOUT_VERSION = "3";

/**
 * The key layout version under the prefix, null where no ledger is. A value the ledger never
 * writes (not a whole number), or a key of another type, is another application's key where the
 * ledger keeps its version: refused at `path` (invalid-argument, not store-unavailable, which
 * is retried for ever), the key left as it was.
 */
async function layoutVersion(
  state: RedisStoreState,
  key: string,
  path: string,
): Promise<string | null> {
  let version: string | null;
  try {
    version = await state.client.get(key);
  } catch (error) {
    if (!(error instanceof Error && error.message.startsWith("WRONGTYPE"))) throw error;
    throw foreignKey(key, "a key of another type than the ledger's", path);
  }
  if (version === null || /^[1-9]\d{0,8}$/.test(version)) return version;
  throw foreignKey(key, `${JSON.stringify(version.slice(0, 40))}, no key layout version`, path);
}

function foreignKey(key: string, holding: string, path: string): InvalidArgumentError {
  return new InvalidArgumentError(
    path,
    `the key ${key} holds ${holding}: agent-ledger did not write it, and keeps its key layout version there. Give the ledger a key prefix of its own (?keyPrefix= in the URL, or the keyPrefix option). Nothing was written`,
    { details: { key } },
  );
}

/**
 * `RedisEventStore.init`: checks the server, then opens (or makes, or moves) the key layout.
 * Returns the server's durability settings, which `describe()` reports. `path` names the option
 * that holds the URL or client, for the errors about them.
 */
export async function initStore(
  state: RedisStoreState,
  location: string,
  path: string,
  options?: InitOptions,
): Promise<Record<string, string>> {
  try {
    await assertServerVersion(state.client);
    await assertSelectedDatabase(state.client);
    // Before anything is written: a server that may evict the ledger's keys is refused.
    const durability = await readDurability(state.client);
    const evicts = evictsLedgerKeys(durability);
    if (evicts !== undefined) throw new StoreUnavailableError(evicts);
    const key = schemaKey(state.prefix);
    let version = await layoutVersion(state, key, path);
    if (version === null && options?.create === false)
      throw noLedgerError(location, `no agent-ledger keys under ${JSON.stringify(state.prefix)}`);
    // Written only where it is missing: a user that may only read (an on-call person's
    // ACL) opens a ledger at this layout too.
    if (version === null) {
      await state.client.set(key, LAYOUT_VERSION, "NX");
      version = await state.client.get(key);
    }
    if ((version === "1" || version === "2") && options?.upgrade === false)
      throw olderLedgerError({
        location,
        what: "key layout",
        found: Number(version),
        reads: Number(LAYOUT_VERSION),
      });
    // Each step is idempotent, and the version is written once, at the end: a process that
    // finished while another was still moving keys is never set back to an older layout.
    if (version === "1" || version === "2") {
      if (version === "1") await migrateBlobsFromLayout1(state.client, state.prefix);
      await migrateSessionIndexFromLayout2(state.client, state.prefix);
      await state.client.set(key, LAYOUT_VERSION);
      version = LAYOUT_VERSION;
    }
    if (Number(version) > Number(LAYOUT_VERSION))
      throw newerLedgerError({
        location,
        what: "key layout",
        found: Number(version),
        reads: Number(LAYOUT_VERSION),
      });
    if (version !== LAYOUT_VERSION) {
      throw new StoreUnavailableError(
        `redis keys under ${JSON.stringify(state.prefix)} use layout version ${version}; this version of agent-ledger reads version ${LAYOUT_VERSION}`,
      );
    }
    return durability;
  } catch (error) {
    const failed = unavailable(error, "init", state.client);
    // A server that refused the store's credentials, database number or TLS: told as such.
    throw refusedConfiguration(failed, { location, path, create: options?.create }) ?? failed;
  }
}
