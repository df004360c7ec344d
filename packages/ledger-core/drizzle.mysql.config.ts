import { defineConfig } from "drizzle-kit";

// Migrations are generated offline (no database needed) and shipped in drizzle/mysql.
export default defineConfig({
  dialect: "mysql",
  schema: "./src/stores/mysql/schema.ts",
  out: "./drizzle/mysql",
});
