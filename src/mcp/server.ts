// The MCP tool server: a fresh low-level Server per HTTP request (stateless), whose tools call the
// same inquiry service as POST /api/contact. Tool errors are results with isError: true that say
// what to fix, so an agent can correct its call and retry.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthUrls } from '../auth/urls.js';
import { DomainError, IdempotencyConflictError, ValidationError } from '../errors.js';
import { confirmationText } from '../inquiries/confirmation.js';
import { admitInquiry, type WindowLimiter } from '../inquiries/rate-limit.js';
import type { InquiryService } from '../inquiries/service.js';
import type { StudioProfile } from '../studio/profile.js';
import { ajv, type FieldError } from '../validation/ajv.js';
import { IDEMPOTENCY_KEY_PROPERTY, IDEMPOTENCY_KEY_RULE, TOOLS } from './tools.js';

export const MCP_SERVER_NAME = 'studio-inquiry';
export const MCP_SERVER_VERSION = '1.0.0';

export interface McpContext {
  readonly profile: StudioProfile;
  readonly urls: AuthUrls;
  readonly inquiries: InquiryService;
  readonly limiter: WindowLimiter;
  /** The caller's address (rate limit) and, with a valid bearer token, its client id. */
  readonly clientAddress: string;
  readonly clientId: string | null;
  /**
   * A bearer token came and was not accepted (bad, expired, revoked, another audience): the call
   * goes on without it, as on HTTP, and submit_inquiry says so in its result, since MCP clients act
   * on a 401 but do not read WWW-Authenticate on a 200.
   */
  readonly tokenRejected: boolean;
}

const result = (structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** The advertised schema of the argument is its check: what tools/list promises is what is accepted. */
const validIdempotencyKey = ajv.compile<string>(IDEMPOTENCY_KEY_PROPERTY);
const isIdempotencyKey = (key: unknown): key is string | undefined => key === undefined || validIdempotencyKey(key);

export function buildMcpServer(context: McpContext): Server {
  const serverInfo = { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: `${context.profile.name} inquiries` };
  const instructions = `Tools of ${context.profile.name}: look the studio up, then send a project inquiry with submit_inquiry. No sign-in is needed.`;
  const capabilities = { tools: { listChanged: false } };
  const server = new Server(serverInfo, { capabilities, instructions });
  // The SDK's own initialize, but with bad params answered -32602 (see anyParams). Each request has
  // a server of its own (stateless), so nothing of the client's is kept.
  server.setRequestHandler(anyParams(InitializeRequestSchema), async (request) => {
    const { params } = validParams(InitializeRequestSchema, request);
    const supported = SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion);
    return {
      protocolVersion: supported ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
      capabilities,
      serverInfo,
      instructions,
    };
  });
  server.setRequestHandler(anyParams(ListToolsRequestSchema), async (request) => {
    const { params } = validParams(ListToolsRequestSchema, request);
    // MCP Pagination: every tool is in the first page, so no cursor was ever handed out.
    if (params?.cursor !== undefined)
      throw invalidParams('Invalid params: params.cursor: no such cursor; every tool is in the first page.');
    return { tools: TOOLS.map((tool) => ({ ...tool })) };
  });
  // Registered past Server's own override, which checks a tools/call first and answers a failure
  // with the raw list of zod issues; validParams names the param instead.
  Protocol.prototype.setRequestHandler.call(server, anyParams(CallToolRequestSchema), async (request) => {
    const { params } = validParams(CallToolRequestSchema, request);
    const args = params.arguments ?? {};
    switch (params.name) {
      case 'get_studio_info':
        return noArguments(params.name, args) ?? result(studioInfo(context));
      case 'list_services':
        return (
          noArguments(params.name, args) ??
          result({ services: context.profile.services.map(({ name, description }) => ({ name, description })) })
        );
      case 'submit_inquiry':
        return submitInquiry(context, args);
      default:
        throw invalidParams(`Unknown tool "${params.name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
    }
  });
  return server;
}

/**
 * A JSON-RPC error the SDK answers with this code and message as they are (an McpError's message
 * starts "MCP error <code>: ", which clients print before their own prefix).
 */
const invalidParams = (message: string) => Object.assign(new Error(message), { code: ErrorCode.InvalidParams });

/** A tool without arguments refuses any (its inputSchema has no properties and no others allowed). */
function noArguments(tool: string, args: Record<string, unknown>): CallToolResult | undefined {
  const names = Object.keys(args);
  if (names.length === 0) return undefined;
  return toolError(`${tool} takes no arguments; call it again without ${names.map((name) => JSON.stringify(name)).join(', ')}.`);
}

/**
 * The schema a handler is registered with, accepting any params: the SDK's Protocol parses a
 * request with that schema before any handler runs and answers a failure with -32603 (Internal
 * error), as if the server had failed. The params are checked after it (the SDK's Server checks a
 * tools/call itself first, validParams every request), and bad ones are -32602 (Invalid params),
 * the JSON-RPC answer a client can act on.
 */
type CheckedRequestSchema = typeof InitializeRequestSchema | typeof ListToolsRequestSchema | typeof CallToolRequestSchema;

function anyParams<S extends CheckedRequestSchema>(schema: S) {
  return schema.pick({ method: true }).loose();
}

function validParams<S extends CheckedRequestSchema>(schema: S, request: unknown) {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data as S['_output'];
  const problems = parsed.error.issues.map((issue) => `${['params', ...issue.path.slice(1)].join('.')}: ${issue.message}`);
  throw invalidParams(`Invalid params: ${problems.join('; ')}`);
}

function studioInfo({ profile, urls }: McpContext) {
  return {
    name: profile.name,
    description: profile.description,
    location: profile.location,
    website: profile.website,
    contactEmail: profile.email,
    responseTime: profile.responseTime,
    links: {
      contactEndpoint: `${urls.issuer}/api/contact`,
      openapi: `${urls.issuer}/openapi.json`,
      authMd: urls.authMd,
      serverCard: `${urls.issuer}/.well-known/mcp/server-card.json`,
    },
  };
}

async function submitInquiry(context: McpContext, args: Record<string, unknown>): Promise<CallToolResult> {
  const { idempotencyKey, ...fields } = args;
  // Validated first, the key too, so that (as on HTTP) only well-formed inquiries count against the
  // rate limit; a bad key is listed with the bad fields.
  const errors = context.inquiries.fieldErrors(fields);
  if (!isIdempotencyKey(idempotencyKey)) {
    return invalidFields([...errors, { pointer: '/idempotencyKey', detail: `must be ${IDEMPOTENCY_KEY_RULE}` }]);
  }
  if (errors.length > 0) return invalidFields(errors);
  try {
    // One allowance with POST /api/contact; a retry with an idempotencyKey already answered is not
    // counted, nor is an inquiry that was not stored (admitInquiry gives its use back).
    const admission = await admitInquiry(
      context.limiter,
      context.clientAddress,
      () => context.inquiries.answerRetry(fields, idempotencyKey),
      async (retry) => retry ?? (await context.inquiries.submit(fields, { idempotencyKey, clientId: context.clientId })),
    );
    if (admission.refused) {
      const { rule, refused } = admission;
      return toolError(
        `Rate limited: too many inquiries from this address (at most ${rule.max} per ${rule.window}, over HTTP and MCP together). ` +
          `Retry after ${refused.retryAfterSeconds} seconds.`,
      );
    }
    const submitted = admission.answer;
    const sent = result({
      reference: submitted.reference,
      outcome: submitted.outcome,
      responseTime: context.profile.responseTime,
      confirmation: confirmationText(context.profile, submitted.reference),
    });
    // A replay answers for the call that sent the inquiry, with whatever token that one had.
    if (!context.tokenRejected || submitted.replayed) return sent;
    const note =
      'The inquiry was sent, but without your client id: the bearer token was not accepted (invalid, expired or revoked). ' +
      `To be named as its sender next time, get a new token (see ${context.urls.mcpProtectedResourceMetadata}).`;
    return { ...sent, content: [...sent.content, { type: 'text', text: note }] };
  } catch (error) {
    if (error instanceof ValidationError) return invalidFields(error.errors);
    if (error instanceof IdempotencyConflictError) {
      return toolError('This idempotencyKey was already used with different arguments. Use a new key for a new inquiry.');
    }
    // Its message says what to do (an inquiry not stored: "… Please try again in a moment.").
    if (error instanceof DomainError) return toolError(error.message);
    throw error;
  }
}

function invalidFields(errors: readonly FieldError[]): CallToolResult {
  const lines = errors.map(({ pointer, detail }) => `- ${argumentName(pointer) || '(arguments)'}: ${detail}`);
  return toolError(`The inquiry was not sent; fix these fields and call submit_inquiry again:\n${lines.join('\n')}`);
}

/** The argument a JSON Pointer (RFC 6901) names, as the agent sent it: "/a~1b" is "a/b". */
function argumentName(pointer: string): string {
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}
