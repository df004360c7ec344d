import Database from "better-sqlite3";
import { loadMigrations } from "../../sql/migrations.js";

/**
 * A SQLite file as an older release of the store left it: the first `count` shipped
 * migrations applied and recorded, for upgrade tests to fill with that schema's rows.
 */
export function databaseAtMigration(path: string, count: number): Database.Database {
  const database = new Database(path);
  for (const migration of loadMigrations("sqlite").slice(0, count)) {
    for (const statement of migration.statements) database.exec(statement);
    database
      .prepare("INSERT INTO schema_version (version, tag, applied_at) VALUES (?, ?, 'then')")
      .run(migration.version, migration.tag);
  }
  return database;
}
