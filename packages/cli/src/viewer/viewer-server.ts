import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type EventStore, isBlobRef, isValidId, LedgerError, redactUrl } from "@agent-ledger/core";
import { usageError } from "../errors.js";
import { jsonChunks } from "../json-writer.js";
import { sessionHasEvents } from "../store.js";
import { eventPageJson, findEvent } from "./event-pages.js";
import { OPEN_WORK_PAGE, openWorkPage } from "./open-work-page.js";
import { inspectForPage, unchangedSince } from "./page-inspection.js";
import { crossSiteRefusal, isLoopbackHost, SECURITY_HEADERS, tokenMatches } from "./security.js";
import { loadStaticFiles, STATIC_FILE_NAMES } from "./static-files.js";

export interface ViewerOptions {
  store: EventStore;
  /** Default 127.0.0.1. Any non-loopback address requires `token`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** When set, every request must carry it (`Authorization: Bearer`, `X-Agent-Ledger-Token` or `?token=`). */
  token?: string;
  /** Poll interval the page uses for live updates (ms, default 1000). */
  pollMs?: number;
  /**
   * Named in the `resolve` commands the page shows, as `inspect` names it (`redactUrl`: a
   * password as `***`, with `passwordLeftOut`). `serve` passes `commandStoreUrl`'s answer.
   */
  storeUrl?: string;
}

export interface ViewerHandle {
  /** Base URL (with `?token=` when a token is set). */
  url: string;
  /** URL of one session's page. */
  sessionUrl(sessionId: string): string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BLOB_BYTES = 256 * 1024;
/**
 * Served without the token: the viewer's code and stylesheet (every static file but the page),
 * loaded by `<script src>`, `import` and `<link href>`, which carry no token.
 */
const PUBLIC_FILES = new Set([
  ...STATIC_FILE_NAMES.filter((name) => name !== "index.html").map((name) => `/${name}`),
  "/favicon.ico",
]);
/** Sessions per page of /api/sessions (the viewer fetches the next on request). */
const SESSIONS_PAGE = 1000;
const JSON_TYPE = "application/json; charset=utf-8";

function send(
  response: ServerResponse,
  status: number,
  body: string | Buffer,
  type = JSON_TYPE,
): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
  });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, JSON.stringify(value));
}

/**
 * `value` as JSON made without recursion, a chunk at a time as the client takes it (sent
 * chunked: its length is known once it is made): a session's inspection is the tree of its
 * runs, and JSON.stringify overflowed the call stack on a chain of about 2,050 child runs
 * (handoff after handoff), a 500 in place of the page.
 */
async function streamJson(response: ServerResponse, status: number, value: unknown): Promise<void> {
  response.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": JSON_TYPE });
  // One chunk made ahead of the client, not more.
  const body = Readable.from(jsonChunks(value, { compact: true }), { highWaterMark: 1 });
  await pipeline(body, response);
}

/** A path segment decoded, or undefined when its %-escapes are malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The session a request names, and what it asks of it: its inspection, a page of its events,
 * or one event by id: `/api/sessions/<id>[/events|/event]` or `/api/session[/events|/event]?id=<id>`.
 * The page uses the query: a browser folds a path segment "." or ".." (even written %2E) out
 * of the URL, so sessions with those ids were out of reach.
 */
function sessionRouteOf(
  url: URL,
): { sessionId: string | undefined; part: "" | "events" | "event" } | undefined {
  const query = /^\/api\/session(?:\/(events|event))?$/.exec(url.pathname);
  if (query)
    return {
      sessionId: url.searchParams.get("id") ?? undefined,
      part: (query[1] ?? "") as "" | "events" | "event",
    };
  const match = /^\/api\/sessions\/([^/]+)(?:\/(events|event))?$/.exec(url.pathname);
  if (!match) return undefined;
  return {
    sessionId: decodeSegment(match[1] as string),
    part: (match[2] ?? "") as "" | "events" | "event",
  };
}

/**
 * `after` (a session id) and `limit` (sessions, at most `most`: more is a page, and nextCursor
 * says where to go on) of a request for a list of sessions, or what is wrong with them.
 * `limit` was once ignored: every page held a whole page whatever was asked.
 */
function sessionListQuery(url: URL, most: number): { after?: string; limit: number } | string {
  const after = url.searchParams.get("after") ?? undefined;
  if (after !== undefined && !isValidId(after))
    return "after is a session id: 1-255 characters without control characters";
  const limit = url.searchParams.get("limit") ?? undefined;
  if (limit !== undefined && !/^[1-9]\d{0,9}$/.test(limit))
    return `limit is a whole number of sessions from 1 (at most ${most} a page), not ${JSON.stringify(limit)}`;
  return {
    ...(after === undefined ? {} : { after }),
    limit: Math.min(Number(limit ?? most), most),
  };
}

function badRequest(response: ServerResponse, error: string): void {
  sendJson(response, 400, { error, code: "invalid-argument" });
}

function notFound(response: ServerResponse, error: string): void {
  sendJson(response, 404, { error, code: "not-found" });
}

function presentedToken(request: IncomingMessage, url: URL): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith("Bearer ")) return authorization.slice(7);
  const header = request.headers["x-agent-ledger-token"];
  if (typeof header === "string") return header;
  return url.searchParams.get("token") ?? undefined;
}

/**
 * Starts the read-only viewer: the sessions list, a session's timeline, causal tree, unresolved
 * attempts and event payloads (as text), polling for new events. Binds 127.0.0.1 on a free
 * port by default; refuses a non-loopback address without a token.
 */
export async function startViewer(options: ViewerOptions): Promise<ViewerHandle> {
  const host = options.host ?? "127.0.0.1";
  const loopback = isLoopbackHost(host);
  if (!loopback && !options.token)
    throw usageError(
      `refusing to serve on ${host} without --token: the ledger holds prompts, tool arguments and results`,
      "bind 127.0.0.1 (the default), or pass --token <secret> and share the printed URL",
    );
  const { store, token } = options;
  const files = loadStaticFiles();
  const pollMs = options.pollMs ?? 1000;
  const { storeUrl } = options;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://viewer.invalid");
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.setHeader("Allow", "GET, HEAD");
      return sendJson(response, 405, { error: "the viewer is read-only" });
    }
    // Another site's page may send the browser here (a link, a script, an image): it reads
    // nothing, but it is refused all the same, before the token is looked at.
    const crossSite = crossSiteRefusal(request.headers, url.pathname);
    if (crossSite !== undefined)
      return sendJson(response, 403, {
        error: `refused ${crossSite}: the viewer answers only its own page`,
      });
    // DNS rebinding: without a token, only loopback Host names reach the data.
    if (!token) {
      const hostHeader = request.headers.host ?? "";
      const hostname = hostHeader.startsWith("[")
        ? hostHeader.slice(0, hostHeader.indexOf("]") + 1)
        : (hostHeader.split(":")[0] ?? "");
      if (!isLoopbackHost(hostname))
        return sendJson(response, 403, { error: "unexpected Host header" });
    } else if (
      // The page's script and stylesheet hold no ledger data, and a browser asks for them
      // without the token the page's own URL carries: refused, the viewer never started.
      !PUBLIC_FILES.has(url.pathname) &&
      !tokenMatches(presentedToken(request, url), token)
    ) {
      return sendJson(response, 401, {
        error: "a valid token is required (?token= or Authorization: Bearer)",
      });
    }
    const path = url.pathname;
    const file = files.get(path === "/" ? "index.html" : path.slice(1));
    if (file) return send(response, 200, file.body, file.type);
    if (path === "/favicon.ico") {
      response.writeHead(204, SECURITY_HEADERS);
      return response.end();
    }
    if (path === "/api/config") {
      const description = store.describe();
      return sendJson(response, 200, {
        store: {
          kind: description.kind,
          location: description.location ? redactUrl(description.location) : null,
        },
        pollMs,
      });
    }
    if (path === "/api/sessions") {
      // A page of sessions after `after`, with `nextCursor` when more follow: the list stopped
      // at 5,000 without a word, and sessions after them (by id) could not be reached.
      const query = sessionListQuery(url, SESSIONS_PAGE);
      if (typeof query === "string") return badRequest(response, query);
      return sendJson(response, 200, await store.listSessions(query));
    }
    if (path === "/api/open-work") {
      // The page "sessions with something open" asks for these one after the other: each
      // session is read whole, so a request reads a bounded number of them (`checked`).
      const query = sessionListQuery(url, OPEN_WORK_PAGE);
      if (typeof query === "string") return badRequest(response, query);
      return sendJson(response, 200, await openWorkPage(store, query));
    }
    const sessionRoute = sessionRouteOf(url);
    if (sessionRoute) {
      const { sessionId } = sessionRoute;
      if (sessionId === undefined || !isValidId(sessionId))
        return badRequest(
          response,
          "a session id is 1-255 characters without control characters, %-encoded once",
        );
      if (sessionRoute.part === "events") {
        const after = Number(url.searchParams.get("after") ?? 0);
        const limit = Math.min(Number(url.searchParams.get("limit") ?? 500), 2000);
        if (!Number.isSafeInteger(after) || after < 0 || !Number.isSafeInteger(limit) || limit < 1)
          return badRequest(response, "after and limit must be non-negative integers");
        const raw = url.searchParams.get("raw") === "1";
        const page = await eventPageJson(store, { sessionId, after, limit, raw });
        // An empty page of a session that holds no event: a misspelt id read as "no events yet".
        if (page.count === 0 && !(await sessionHasEvents(store, sessionId)))
          return notFound(response, `unknown session ${sessionId}`);
        return send(response, 200, page.json);
      }
      if (sessionRoute.part === "event") {
        const eventId = url.searchParams.get("eventId") ?? "";
        if (!isValidId(eventId))
          return badRequest(response, "eventId is 1-255 characters without control characters");
        const event = await findEvent(store, sessionId, eventId);
        if (event === undefined)
          return notFound(response, `no event ${eventId} in session ${sessionId}`);
        return sendJson(response, 200, { event });
      }
      // `after`: the lastCursor of the inspection the page shows. Unchanged since, the answer
      // says so in a few bytes: a long session is inspected again only when it grew.
      const after = url.searchParams.get("after");
      if (after !== null) {
        const cursor = Number(after);
        if (!Number.isSafeInteger(cursor) || cursor < 0)
          return badRequest(response, "after must be a non-negative integer");
        if (await unchangedSince(store, sessionId, cursor))
          return sendJson(response, 200, { unchanged: true, lastCursor: cursor });
      }
      // What to do about each unresolved attempt, decided as `agent-ledger inspect` decides it.
      const inspection = await inspectForPage(
        store,
        sessionId,
        storeUrl === undefined ? {} : { storeUrl },
      );
      if (inspection.eventCount === 0) return notFound(response, `unknown session ${sessionId}`);
      // Deleted part way through the read (prune in another process): runs would show open.
      if (!(await sessionHasEvents(store, sessionId)))
        return notFound(response, `session ${sessionId} was deleted while the viewer read it`);
      return streamJson(response, 200, inspection);
    }
    const blobMatch = /^\/api\/blobs\/([^/]+)$/.exec(path);
    if (blobMatch) {
      const ref = decodeSegment(blobMatch[1] as string);
      if (ref === undefined || !isBlobRef(ref))
        return badRequest(response, "not a sha256:<hex> reference");
      const bytes = await store.getBlob(ref);
      const truncated = bytes.byteLength > MAX_BLOB_BYTES;
      const text = new TextDecoder("utf-8", { fatal: false }).decode(
        truncated ? bytes.subarray(0, MAX_BLOB_BYTES) : bytes,
      );
      return sendJson(response, 200, { ref, size: bytes.byteLength, truncated, text });
    }
    return notFound(response, "not found");
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return response.destroy();
      if (LedgerError.isInstance(error, "not-found")) return notFound(response, error.message);
      sendJson(response, 500, { error: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const base = `http://${shownHost}:${address.port}/`;
  const query = token ? `?token=${encodeURIComponent(token)}` : "";
  return {
    url: `${base}${query}`,
    sessionUrl: (sessionId) => `${base}${query}#/session/${encodeURIComponent(sessionId)}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
