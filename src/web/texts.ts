// The two plain-text files for crawlers and agents: /robots.txt and /llms.txt (https://llmstxt.org).
// Every address comes from PUBLIC_URL; neither file names a path this service does not serve.
import { INQUIRY_LIMITS } from '../inquiries/schema.js';
import type { StudioProfile } from '../studio/profile.js';
import { oneLine } from './html.js';

/** Everything may be crawled. No Sitemap line: there is no sitemap. */
export function robotsTxt(publicUrl: string): string {
  return ['User-agent: *', 'Allow: /', '', `# For AI agents: ${publicUrl}/llms.txt`, ''].join('\n');
}

export function llmsTxt(publicUrl: string, profile: StudioProfile): string {
  const base = publicUrl;
  const limits = INQUIRY_LIMITS;
  return [
    `# ${oneLine(profile.name)}`,
    '',
    `> ${oneLine(profile.description)} Based in ${oneLine(profile.location)}; replies to inquiries within ${oneLine(profile.responseTime)}.`,
    '',
    `This service takes project inquiries for ${oneLine(profile.name)} from people (the contact page) and from AI agents (HTTP or MCP).`,
    'No account, key or token is needed to send an inquiry.',
    '',
    '## Send an inquiry over HTTP',
    '',
    `- POST ${base}/api/contact with \`Content-Type: application/json\` and a JSON object with exactly these fields:`,
    `  - \`firstName\` (required): string, 1–${limits.nameMaxLength} characters`,
    `  - \`lastName\` (required): string, 1–${limits.nameMaxLength} characters`,
    `  - \`email\` (required): the address the studio replies to, at most ${limits.emailMaxLength} characters`,
    `  - \`company\` (optional): company or product name, at most ${limits.companyMaxLength} characters`,
    `  - \`message\` (required): the project brief, 1–${limits.messageMaxLength.toLocaleString('en-US')} characters`,
    '- 200: a plain-text confirmation with a reference such as INQ-7K2M9Q.',
    '- 400: application/problem+json; `errors` lists each bad field as `{pointer, detail}` (e.g. `/email`). Fix those fields and send again.',
    '- 429: too many inquiries; wait the number of seconds in `Retry-After`.',
    '- Send an `Idempotency-Key` header (e.g. a UUID) so that a retry is stored and delivered only once.',
    '',
    '## Tools (MCP)',
    '',
    `- [MCP server](${base}/mcp): streamable HTTP; tools \`get_studio_info\`, \`list_services\`, \`submit_inquiry\``,
    `- [MCP server for signed-in people](${base}/mcp/verified): the same tools; a standard MCP client signs its person in with OAuth from its 401`,
    `- [MCP server card](${base}/.well-known/mcp/server-card.json)`,
    '',
    '## Reference',
    '',
    `- [OpenAPI 3.1 description](${base}/openapi.json): the machine-readable interface`,
    `- [API reference](${base}/docs): the same, for people`,
    `- [Agent auth](${base}/auth.md): optional registration so your inquiries are attributed to your agent`,
    `- [Contact page](${base}/): the form people use`,
    '',
    '## Services',
    '',
    ...profile.services.map((service) => `- ${oneLine(service.name)}: ${oneLine(service.description)}`),
    '',
  ].join('\n');
}
