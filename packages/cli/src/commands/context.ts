import type { EventStore } from "@agent-ledger/core";
import type { CliIo } from "../io.js";

/** What every command gets: its own arguments, the IO, and the store opened lazily. */
export interface CommandContext {
  args: string[];
  io: CliIo;
  storeUrl: string;
  /** Where `storeUrl` came from: `--store`, `$AGENT_LEDGER_STORE`, or the default. */
  storeSource: "flag" | "env" | "default";
  /**
   * The store, opened once. A ledger of an older release is refused (exit 1) and left as it
   * was, unless `upgrade` (`agent-ledger upgrade` alone).
   */
  openStore(options?: { upgrade?: boolean }): Promise<EventStore>;
}
