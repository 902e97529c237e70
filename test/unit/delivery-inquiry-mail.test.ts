// The notification mail's words: the time in the studio's zone, where the inquiry came from, the
// reply and inbox links, and every field escaped (HTML) or kept to its line (text), whatever it holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentLabel, inboxLink, inquiryMailHtml, inquiryMailText, replyLink, sourceText } from '../../src/delivery/inquiry-mail.js';
import type { AgentClient, InquiryRecord } from '../../src/storage/ports.js';
import { studioTime, studioTimeShort } from '../../src/studio/time.js';
import { agentClient } from '../helpers/store-fixtures.js';

const inquiry: InquiryRecord = {
  reference: 'INQ-7K2M9Q',
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: 'Analytical Engines Ltd',
  message: 'We need a new website.\nCan you start in January?',
  clientId: null,
  receivedAt: new Date('2026-11-27T14:05:00Z'),
  source: 'page',
};
const context = { timeZone: 'Europe/London', publicUrl: 'https://studio.example', agent: null };
const client = (fields: Partial<AgentClient>): AgentClient => agentClient('client-1', { clientName: 'Trip planner', ...fields });

describe('studioTime', () => {
  it('writes the time in words in the studio’s zone, summer time included', () => {
    expect(studioTime(new Date('2026-11-27T14:05:00Z'), 'Europe/London')).toBe('Friday 27 November 2026 at 14:05 (Europe/London)');
    expect(studioTime(new Date('2026-07-01T23:30:00Z'), 'Europe/London')).toBe('Thursday 2 July 2026 at 00:30 (Europe/London)');
    expect(studioTime(new Date('2026-11-27T04:41:59Z'), 'America/New_York')).toBe('Thursday 26 November 2026 at 23:41 (America/New_York)');
    expect(studioTime(new Date('2026-11-27T00:00:00Z'), 'UTC')).toBe('Friday 27 November 2026 at 00:00 (UTC)');
  });

  it('writes it short for the inbox, the date turning with the zone and the zone abbreviated', () => {
    expect(studioTimeShort(new Date('2026-07-27T23:30:00Z'), 'UTC')).toBe('2026-07-27 23:30 UTC');
    expect(studioTimeShort(new Date('2026-07-27T23:30:00Z'), 'Europe/Berlin')).toBe('2026-07-28 01:30 CEST');
    expect(studioTimeShort(new Date('2026-12-27T23:30:00Z'), 'Europe/Berlin')).toBe('2026-12-28 00:30 CET');
    expect(studioTimeShort(new Date('2026-07-27T23:30:00Z'), 'Asia/Kolkata')).toBe('2026-07-28 05:00 GMT+5:30');
  });
});

describe('where it came from', () => {
  it('names the door, and an agent with whether its person is verified', () => {
    expect(sourceText({ source: 'page', clientId: null }, null)).toBe('the contact page');
    expect(sourceText({ source: null, clientId: null }, null)).toBe('not recorded');
    expect(sourceText({ source: 'mcp', clientId: 'client-1' }, { name: 'Trip planner', verified: true })).toBe(
      'MCP, sent by the agent “Trip planner”, its person verified',
    );
    expect(sourceText({ source: 'api', clientId: 'client-1' }, null)).toBe('the HTTP API, sent by an agent (client client-1)');
  });

  it('counts a person verified once the registration is claimed, or made with an identity provider’s assertion', () => {
    expect(agentLabel(undefined)).toBeNull();
    expect(agentLabel(client({}))).toEqual({ name: 'Trip planner', verified: false });
    expect(agentLabel(client({ email: 'owner@example.com' }))?.verified).toBe(true);
    expect(agentLabel(client({ registrationType: 'verified_email', status: 'pending', email: 'owner@example.com' }))?.verified).toBe(false);
    expect(agentLabel(client({ registrationType: 'id-jag', email: 'owner@example.com' }))?.verified).toBe(true);
    // Revoked since: its person had proved the address when the inquiry came (as the webhook and the CLI say).
    expect(agentLabel(client({ email: 'owner@example.com', status: 'revoked' }))?.verified).toBe(true);
  });
});

describe('the mail', () => {
  it('puts the person, company and message first, then when, where from, the reference and the links', () => {
    expect(inquiryMailText(inquiry, context)).toBe(
      [
        'Name: Ada Lovelace',
        'Company: Analytical Engines Ltd',
        'Email: ada@example.com',
        '',
        'Message:',
        '',
        'We need a new website.',
        'Can you start in January?',
        '',
        'Received: Friday 27 November 2026 at 14:05 (Europe/London)',
        'Came through: the contact page',
        'Reference: INQ-7K2M9Q',
        '',
        'Reply to Ada: mailto:ada@example.com?subject=Re%3A%20your%20inquiry%20INQ-7K2M9Q',
        'Open in the inbox: https://studio.example/inbox/inquiries/INQ-7K2M9Q',
        '',
      ].join('\n'),
    );
    const html = inquiryMailHtml(inquiry, context);
    expect(html).toContain('<meta name="color-scheme" content="light dark">');
    expect(html).toContain('href="mailto:ada@example.com?subject=Re%3A%20your%20inquiry%20INQ-7K2M9Q"');
    expect(html).toContain('>Reply to Ada</a>');
    expect(html).toContain('href="https://studio.example/inbox/inquiries/INQ-7K2M9Q"');
    expect(html).toContain('We need a new website.<br>Can you start in January?');
    expect(html).not.toMatch(/<img|url\(/);
  });

  it('escapes every field of the HTML part, the agent’s name included', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(text, text, text, text, text, (firstName, lastName, company, message, agentName) => {
        const html = inquiryMailHtml(
          { ...inquiry, firstName, lastName, company, message, clientId: 'client-1', source: 'mcp' },
          { ...context, agent: { name: agentName, verified: false } },
        );
        // Only the template's own tags: nothing from a field opens one or an attribute.
        const tags = html.match(/<\/?[a-zA-Z][^>]*>/g) ?? [];
        for (const tag of tags) expect(tag).toMatch(/^<\/?(!DOCTYPE|html|head|meta|title|style|body|table|tr|td|th|p|h1|a|br)\b/);
        expect(html.match(/<a /g)).toHaveLength(3);
        expect(html.match(/<script|javascript:/gi)).toBeNull();
      }),
    );
  });

  it('keeps each labelled line of the text part to itself, whatever a name, company or agent holds', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(text, text, text, text, (firstName, lastName, company, agentName) => {
        const lines = inquiryMailText(
          { ...inquiry, firstName, lastName, company, message: 'm', clientId: 'client-1', source: 'api' },
          { ...context, agent: { name: agentName, verified: true } },
        ).split('\n');
        const known = ['Name', 'Company', 'Email', 'Message', 'Received', 'Came through', 'Reference', 'Open in the inbox'];
        const labelOf = (line: string) => (line.startsWith('Reply to ') ? 'Reply to' : known.find((label) => line.startsWith(`${label}:`)));
        const labels = lines.filter((line) => line !== '' && line !== 'm').map(labelOf);
        const hasCompany = lines.some((line) => line.startsWith('Company: '));
        expect(labels).toEqual([
          'Name',
          ...(hasCompany ? ['Company'] : []),
          'Email',
          'Message',
          'Received',
          'Came through',
          'Reference',
          'Reply to',
          'Open in the inbox',
        ]);
      }),
    );
  });

  it('links a reply whose address and subject come back as they went in', () => {
    const local = fc.stringMatching(/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,20}$/);
    fc.assert(
      fc.property(local, (name) => {
        const email = `${name}@example.com`;
        const url = new URL(replyLink({ email, reference: 'INQ-7K2M9Q' }));
        expect(url.protocol).toBe('mailto:');
        expect(decodeURIComponent(url.pathname)).toBe(email);
        expect([...url.searchParams.keys()]).toEqual(['subject']);
        expect(url.searchParams.get('subject')).toBe('Re: your inquiry INQ-7K2M9Q');
      }),
    );
    expect(inboxLink('https://studio.example/base', 'INQ-7K2M9Q')).toBe('https://studio.example/base/inbox/inquiries/INQ-7K2M9Q');
  });
});
