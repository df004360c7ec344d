import type { JsonObject } from "../events/json.js";
import type { FoundFile } from "./atif-files.js";
import { mediaTypeOf } from "./atif-held-data.js";
import { isObject, str } from "./extract.js";

// An MCP tool result's resources, as the result holds them where an adapter records MCP's own
// content (OpenAI Agents' MCP tools, the AI SDK's MCP client: `{ content: [...] }`): an
// embedded resource (`{ type: "resource", resource: { uri, mimeType, text | blob } }`) and a
// link to one (`{ type: "resource_link", uri, name, mimeType }`). The SDKs give the model
// neither as content parts (OpenAI Agents and the AI SDK send their JSON as text; LangChain's
// MCP adapters turn them into their own text and file blocks, read as those), so a step shows
// the recorded result's resources as what they are, never fetched: a text resource as its text,
// any other as a file named in text and listed in `extra.files_omitted`.

/** What a step shows of an MCP resource: its text, or a file it holds as bytes or links to. */
export type McpResource = { kind: "text"; text: string } | { kind: "file"; file: FoundFile };

/**
 * The resource an MCP `resource` or `resource_link` content part gives: a text resource as a
 * text naming its uri (`[resource: file:///notes.md, text/markdown]` then its text), a blob
 * resource as a file of its bytes (base64, as MCP gives them) named by its uri, a link as a
 * file at its uri named by its name. A blob stays a file whatever its media type: no SDK that
 * records this shape showed it to the model as an image. Undefined for any other part.
 */
export function mcpResourceOf(part: JsonObject): McpResource | undefined {
  if (part.type === "resource_link") {
    const uri = str(part.uri);
    if (uri === undefined) return undefined;
    const name = str(part.name);
    const mediaType = mediaTypeOf(part);
    const file: FoundFile = { url: uri, ...(mediaType !== undefined ? { mediaType } : {}) };
    return { kind: "file", file: name === undefined ? file : { ...file, filename: name } };
  }
  if (part.type !== "resource" || !isObject(part.resource)) return undefined;
  const resource = part.resource;
  const uri = str(resource.uri);
  const mediaType = mediaTypeOf(resource);
  if (typeof resource.text === "string") {
    const named = [uri ?? "uri unknown", ...(mediaType !== undefined ? [mediaType] : [])];
    return { kind: "text", text: `[resource: ${named.join(", ")}]\n${resource.text}` };
  }
  const blob = str(resource.blob);
  if (blob === undefined) return undefined;
  const file: FoundFile = { base64: blob, ...(mediaType !== undefined ? { mediaType } : {}) };
  return { kind: "file", file: uri === undefined ? file : { ...file, uri } };
}
