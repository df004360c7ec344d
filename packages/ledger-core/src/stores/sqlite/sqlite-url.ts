import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "../../events/errors.js";
import { redactUrl } from "../../store/redact-url.js";

/**
 * The path of a `sqlite:./x.db`, `sqlite::memory:`, `sqlite:///abs.db` or `file:` URL. A query
 * is refused (assertNoQuery); in a `sqlite:` or `file:` path (not `file://`, which decodes every
 * escape) `%3F` stands for a "?" of the file's name, and nothing else is decoded.
 */
export function sqlitePath(url: string): string {
  assertNoQuery(url);
  if (url.startsWith("file:")) {
    if (url.startsWith("file://")) {
      try {
        return fileURLToPath(url);
      } catch (error) {
        // A host (file://server/share) or an encoded "/": no local path.
        throw new InvalidArgumentError("$.url", (error as Error).message, { cause: error });
      }
    }
    return withQuestionMarks(url.slice("file:".length));
  }
  if (!url.startsWith("sqlite:"))
    throw new InvalidArgumentError("$.url", "a SQLite URL starts with sqlite: or file:");
  let path = url.slice("sqlite:".length);
  if (path.startsWith("//")) path = path.slice(2);
  if (path.length === 0)
    throw new InvalidArgumentError("$.url", "a SQLite URL needs a path, e.g. sqlite:./ledger.db");
  return withQuestionMarks(path);
}

/** A path with each `%3F` as the "?" it stands for; other escapes stay (my%20ledger.db). */
function withQuestionMarks(path: string): string {
  return path.replace(/%3F/gi, "?");
}

/**
 * Refuses a query in a SQLite URL: the store reads no parameter, and `sqlite:./ledger.db?mode=ro`
 * opened (to write, created) a second, empty ledger in a file named `ledger.db?mode=ro`, where
 * the server stores refuse what they do not read; `file:///...?mode=ro` dropped it unread. The
 * query is shown redacted (`?password=***`).
 */
function assertNoQuery(url: string): void {
  if (!url.includes("?")) return;
  const shown = redactUrl(url);
  throw new InvalidArgumentError(
    "$.url",
    `a SQLite URL takes no query (${JSON.stringify(shown.slice(shown.indexOf("?")))}): the SQLite store reads no parameter, and a sqlite: path would take it for part of the file's name; for a file whose name holds "?", write %3F in its place (sqlite:./a%3Fb.db opens a?b.db)`,
  );
}
