// The MCP protocol versions /mcp serves, newest first: 2026-07-28 (stateless, per-request _meta,
// server/discover) and the three 2025 versions (initialize), all on the same URL.
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;

export type McpProtocolVersion = (typeof MCP_PROTOCOL_VERSIONS)[number];

/** The versions a client reaches with initialize (the 2025 ones), newest first. */
export const MCP_INITIALIZE_VERSIONS = MCP_PROTOCOL_VERSIONS.filter((version) => version < '2026-07-28');

/**
 * MCP 2025-06-18, Transports §"Protocol Version Header": a request without MCP-Protocol-Version is
 * taken as 2025-03-26, the one version with JSON-RPC batches (removed in 2025-06-18).
 */
export const BATCH_VERSION = '2025-03-26';
export const allowsBatches = (protocolVersionHeader: string | undefined) =>
  protocolVersionHeader === undefined || protocolVersionHeader === BATCH_VERSION;
