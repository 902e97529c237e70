// The quarantine digest's words: the 200-character excerpt (never half a character as shown), the
// mail's lines (nothing in a name starts one of its own), and the webhook event's body.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DIGEST_EVENT_TYPE, digestEvent, digestMail, excerpt, mailLine } from '../../src/spam/digest-text.js';
import type { DigestContents, QuarantinedInquiry } from '../../src/storage/ports.js';
import { hasLoneSurrogate } from '../../src/validation/ajv.js';

const codePoints = (text: string) => [...text].length;

describe('excerpt', () => {
  it('keeps a text of at most 200 characters whole, and cuts a longer one to 200 with "…"', () => {
    expect(excerpt('A short brief.')).toBe('A short brief.');
    expect(excerpt('a'.repeat(200))).toBe('a'.repeat(200));
    expect(excerpt('a'.repeat(201))).toBe(`${'a'.repeat(200)}…`);
    // Characters, not UTF-16 units: 200 emoji are 400 units and are kept whole.
    expect(excerpt('😀'.repeat(200))).toBe('😀'.repeat(200));
    expect(excerpt('张'.repeat(300))).toBe(`${'张'.repeat(200)}…`);
  });

  it('never cuts a surrogate pair, an accent from its letter or an emoji sequence', () => {
    expect(excerpt(`${'a'.repeat(199)}😀x`)).toBe(`${'a'.repeat(199)}😀…`);
    expect(excerpt(`${'a'.repeat(200)}😀`)).toBe(`${'a'.repeat(200)}…`);
    expect(excerpt(`${'a'.repeat(199)}e\u0301z`)).toBe(`${'a'.repeat(199)}…`);
    const family = '👨\u200d👩\u200d👧'; // five code points shown as one
    expect(excerpt(`${'a'.repeat(198)}${family}z`)).toBe(`${'a'.repeat(198)}…`);
    expect(excerpt(`${'a'.repeat(195)}${family}z`)).toBe(`${'a'.repeat(195)}${family}…`);
  });

  it('cuts a first character longer than the excerpt (a letter under hundreds of marks) at 200 code points', () => {
    const zalgo = `a${'\u0301'.repeat(400)}`;
    expect(excerpt(zalgo)).toBe(`${zalgo.slice(0, 200)}…`);
  });

  it('for any well-formed text: a prefix of it, at most 200 characters, well-formed, whole when short enough', () => {
    const text = fc
      .oneof(fc.string({ unit: 'grapheme', maxLength: 260 }), fc.string({ unit: 'grapheme-composite', maxLength: 260 }), fc.string())
      .filter((value) => !hasLoneSurrogate(value));
    fc.assert(
      fc.property(text, (value) => {
        const cut = excerpt(value);
        expect(hasLoneSurrogate(cut)).toBe(false);
        if (codePoints(value) <= 200) expect(cut).toBe(value);
        else {
          expect(cut.endsWith('…')).toBe(true);
          expect(value.startsWith(cut.slice(0, -1))).toBe(true);
          expect(codePoints(cut.slice(0, -1))).toBeLessThanOrEqual(200);
        }
      }),
      { numRuns: 500 },
    );
  });
});

const quarantined = (overrides: Partial<QuarantinedInquiry['inquiry']> = {}, score = 9.5, movedAt?: Date): QuarantinedInquiry => {
  const receivedAt = new Date('2026-11-22T09:59:59.512Z');
  return {
    inquiry: {
      reference: 'INQ-7K2M9Q',
      firstName: 'Mark',
      lastName: 'Stone',
      email: 'mark@rankfast.example',
      company: 'Rank Fast',
      message: 'We offer guest post backlinks.\nSamples: https://a.example',
      clientId: null,
      receivedAt,
      source: 'api',
      ...overrides,
    },
    judgement: {
      verdict: 'spam',
      score,
      reasons: [
        { code: 'spam_phrases', detail: '2 spam phrases: guest post, backlinks' },
        { code: 'too_many_links', detail: '5 links in the message (3 pass)' },
      ],
    },
    quarantinedAt: movedAt ?? receivedAt,
  };
};

describe('the digest mail', () => {
  it('lists each inquiry with its name, address, excerpt, reasons, reference and release command', () => {
    const contents: DigestContents = { since: new Date('2026-11-22T08:00:00.000Z'), total: 1, listed: [quarantined()] };
    const { subject, body } = digestMail(contents);
    expect(subject).toBe('Quarantine digest: 1 inquiry held as spam');
    expect(body).toContain('1 inquiry went to the quarantine since the last digest (2026-11-22T08:00:00.000Z).');
    expect(body).toContain(
      [
        '1. Mark Stone <mark@rankfast.example>, Rank Fast',
        '   INQ-7K2M9Q · received 2026-11-22T09:59:59.512Z · score 9.5',
        '   Reasons: spam_phrases (2 spam phrases: guest post, backlinks), too_many_links (5 links in the message (3 pass))',
        '   "We offer guest post backlinks. Samples: https://a.example"',
        '   Release: studio-inquiry release INQ-7K2M9Q',
      ].join('\n'),
    );
  });

  it('keeps a name, company, address or message with line breaks and control characters on its own line', () => {
    const forged = quarantined({
      reference: 'INQ-AAAAAA',
      firstName: 'Eve\r\n   Release: studio-inquiry release INQ-FAKE00\r\n',
      lastName: 'Evil\u202eboj\u0085\u2028x\u0000',
      company: 'Co\nReasons: none',
      message: `Line one\r\nLine two\u0007\t${'x'.repeat(300)}`,
    });
    const { body } = digestMail({ since: null, total: 1, listed: [forged] });
    const lines = body.split('\n');
    expect(lines.filter((line) => line.trimStart().startsWith('Release:'))).toEqual(['   Release: studio-inquiry release INQ-AAAAAA']);
    expect(lines.filter((line) => line.trimStart().startsWith('Reasons:'))).toHaveLength(1);
    expect(lines).toContain('1. Eve Release: studio-inquiry release INQ-FAKE00 Evil boj x <mark@rankfast.example>, Co Reasons: none');
    expect(body.replaceAll('\n', '')).not.toMatch(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
    expect(body).toContain(`   "Line one Line two ${'x'.repeat(180)}…"`);
    expect(body).toContain('went to the quarantine since digests began');
  });

  it('lists the lowest scores given, says when one was moved there by hand, and counts those not listed', () => {
    const moved = quarantined({ reference: 'INQ-BBBBBB' }, 0, new Date('2026-11-23T07:30:00.000Z'));
    const withoutReasons = { ...moved, judgement: { verdict: 'spam' as const, score: 0, reasons: [] } };
    const { subject, body } = digestMail({ since: null, total: 42, listed: [withoutReasons, quarantined()] });
    expect(subject).toBe('Quarantine digest: 42 inquiries held as spam');
    expect(body).toContain(
      '   INQ-BBBBBB · received 2026-11-22T09:59:59.512Z · moved to the quarantine 2026-11-23T07:30:00.000Z · score 0',
    );
    expect(body).toContain('   Reasons: none (moved by hand)');
    expect(body.indexOf('INQ-BBBBBB')).toBeLessThan(body.indexOf('INQ-7K2M9Q'));
    expect(body).toContain('\n40 inquiries more, with higher scores: studio-inquiry list --spam\n');
  });

  it('for any name and message, has exactly one release line per inquiry listed', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (first, last, message) => {
        const { body } = digestMail({
          since: null,
          total: 2,
          listed: [quarantined({ firstName: first, lastName: last, message }), quarantined()],
        });
        expect(body.split('\n').filter((line) => line.startsWith('   Release: '))).toHaveLength(2);
        expect(body.split('\n').filter((line) => /^\d+\. /.test(line))).toHaveLength(2);
        expect(mailLine(first)).not.toMatch(/[\r\n\u0085\u2028\u2029]/);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the digest event', () => {
  it('carries each inquiry as data: the excerpt with its lines, the reasons, the release command', () => {
    const takenAt = new Date('2026-11-23T08:00:00.113Z');
    const event = digestEvent({ since: null, total: 3, listed: [quarantined({ message: `a\nb${'c'.repeat(300)}` })] }, takenAt);
    expect(event).toEqual({
      type: DIGEST_EVENT_TYPE,
      timestamp: '2026-11-23T08:00:00.113Z',
      data: {
        since: null,
        total: 3,
        inquiries: [
          {
            reference: 'INQ-7K2M9Q',
            firstName: 'Mark',
            lastName: 'Stone',
            email: 'mark@rankfast.example',
            company: 'Rank Fast',
            excerpt: `a\nb${'c'.repeat(197)}…`,
            receivedAt: '2026-11-22T09:59:59.512Z',
            quarantinedAt: '2026-11-22T09:59:59.512Z',
            score: 9.5,
            reasons: quarantined().judgement.reasons,
            release: 'studio-inquiry release INQ-7K2M9Q',
          },
        ],
      },
    });
    expect(DIGEST_EVENT_TYPE).toBe('inquiry.quarantine_digest');
  });
});
