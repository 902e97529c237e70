// The limits on mailed claim codes as pure rules: which spellings are one recipient (canonicalRecipient),
// and which send each limit refuses, with its wait and its words, over sends given by a fake store.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeLocks, refuseOverCodeLimits } from '../../src/auth/code-limits.js';
import { AgentAuthError } from '../../src/auth/errors.js';
import { CODES_PER_DOMAIN, waitBeforeNextSend } from '../../src/auth/limits.js';
import { canonicalRecipient, domainOf } from '../../src/auth/recipient.js';
import { claimSchema } from '../../src/auth/schemas.js';
import type { CodeSendScope, Tx } from '../../src/storage/ports.js';
import { ajv } from '../../src/validation/ajv.js';

const isValidEmail = ajv.compile(claimSchema.properties.email);

describe('canonicalRecipient', () => {
  it('folds case, surrounding spaces and +tags everywhere, and dots at Gmail (googlemail.com is gmail.com)', () => {
    expect(canonicalRecipient(' Owner+News@Example.COM ')).toBe('owner@example.com');
    expect(canonicalRecipient('J.Doe+x@GoogleMail.com')).toBe('jdoe@gmail.com');
    expect(canonicalRecipient('j.d.o.e@gmail.com')).toBe('jdoe@gmail.com');
    expect(canonicalRecipient('jdoe@gmail.com')).toBe('jdoe@gmail.com');
    expect(canonicalRecipient('+x@example.com')).toBe('@example.com');
    expect(canonicalRecipient('. a@gmail.com')).toBe('a@gmail.com');
  });

  it('keeps the dots at other domains, subdomains of Gmail included', () => {
    expect(canonicalRecipient('j.doe@example.com')).toBe('j.doe@example.com');
    expect(canonicalRecipient('j.doe@mail.gmail.com')).toBe('j.doe@mail.gmail.com');
    expect(canonicalRecipient('j.doe@gmail.com.example')).toBe('j.doe@gmail.com.example');
    expect(canonicalRecipient('j.doe@constructor')).toBe('j.doe@constructor');
  });

  const local = fc.stringMatching(/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,30}$/);
  const domain = fc.oneof(fc.domain(), fc.constantFrom('gmail.com', 'GMail.com', 'googlemail.com', 'GoogleMail.COM', 'example.com'));
  const validEmail = fc
    .oneof(
      fc.tuple(local, domain).map(([name, host]) => `${name}@${host}`),
      fc.emailAddress(),
    )
    .filter((email) => isValidEmail(email));
  const anything = fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    validEmail.map((email) => ` \u00a0${email}\t`),
  );

  it('is idempotent and never throws, on addresses the validator lets through and on any string', () => {
    fc.assert(
      fc.property(fc.oneof(validEmail, anything), (email) => {
        const once = canonicalRecipient(email);
        expect(canonicalRecipient(once)).toBe(once);
        expect(domainOf(canonicalRecipient(once))).toBe(domainOf(once));
      }),
      { numRuns: 3_000 },
    );
  });

  it('keeps the dots of any other domain, and finds every dot variant of a Gmail address one recipient', () => {
    fc.assert(
      fc.property(validEmail, (email) => {
        const at = email.lastIndexOf('@');
        const host = email.slice(at + 1).toLowerCase();
        const name = email.slice(0, at).toLowerCase().split('+')[0] as string;
        if (host === 'gmail.com' || host === 'googlemail.com') {
          expect(canonicalRecipient(email)).toBe(`${name.replaceAll('.', '')}@gmail.com`);
          expect(canonicalRecipient(`${name.replaceAll('.', '')}@gmail.com`)).toBe(canonicalRecipient(email));
        } else {
          expect(canonicalRecipient(email)).toBe(`${name}@${host}`);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('codeLocks', () => {
  it('names the recipient, its domain, all codes and the claim, as the limits count them', () => {
    expect(codeLocks('J.Doe+x@GoogleMail.com', 'abc')).toEqual([
      'claim-code-recipient:jdoe@gmail.com',
      'claim-code-domain:gmail.com',
      'claim-code-all',
      'claim-codes:abc',
    ]);
    expect(codeLocks('jdoe@gmail.com')).toEqual(codeLocks('J.Doe@googlemail.com'));
  });
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOW = new Date('2026-05-04T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const tx = {} as Tx;

/** A store whose sends are given per scope ("recipient", "domain", "tokenHash" or "all"), newest first. */
function sends(by: Partial<Record<'recipient' | 'domain' | 'tokenHash' | 'all', Date[]>>) {
  const asked: CodeSendScope[] = [];
  return {
    asked,
    codesSentSince: async (scope: CodeSendScope, since: Date, limit: number) => {
      asked.push(scope);
      const key = Object.keys(scope)[0] as keyof typeof by;
      return (by[key] ?? []).filter((at) => at > since).slice(0, limit);
    },
  };
}

async function refusal(store: ReturnType<typeof sends>, serviceMailPerHour = 200): Promise<AgentAuthError | undefined> {
  try {
    const caps = { serviceMailPerHour, perDomain: CODES_PER_DOMAIN };
    await refuseOverCodeLimits(store, { recipient: 'jdoe@gmail.com', tokenHash: 'abc', at: NOW }, caps, tx);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AgentAuthError);
    return error as AgentAuthError;
  }
}

const times = (count: number, spacingMs: number, from = 0) => Array.from({ length: count }, (_, i) => ago(from + i * spacingMs));

describe('refuseOverCodeLimits', () => {
  it('lets a code through under every limit, asking each of the four counts', async () => {
    const store = sends({ recipient: times(2, MINUTE), domain: times(9, MINUTE), tokenHash: times(4, HOUR), all: times(199, 10_000) });
    expect(await refusal(store)).toBeUndefined();
    expect(store.asked).toEqual([{ recipient: 'jdoe@gmail.com' }, { domain: 'gmail.com' }, { tokenHash: 'abc' }, { all: true }]);
  });

  it('refuses an 11th code to one domain in 15 minutes, and a 51st in a day, saying which domain and how long', async () => {
    const quarter = await refusal(sends({ domain: times(10, MINUTE, MINUTE) }));
    expect(quarter).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 5 * 60 });
    expect(quarter?.message).toBe('too many codes have been mailed to addresses at gmail.com: try again in 5 minutes');

    const day = await refusal(sends({ domain: times(50, 20 * MINUTE, 2 * HOUR) }));
    expect(day?.retryAfterSeconds).toBe(5 * 3600 + 40 * 60);
    expect(day?.message).toMatch(/^too many codes have been mailed to addresses at gmail\.com: try again in 6 hours$/);
  });

  it('refuses past SERVICE_MAIL_LIMIT codes in an hour, to anyone, until the oldest of them is an hour old', async () => {
    const full = await refusal(sends({ all: times(200, 10_000, 10 * MINUTE) }));
    expect(full?.retryAfterSeconds).toBe(1010);
    expect(full?.message).toBe('too many codes have been mailed by this service in the last hour (at most 200): try again in 17 minutes');
    expect(await refusal(sends({ all: times(3, MINUTE) }), 3)).toMatchObject({ retryAfterSeconds: 58 * 60 });
    expect(await refusal(sends({ all: times(3, MINUTE) }), 4)).toBeUndefined();
  });

  it('waits for the limit that frees last, and names it', async () => {
    const both = await refusal(sends({ recipient: times(3, MINUTE), all: times(5, MINUTE, 30 * MINUTE) }), 5);
    expect(both?.retryAfterSeconds).toBe(26 * 60);
    expect(both?.message).toMatch(/by this service in the last hour \(at most 5\): try again in 26 minutes$/);
    const recipientLonger = await refusal(sends({ recipient: times(3, MINUTE), all: times(5, MINUTE, 50 * MINUTE) }), 5);
    expect(recipientLonger?.message).toMatch(/to this email address: try again in 13 minutes$/);
  });

  it('waitBeforeNextSend: a send counts while less than its window has passed', () => {
    const limits = [{ max: 2, windowMs: HOUR }];
    expect(waitBeforeNextSend([ago(MINUTE)], limits, NOW)).toBe(0);
    expect(waitBeforeNextSend([ago(MINUTE), ago(HOUR - 1)], limits, NOW)).toBe(1);
    expect(waitBeforeNextSend([ago(MINUTE), ago(HOUR)], limits, NOW)).toBe(0);
  });
});
