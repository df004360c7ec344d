import { defineConfig } from "drizzle-kit";

// Migrations are generated offline (no database needed) and shipped in drizzle/sqlite.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/stores/sqlite/schema.ts",
  out: "./drizzle/sqlite",
});
