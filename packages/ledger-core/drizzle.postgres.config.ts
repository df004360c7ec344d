import { defineConfig } from "drizzle-kit";

// Migrations are generated offline (no database needed) and shipped in drizzle/postgres.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/stores/postgres/schema.ts",
  out: "./drizzle/postgres",
});
