import { isIP } from "node:net";
import { hostname, type NetworkInterfaceInfo, networkInterfaces } from "node:os";

/** The machine a viewer runs on, as reachableUrls reads it (given in tests). */
export interface Machine {
  hostname: string;
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>;
}

function thisMachine(): Machine {
  return { hostname: hostname(), interfaces: networkInterfaces() };
}

/** The address family a host binds every address of (0.0.0.0, ::), else undefined. */
function everyAddressOf(host: string): "IPv4" | "IPv6" | undefined {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare) === 4) return /^0+\.0+\.0+\.0+$/.test(bare) ? "IPv4" : undefined;
  if (isIP(bare) === 6) return /^[0:]+$/.test(bare) ? "IPv6" : undefined;
  return undefined;
}

/** `url` with its host put as `host` (an IPv6 address in brackets). */
function withHost(url: string, host: string): string {
  const shown = new URL(url);
  shown.hostname = isIP(host) === 6 ? `[${host}]` : host;
  return shown.href;
}

/**
 * What `serve` prints of a viewer bound to `host` at `url`: bound to every address of the
 * machine (0.0.0.0, ::), its URL names that address, which opens nothing on a colleague's
 * machine. Then `url` names the machine (its hostname) and `others` are its own addresses, but
 * loopback and link-local ones (a link-local URL needs the colleague's own interface name), for
 * where that name does not resolve; `said` says so. Any other host is a URL that opens as it is.
 */
export function reachableUrls(
  url: string,
  host: string,
  machine: Machine = thisMachine(),
): { url: string; others: string[]; said?: string } {
  const family = everyAddressOf(host);
  if (family === undefined) return { url, others: [] };
  const addresses = Object.values(machine.interfaces)
    .flatMap((each) => each ?? [])
    .filter(
      (each) =>
        !each.internal &&
        // `::` takes IPv4 connections too, where the system allows (dual stack).
        (family === "IPv6" || each.family === "IPv4") &&
        !(each.family === "IPv6" && /^fe[89ab]/i.test(each.address)),
    )
    // IPv4 first: the shorter to read out to a colleague.
    .sort((a, b) => (a.family === b.family ? 0 : a.family === "IPv4" ? -1 : 1));
  const others = addresses.map((each) => withHost(url, each.address));
  const every = `bound to ${host}, every ${family === "IPv4" ? "IPv4 " : ""}address of this machine`;
  return {
    url: withHost(url, machine.hostname),
    others,
    said:
      others.length > 0
        ? `${every}: a colleague opens the URL above, or one of these where that name does not resolve:`
        : `${every}: a colleague opens the URL above where that name resolves; this machine has no other address than loopback`,
  };
}
