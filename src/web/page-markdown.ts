// The contact page as markdown (GET / with `Accept: text/markdown`): what the HTML page says (the
// studio, its services, how to reach it) and what an agent needs instead of the form: how to send an
// inquiry by HTTP and MCP, and where every document for agents is. Rendered once, from the profile.
import type { StudioProfile } from '../studio/profile.js';
import { agentLinks } from './agent-links.js';
import { oneLine, safeHttpUrl } from './html.js';
import { httpInquiryLines, referenceLines, toolLines } from './texts.js';

export function contactPageMarkdown(profile: StudioProfile, publicUrl: string): string {
  const links = agentLinks(publicUrl);
  const name = oneLine(profile.name);
  const website = safeHttpUrl(profile.website);
  return [
    `# ${name}`,
    '',
    oneLine(profile.description),
    '',
    `- Based in: ${oneLine(profile.location)}`,
    `- Replies within: ${oneLine(profile.responseTime)}`,
    `- Email: <${profile.email}>`,
    ...(website ? [`- Website: <${website}>`] : []),
    '',
    '## Services',
    '',
    ...profile.services.flatMap((service) => [`### ${oneLine(service.name)}`, '', oneLine(service.description), '']),
    '## Start a project',
    '',
    `Tell ${name} what you are planning, and roughly when: links, budget and deadlines all help.`,
    `They reply by email within ${oneLine(profile.responseTime)}. No account, key or token is needed.`,
    '',
    '### By HTTP',
    '',
    ...httpInquiryLines(publicUrl),
    '',
    '### By MCP, or the form in a browser',
    '',
    ...toolLines(links),
    '',
    '## For agents and developers',
    '',
    ...referenceLines(links),
    '',
  ].join('\n');
}
