import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "../../events/errors.js";
import { redactUrl } from "../../store/redact-url.js";

/**
 * The path of a `sqlite:./x.db`, `sqlite::memory:`, `sqlite:///abs.db` (or
 * `sqlite://localhost/abs.db`; another host is refused) or `file:` URL. A query
 * or a fragment is refused (assertNoQuery, assertNoFragment); in a `sqlite:` or `file:` path
 * (not `file://`, which decodes every escape) `%3F` stands for a "?" of the file's name and
 * `%23` for a "#", and nothing else is decoded.
 */
export function sqlitePath(url: string): string {
  assertNoQuery(url);
  assertNoFragment(url);
  if (url.startsWith("file:")) {
    if (url.startsWith("file://")) {
      try {
        return fileURLToPath(url);
      } catch (error) {
        // A host (file://server/share) or an encoded "/": no local path.
        throw new InvalidArgumentError("$.url", (error as Error).message, { cause: error });
      }
    }
    return withEscapedMarks(url.slice("file:".length));
  }
  if (!url.startsWith("sqlite:"))
    throw new InvalidArgumentError("$.url", "a SQLite URL starts with sqlite: or file:");
  let path = url.slice("sqlite:".length);
  if (path.startsWith("//")) path = withoutLocalHost(url, path.slice(2));
  if (path.length === 0)
    throw new InvalidArgumentError("$.url", "a SQLite URL needs a path, e.g. sqlite:./ledger.db");
  return withEscapedMarks(path);
}

/**
 * The path after `sqlite://`, read as a file: URL's: an empty host or `localhost`, then an
 * absolute path. Any other host is refused: `sqlite://tmp/x.db` was read as the relative path
 * `tmp/x.db` (and `sqlite://localhost/tmp/z.db` as `localhost/tmp/z.db`), a ledger made in
 * whatever folder the process ran in while `sqlite:///tmp/x.db` named `/tmp/x.db`.
 */
function withoutLocalHost(url: string, afterSlashes: string): string {
  const slash = afterSlashes.indexOf("/");
  const host = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
  if (host === "" || host.toLowerCase() === "localhost")
    return slash < 0 ? "" : afterSlashes.slice(slash);
  const rest = slash < 0 ? "" : afterSlashes.slice(slash);
  const relative = `${host}${rest}`;
  throw new InvalidArgumentError(
    "$.url",
    `${JSON.stringify(url)} names a host (${JSON.stringify(host)}), and a SQLite ledger is a file on this machine: after sqlite:// comes an absolute path, as in a file: URL (sqlite:///var/ledger.db, or sqlite://localhost/var/ledger.db). For the absolute path /${relative} write sqlite:///${relative}; for ${relative} in the current folder write sqlite:./${relative}`,
  );
}

/**
 * A path with each `%3F` as the "?" and each `%23` as the "#" it stands for; other escapes stay
 * (my%20ledger.db).
 */
function withEscapedMarks(path: string): string {
  return path.replace(/%3F/gi, "?").replace(/%23/g, "#");
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

/**
 * Refuses a fragment in a SQLite URL: `sqlite:./run#1.db` opened a file named `run#1.db`, where
 * `file:///tmp/run#1.db` (a URL, whose `#` starts a fragment) opened `/tmp/run`: one text, two
 * files. Refused in every form, the two cannot disagree; `%23` names a "#" of the file's name.
 */
function assertNoFragment(url: string): void {
  const start = url.indexOf("#");
  if (start < 0) return;
  throw new InvalidArgumentError(
    "$.url",
    `a SQLite URL takes no fragment (${JSON.stringify(url.slice(start))}): a file: URL would drop it and open another file, and a sqlite: path would take it for part of the file's name; for a file whose name holds "#", write %23 in its place (sqlite:./a%23b.db opens a#b.db)`,
  );
}
