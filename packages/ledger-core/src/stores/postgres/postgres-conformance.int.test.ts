import { afterAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const places = freshPlaces(afterAll);

describe.skipIf(!available)("PostgresEventStore", () => {
  // Each case gets a fresh PostgreSQL schema (created by init()); nothing is skipped.
  runEventStoreConformance(
    () =>
      new PostgresEventStore({
        connectionString: SERVER_URLS.postgres,
        schema: places.schema("conf"),
      }),
    { describe, it },
  );
});
