// judge under arbitrary input (fast-check): it never throws, its score is finite, its reasons have
// known codes, and a claimed agent's inquiry is never spam on content alone.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SPAM_CODES } from '../../src/spam/types.js';
import { judge } from '../../src/spam/verdict.js';

const text = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
);
const inquiry = fc.record({ firstName: text, lastName: text, email: text, company: fc.option(text), message: text });
const signals = fc.record({
  proof: fc.constantFrom('valid' as const, 'invalid' as const, 'missing' as const),
  honeypot: fc.boolean(),
  trustedAgent: fc.boolean(),
  repeatedFromOtherAddresses: fc.oneof(fc.nat(), fc.double()),
});

describe('judge, for any strings', () => {
  it('never throws, gives a finite score and only known codes', () => {
    fc.assert(
      fc.property(inquiry, signals, (anyInquiry, anySignals) => {
        const { verdict, score, reasons } = judge(anyInquiry, anySignals);
        expect(['inbox', 'spam']).toContain(verdict);
        expect(Number.isFinite(score)).toBe(true);
        for (const reason of reasons) expect(SPAM_CODES).toContain(reason.code);
      }),
      { numRuns: 500 },
    );
  });

  it("never quarantines a claimed agent's inquiry on content alone", () => {
    const spammy = fc.constantFrom(
      'backlinks guest post free spins',
      'https://bit.ly/x <a href="y">',
      'xkqzvbnmrt',
      'a.com b.com c.com d.com e.com f.com',
    );
    const content = fc.record({
      firstName: fc.oneof(text, spammy),
      lastName: text,
      email: text,
      company: fc.option(text),
      message: fc.oneof(text, spammy),
    });
    fc.assert(
      fc.property(content, fc.constantFrom('valid' as const, 'missing' as const), (anyInquiry, proof) => {
        const signalsOfAgent = { proof, honeypot: false, trustedAgent: true, repeatedFromOtherAddresses: 0 };
        expect(judge(anyInquiry, signalsOfAgent).verdict).toBe('inbox');
      }),
      { numRuns: 500 },
    );
  });
});
