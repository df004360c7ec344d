import {
  type AppendRequest,
  type AppendResult,
  MemoryEventStore,
  type NewEvent,
  StoreUnavailableError,
} from "@agent-ledger/core";

/**
 * A memory store whose appends can be made to reject (a database that went away), to test
 * that the adapter fails closed. `failWhen` sees each append request. It fails as the real
 * stores do when their server is unreachable: `store-unavailable`.
 */
export class FailingStore extends MemoryEventStore {
  failWhen: ((request: AppendRequest) => boolean) | undefined;

  override async append(request: AppendRequest): Promise<AppendResult> {
    if (this.failWhen?.(request)) throw new StoreUnavailableError("store is down");
    return super.append(request);
  }

  /**
   * Goes down for good right after the first append holding an event matching `when` (that
   * append commits): the in-process stand-in for a process that died at that point. Set
   * `failWhen` to undefined to bring the store back for the next process.
   */
  goDownAfter(when: (event: NewEvent) => boolean): void {
    let down = false;
    this.failWhen = (request) => {
      if (down) return true;
      if (request.events.some(when)) down = true;
      return false;
    };
  }
}
