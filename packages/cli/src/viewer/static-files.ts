import { readFileSync } from "node:fs";

const types: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/** The viewer's files (packages/cli/static), read once. */
export function loadStaticFiles(): Map<string, { body: Buffer; type: string }> {
  const directory = new URL("../../static/", import.meta.url);
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(types))
    files.set(name, { body: readFileSync(new URL(name, directory)), type });
  return files;
}
