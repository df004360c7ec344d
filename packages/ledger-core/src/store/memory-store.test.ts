import { describe, it } from "vitest";
import { runEventStoreConformance } from "../testing/conformance.js";
import { MemoryEventStore } from "./memory-store.js";

// The reference store runs the whole suite; nothing is skipped.
runEventStoreConformance(() => new MemoryEventStore(), { describe, it });
