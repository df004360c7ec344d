import {
  type AppendRequest,
  type AppendResult,
  MemoryEventStore,
  StoreUnavailableError,
} from "@agent-ledger/core";

/**
 * A memory store whose appends can be made to reject (a database that went away while the
 * process lives), to test that the adapter fails closed. `failWhen` sees each append request.
 * It fails as the real stores do when their server is unreachable: `store-unavailable`. A
 * process that dies is not this: crash tests kill a real child (crash-scenarios.test.data.ts).
 */
export class FailingStore extends MemoryEventStore {
  failWhen: ((request: AppendRequest) => boolean) | undefined;

  override async append(request: AppendRequest): Promise<AppendResult> {
    if (this.failWhen?.(request)) throw new StoreUnavailableError("store is down");
    return super.append(request);
  }
}
