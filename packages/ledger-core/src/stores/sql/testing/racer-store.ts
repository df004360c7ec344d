import type { EventStore } from "../../../store/event-store.js";

/** How a race child or a test finds one isolated store. */
export interface RacerTarget {
  kind: "sqlite" | "postgres" | "mysql" | "redis";
  /** A file path (sqlite), a connection string (postgres) or a URI (mysql, redis). */
  location: string;
  /** PostgreSQL schema that isolates the test. */
  schema?: string;
  /** Redis key prefix that isolates the test. */
  keyPrefix?: string;
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
    case "redis": {
      const { RedisEventStore } = await import("../../redis/index.js");
      return new RedisEventStore({
        url: target.location,
        ...(target.keyPrefix === undefined ? {} : { keyPrefix: target.keyPrefix }),
      });
    }
  }
}
