// A real MCP server for the tests of an MCP tool's resources, run with plain node over stdio
// (MCPServerStdio spawns it): its one tool, receipt, answers with each kind of MCP content a
// step shows apart from an image, a text, a text resource, a blob resource and a resource link.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "receipts", version: "1.0.0" });
server.registerTool("receipt", { description: "the receipt of a sale" }, async () => ({
  content: [
    { type: "text" as const, text: "receipt 7" },
    {
      type: "resource" as const,
      resource: { uri: "shop://receipts/7.txt", mimeType: "text/plain", text: "book: 7" },
    },
    {
      type: "resource" as const,
      // "%PDF-1.7", 8 bytes.
      resource: { uri: "shop://slips/7.pdf", mimeType: "application/pdf", blob: "JVBERi0xLjc=" },
    },
    {
      type: "resource_link" as const,
      uri: "shop://terms.md",
      name: "terms.md",
      mimeType: "text/markdown",
    },
  ],
}));
await server.connect(new StdioServerTransport());
// Ends with its client, even one SIGKILLed (its end of the pipe closes): nothing outlives a test.
process.stdin.on("close", () => process.exit(0));
