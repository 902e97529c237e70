// The submit_inquiry tool: the same checks, rate limit and idempotency as POST /api/contact, each
// refusal a tool error that says what to fix.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError, IdempotencyConflictError, ValidationError } from '../errors.js';
import { admitInquiry } from '../inquiries/rate-limit.js';
import { attributionOf, inquiryReceipt } from '../inquiries/receipt.js';
import { ajv, type FieldError } from '../validation/ajv.js';
import type { McpContext } from './context.js';
import { toolError, toolResult } from './results.js';
import { IDEMPOTENCY_KEY_PROPERTY, IDEMPOTENCY_KEY_RULE } from './tools.js';

/** The advertised schema of the argument is its check: what tools/list promises is what is accepted. */
const validIdempotencyKey = ajv.compile<string>(IDEMPOTENCY_KEY_PROPERTY);
const isIdempotencyKey = (key: unknown): key is string | undefined => key === undefined || validIdempotencyKey(key);

export async function submitInquiry(context: McpContext, args: Record<string, unknown>): Promise<CallToolResult> {
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
      async (retry) =>
        retry ??
        (await context.inquiries.submit(fields, {
          idempotencyKey,
          source: 'mcp',
          clientId: context.clientId,
          trustedAgent: context.trustedAgent ?? false,
        })),
    );
    if (admission.refused) {
      const { rule, refused } = admission;
      return toolError(
        `Rate limited: too many inquiries from this address (at most ${rule.max} per ${rule.window}, over HTTP and MCP together). ` +
          `Retry after ${refused.retryAfterSeconds} seconds.`,
      );
    }
    const submitted = admission.answer;
    const attribution = attributionOf(context, context.urls.mcpProtectedResourceMetadata);
    const sent = toolResult({ ...inquiryReceipt(context.profile, submitted, attribution) });
    // MCP clients act on a 401 but do not read WWW-Authenticate on a 200: a refused token is also
    // said in text. A replay answers for the call that sent the inquiry, so it has no such note.
    if (attribution.reason !== 'invalid_token' || submitted.replayed) return sent;
    return { ...sent, content: [...sent.content, { type: 'text', text: attribution.detail }] };
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
