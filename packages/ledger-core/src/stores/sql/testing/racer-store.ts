import type { EventStore } from "../../../store/event-store.js";

/** How a race child or a test finds one isolated store. */
export interface RacerTarget {
  kind: "sqlite" | "postgres" | "mysql";
  /** A file path (sqlite), a connection string (postgres) or a URI (mysql). */
  location: string;
  /** PostgreSQL schema that isolates the test. */
  schema?: string;
}

/** Opens the target's store (loading only its driver). */
export async function openRacerStore(target: RacerTarget): Promise<EventStore> {
  switch (target.kind) {
    case "sqlite": {
      const { SqliteEventStore } = await import("../../sqlite/index.js");
      return new SqliteEventStore({ path: target.location });
    }
    case "postgres": {
      const { PostgresEventStore } = await import("../../postgres/index.js");
      return new PostgresEventStore({
        connectionString: target.location,
        ...(target.schema === undefined ? {} : { schema: target.schema }),
      });
    }
    case "mysql": {
      const { MysqlEventStore } = await import("../../mysql/index.js");
      return new MysqlEventStore({ uri: target.location });
    }
  }
}
