// What one MCP request's tools work with: the studio, its addresses, the inquiry service and the
// caller as the HTTP route identified it.
import type { AuthUrls } from '../auth/urls.js';
import type { WindowLimiter } from '../inquiries/rate-limit.js';
import type { InquiryService } from '../inquiries/service.js';
import type { StudioProfile } from '../studio/profile.js';

export interface McpContext {
  readonly profile: StudioProfile;
  readonly urls: AuthUrls;
  readonly inquiries: InquiryService;
  readonly limiter: WindowLimiter;
  /** The caller's address (rate limit) and, with a valid bearer token, its client id. */
  readonly clientAddress: string;
  readonly clientId: string | null;
  /** That agent's registration was claimed: its inquiries are not quarantined on content (docs/spam.md). */
  readonly trustedAgent?: boolean;
  /**
   * A bearer token came and was not accepted (bad, expired, revoked, another audience): the call
   * goes on without it, as on HTTP, and submit_inquiry says so in its result, since MCP clients act
   * on a 401 but do not read WWW-Authenticate on a 200.
   */
  readonly tokenRejected: boolean;
  /** At /mcp/verified: the address the signed-in person proved. */
  readonly verifiedEmail?: string;
}
