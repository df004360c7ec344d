import { readFileSync } from "node:fs";

/**
 * The viewer's files (packages/cli/static), by name: the page, its stylesheet, and its ES
 * modules (`app.js` is the entry; it imports the others by these names).
 */
const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "decision-boxes.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "event-detail.js": "text/javascript; charset=utf-8",
  "event-list.js": "text/javascript; charset=utf-8",
  "event-window.js": "text/javascript; charset=utf-8",
  "format.js": "text/javascript; charset=utf-8",
  "open-sessions.js": "text/javascript; charset=utf-8",
  "run-tree.js": "text/javascript; charset=utf-8",
  "session-view.js": "text/javascript; charset=utf-8",
  "sessions-list.js": "text/javascript; charset=utf-8",
};

/** The names of the viewer's files, as served at `/<name>` (index.html at `/` too). */
export const STATIC_FILE_NAMES: readonly string[] = Object.keys(TYPES);

/** The viewer's files (packages/cli/static), read once. */
export function loadStaticFiles(): Map<string, { body: Buffer; type: string }> {
  const directory = new URL("../../static/", import.meta.url);
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(TYPES))
    files.set(name, { body: readFileSync(new URL(name, directory)), type });
  return files;
}
