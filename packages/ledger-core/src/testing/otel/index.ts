// Apart from `@agent-ledger/core/testing`, which a store's conformance tests import: that
// entry loads no OpenTelemetry package, this one loads the SDK.
export { exportedSpans } from "./exported-spans.js";
