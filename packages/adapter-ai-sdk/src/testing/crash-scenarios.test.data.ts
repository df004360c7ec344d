import type { EventStore } from "@agent-ledger/core";
import { crashAfterToolInput, crashInsideAnnouncedTool } from "./announcing-agent.test.data.js";
import {
  crashAfterRefundDenial,
  crashAtRefundApproval,
  crashInsideApprovedRefund,
} from "./approving-chat.test.data.js";
import { crashInSecondTurn } from "./chat-server.test.data.js";
import { crashingChat } from "./crashing-chat.test.data.js";
import { crashInsideDocumentEmbedding } from "./embedding.test.data.js";
import { crashInsideSecondStep } from "./failing-stream.test.data.js";
import { crashAfterJudge } from "./judging-agent.test.data.js";
import { crashingNested } from "./nested-agent.test.data.js";
import { crashMidStreamAfterPrint } from "./photo-agent.test.data.js";
import {
  CALLS_IN_A_BLOB,
  crashInsideApprovedBesideDenied,
  crashInsideLaterApprovedRefund,
  crashInsideRestoredApproval,
} from "./refund-shop.test.data.js";
import { crashAfterRepair } from "./repairing-agent.test.data.js";
import { crashInsideLookupC3, crashInsideSendC2 } from "./replay-agent.test.data.js";
import {
  crashAfterAbandonments,
  crashAfterRacedOutcome,
  crashAfterResearchEnd,
  crashAfterStreamedCallsAtOnce,
  crashInsideInnerCall,
  crashInsideNotIdempotent,
  crashInsideSecondCallAtOnce,
  crashParallelResearchAtFinalCall,
  crashResearchAtFinalCall,
} from "./research-agent.test.data.js";
import { crashInsideUiApprovedRefund } from "./ui-chat.test.data.js";

/**
 * The runs a test can crash in a child process, by the name the child is given: each records
 * to the store it is handed and stops at its crash point (`crashHere`) until it is killed.
 */
export const crashScenarios = {
  "announced tool input recorded, its stream still open": crashAfterToolInput,
  "announced tool input, inside the tool": crashInsideAnnouncedTool,
  "approval judged, its stream still open": crashAfterJudge,
  "chat right after its denial's append": crashAfterRefundDenial,
  "chat inside send": crashingChat,
  "chat inside the refund its user approved": crashInsideApprovedRefund,
  "chat paused at the refund's approval": crashAtRefundApproval,
  "chat server answering turn 2": crashInSecondTurn,
  "embedding inside the documents call": crashInsideDocumentEmbedding,
  "nested agent at the final call": crashingNested("final"),
  "nested agent inside the second lookup": crashingNested("second lookup"),
  "photo printed, mid-stream in the next step": crashMidStreamAfterPrint,
  "refund shop inside the refund approved on the restored turn": (store) =>
    crashInsideRestoredApproval(store),
  "refund shop inside the approved refund, its completion in a blob": (store) =>
    crashInsideRestoredApproval(store, CALLS_IN_A_BLOB),
  "refund shop inside the approved refund, the other refund denied in the same message":
    crashInsideApprovedBesideDenied,
  "refund shop inside a later turn's approved refund reusing the id":
    crashInsideLaterApprovedRefund,
  "repair answered, its stream still open": crashAfterRepair,
  "replay inside lookup c3": crashInsideLookupC3,
  "replay inside send c2": crashInsideSendC2,
  "research at once, after both streamed inner calls": crashAfterStreamedCallsAtOnce,
  "research at once, inside its second inner call": crashInsideSecondCallAtOnce,
  "research at the final call": crashResearchAtFinalCall,
  "research, once its child run's end is committed": crashAfterResearchEnd("run.completed"),
  "research, once its outcome is committed": crashAfterResearchEnd("tool.completed"),
  "research in parallel at the final call": crashParallelResearchAtFinalCall,
  "research inside its second inner call": crashInsideInnerCall,
  "research, not idempotent, inside its inner call": crashInsideNotIdempotent,
  "research resumed and abandoned, once its abandonment is committed": crashAfterAbandonments(1),
  "research resumed and abandoned, once its inner call's is committed": crashAfterAbandonments(2),
  "research, racing its inner call, once its outcome is committed": crashAfterRacedOutcome,
  "stream failed mid-way, then inside step 2": crashInsideSecondStep,
  "useChat inside the refund its user approved": crashInsideUiApprovedRefund,
} satisfies Record<string, (store: EventStore) => Promise<void>>;

export type CrashScenarioName = keyof typeof crashScenarios;

export const isCrashScenarioName = (name: string | undefined): name is CrashScenarioName =>
  name !== undefined && Object.hasOwn(crashScenarios, name);
