// The plain-text files for crawlers and agents: /robots.txt and /llms.txt (https://llmstxt.org), and
// the parts llms.txt shares with the markdown rendering of the contact page (page-markdown.ts).
// Every address comes from PUBLIC_URL; neither file names a path this service does not serve.
import { INQUIRY_LIMITS } from '../inquiries/schema.js';
import { MCP_PROTOCOL_VERSIONS } from '../mcp/versions.js';
import type { StudioProfile } from '../studio/profile.js';
import { type AgentLinks, agentLinks } from './agent-links.js';
import { oneLine } from './html.js';

/** The contact form's WebMCP tool (page.ts), named as the MCP tool that does the same. */
export const WEBMCP_TOOL_NAME = 'submit_inquiry';

/** Everything may be crawled. No Sitemap line: there is no sitemap. */
export function robotsTxt(publicUrl: string): string {
  return ['User-agent: *', 'Allow: /', '', `# For AI agents: ${publicUrl}/llms.txt`, ''].join('\n');
}

/** How to send an inquiry with a plain HTTP request: the body's fields, and each answer. */
export function httpInquiryLines(publicUrl: string): string[] {
  const limits = INQUIRY_LIMITS;
  return [
    `- POST ${publicUrl}/api/contact with \`Content-Type: application/json\` and a JSON object with exactly these fields:`,
    `  - \`firstName\` (required): string, 1–${limits.nameMaxLength} characters`,
    `  - \`lastName\` (required): string, 1–${limits.nameMaxLength} characters`,
    `  - \`email\` (required): the address the studio replies to, at most ${limits.emailMaxLength} characters`,
    `  - \`company\` (optional): company or product name, at most ${limits.companyMaxLength} characters`,
    `  - \`message\` (required): the project brief, 1–${limits.messageMaxLength.toLocaleString('en-US')} characters`,
    '- 200: a plain-text confirmation with a reference such as INQ-7K2M9Q.',
    '- 400: application/problem+json; `errors` lists each bad field as `{pointer, detail}` (e.g. `/email`). Fix those fields and send again.',
    '- 429: too many inquiries; wait the number of seconds in `Retry-After`.',
    '- Send an `Idempotency-Key` header (e.g. a UUID) so that a retry is stored and delivered only once.',
  ];
}

/** How to send one over MCP, and from the contact page in a browser (WebMCP). */
export function toolLines(links: AgentLinks): string[] {
  return [
    `- [MCP server](${links.mcp}): streamable HTTP, protocol versions ${MCP_PROTOCOL_VERSIONS.join(', ')}; tools \`get_studio_info\`, \`list_services\`, \`submit_inquiry\` (the same fields as above; its result is a receipt with the reference)`,
    `- [MCP server for signed-in people](${links.mcp}/verified): the same tools; a standard MCP client signs its person in with OAuth from its 401`,
    `- [MCP server card](${links.serverCard.href}), listed in the [MCP catalog](${links.mcpCatalog.href})`,
    `- [Contact page](${links.home.href}): its form is the WebMCP tool \`${WEBMCP_TOOL_NAME}\`; the person checks it and presses Send`,
  ];
}

/** Where an agent finds each document: the same set the page's Link header and the API catalog give. */
export function referenceLines(links: AgentLinks): string[] {
  return [
    `- [API catalog](${links.apiCatalog.href}): RFC 9727 linkset of the HTTP API and the MCP server`,
    `- [OpenAPI 3.1 description](${links.openApi.href}): the machine-readable interface`,
    `- [API reference](${links.apiReference.href}): the same, for people`,
    `- [Agent auth](${links.authMd.href}): optional registration so your inquiries are attributed to your agent`,
    `- [llms.txt](${links.llmsTxt.href}): this summary for language models`,
    `- [Contact page as markdown](${links.home.href}): GET it with \`Accept: text/markdown\``,
  ];
}

export function llmsTxt(publicUrl: string, profile: StudioProfile): string {
  const links = agentLinks(publicUrl);
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
    ...httpInquiryLines(publicUrl),
    '',
    '## Tools (MCP)',
    '',
    ...toolLines(links),
    '',
    '## Reference',
    '',
    ...referenceLines(links),
    '',
    '## Services',
    '',
    ...profile.services.map((service) => `- ${oneLine(service.name)}: ${oneLine(service.description)}`),
    '',
  ].join('\n');
}
