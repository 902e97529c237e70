// The two shapes of a tools/call result: structured content (with its JSON as text, for clients
// that read only text), or an error the agent can act on (isError: true, MCP "Tools", error handling).
import type { CallToolResult } from '@modelcontextprotocol/server';

export const toolResult = (structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

export const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
