import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";

/** Sent with every response: no inline script or style, nothing from other origins. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  if (bare.startsWith("::ffff:")) return isLoopbackHost(bare.slice(7));
  return isIP(bare) === 4 && bare.startsWith("127.");
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Compares a presented token with the expected one in constant time. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * Why a request another site's page made is refused, or undefined: `Sec-Fetch-Site` says
 * `cross-site` or `same-site` (another port on the same host is the same site), or, from a
 * client that does not say (no `Sec-Fetch-Site`), an `Origin` names another host than the
 * request's `Host`. The page's own requests say `same-origin` (and
 * carry no Origin, or its own); an address bar says `none`; curl sends neither. A link from
 * another site to the page itself (a top-level navigation: the page holds no ledger data, and
 * asks for it same-origin) opens it.
 */
export function crossSiteRefusal(
  headers: IncomingHttpHeaders,
  pathname: string,
): string | undefined {
  const site = headers["sec-fetch-site"];
  const navigation =
    headers["sec-fetch-mode"] === "navigate" &&
    headers["sec-fetch-dest"] === "document" &&
    pathname === "/";
  if ((site === "cross-site" || site === "same-site") && !navigation)
    return `a request from another site's page (Sec-Fetch-Site: ${site})`;
  // A browser that says `same-origin` (or `none`) is believed over Origin and Host: a reverse
  // proxy in front of the viewer may rewrite Host, and the page's own requests must pass.
  if (site === "same-origin" || site === "none") return undefined;
  const origin = headers.origin;
  if (origin !== undefined && originHost(origin) !== headers.host?.toLowerCase())
    return "a request from another origin (Origin)";
  return undefined;
}

/** The host (with its port) an Origin names; undefined for `null` or a malformed one. */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
