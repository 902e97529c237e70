// The JSON-RPC errors this server words itself, and the params check behind Invalid params.
import {
  type CallToolRequestSchema,
  ErrorCode,
  type InitializeRequestSchema,
  type ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error the SDK answers with this code and message as they are (an McpError's message
 * starts "MCP error <code>: ", which clients print before their own prefix).
 */
const jsonRpcError = (code: ErrorCode, message: string) => Object.assign(new Error(message), { code });

export const invalidParams = (message: string) => jsonRpcError(ErrorCode.InvalidParams, message);

/** JSON-RPC 2.0 §5.1, worded as the SDK words it for a method without a handler. */
export const methodNotFound = () => jsonRpcError(ErrorCode.MethodNotFound, 'Method not found');

type CheckedRequestSchema = typeof InitializeRequestSchema | typeof ListToolsRequestSchema | typeof CallToolRequestSchema;

/**
 * The schema to register a handler with, accepting any params: the SDK parses a request with it
 * before the handler runs and answers a failure -32603 (Internal error), as if the server had
 * failed. The handler checks the params with validParams instead.
 */
export function anyParams<S extends CheckedRequestSchema>(schema: S) {
  return schema.pick({ method: true }).loose();
}

/** The request's params, or -32602 (Invalid params) naming each bad one, on one line. */
export function validParams<S extends CheckedRequestSchema>(schema: S, request: unknown) {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data as S['_output'];
  const problems = parsed.error.issues.map((issue) => `${['params', ...issue.path.slice(1)].join('.')}: ${issue.message}`);
  throw invalidParams(`Invalid params: ${problems.join('; ')}`);
}
