// The JSON-RPC errors this server words itself, and the params check behind Invalid params.
import { ProtocolError, ProtocolErrorCode, type SpecTypes, specTypeSchemas } from '@modelcontextprotocol/server';

export const invalidParams = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);

/** JSON-RPC 2.0 §5.1, worded as the SDK words it for a method without a handler. */
export const methodNotFound = () => new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');

type CheckedRequest = 'InitializeRequest' | 'ListToolsRequest' | 'CallToolRequest';

/**
 * The request's params, or -32602 (Invalid params) naming each bad one, on one line (the SDK's own
 * check of a registered handler's request answers -32603 Internal error, as if the server had failed).
 */
export function validParams<N extends CheckedRequest>(name: N, request: unknown): SpecTypes[N] {
  const checked = specTypeSchemas[name]['~standard'].validate(request);
  if (!('issues' in checked) || checked.issues === undefined) return checked.value as SpecTypes[N];
  const problems = checked.issues.map((issue) => {
    const path = (issue.path ?? []).slice(1).map((key) => (typeof key === 'object' ? String(key.key) : String(key)));
    return `${['params', ...path].join('.')}: ${issue.message}`;
  });
  throw invalidParams(`Invalid params: ${problems.join('; ')}`);
}
