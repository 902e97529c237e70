// Pure inquiry rules: references, fingerprints, idempotency keys and canonical request hashes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdempotencyKeyError } from '../../src/errors.js';
import { newReference, normaliseReference, REFERENCE_PATTERN } from '../../src/inquiries/reference.js';
import { checkIdempotencyKey, fingerprintOf, hashJson } from '../../src/inquiries/service.js';
import { WRITTEN_TEXT } from '../../src/validation/ajv.js';

describe('references', () => {
  it('look like INQ-7K2M9Q, without look-alike letters, and rarely repeat', () => {
    const references = Array.from({ length: 5_000 }, newReference);
    for (const reference of references) {
      expect(reference).toMatch(REFERENCE_PATTERN);
      expect(reference.slice(4)).not.toMatch(/[ILOU]/);
    }
    expect(new Set(references).size).toBeGreaterThan(4_990);
  });

  it('normalise what a person types', () => {
    expect(normaliseReference(' inq-7k2m9q ')).toBe('INQ-7K2M9Q');
    expect(normaliseReference('7K2M9Q')).toBe('INQ-7K2M9Q');
    expect(normaliseReference('INQ-OI2L9Q')).toBe('INQ-01219Q');
    fc.assert(
      fc.property(fc.constant(null).map(newReference), (reference) => {
        expect(normaliseReference(reference.toLowerCase())).toBe(reference);
      }),
    );
  });
});

describe('fingerprints', () => {
  it('ignore the case of the email but not the message', () => {
    expect(fingerprintOf({ email: 'Ada@Example.com', message: 'Hi' })).toBe(fingerprintOf({ email: 'ada@example.com', message: 'Hi' }));
    expect(fingerprintOf({ email: 'ada@example.com', message: 'Hi' })).not.toBe(fingerprintOf({ email: 'ada@example.com', message: 'hi' }));
    // The separator keeps field boundaries: moving text from one field to the other changes it.
    expect(fingerprintOf({ email: 'a@b.co', message: 'x' })).not.toBe(fingerprintOf({ email: 'a@b.cox', message: '' }));
  });
});

describe('request hashes', () => {
  it('do not depend on the order of keys, and do depend on every value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 6 }), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(hashJson(reversed)).toBe(hashJson(object));
        expect(hashJson({ ...object, 'extra key': 1 })).not.toBe(hashJson(object));
      }),
    );
  });
});

describe('Idempotency-Key', () => {
  it('accepts bare and quoted keys', () => {
    expect(checkIdempotencyKey('abc-123')).toBe('abc-123');
    expect(checkIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
  });

  it.each(['', '""', 'with space', 'ü', 'x'.repeat(256)])('rejects %j', (key) => {
    expect(() => checkIdempotencyKey(key)).toThrow(IdempotencyKeyError);
  });

  const VISIBLE_ASCII = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i));
  const visible = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...VISIBLE_ASCII), minLength, maxLength });
  /** Anything but U+0021–U+007E: space, controls, DEL, Latin-1, other BMP, astral, a lone surrogate. */
  const invisible = fc.oneof(
    fc.constantFrom(' ', '\t', '\n', '\r', '\u0000', '\u007f', '\u00a0', '\u00e9', '\u2028', '\ufeff', '\u{1F600}', '\ud800'),
    fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x7f, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  );
  const candidate = fc.oneof(
    visible(1, 255),
    visible(0, 255).map((key) => `"${key}"`),
    visible(256, 300),
    visible(254, 255).map((key) => `"${key}x"`),
    fc.tuple(visible(0, 20), invisible, visible(0, 20)).map(([a, c, b]) => a + c + b),
    fc.tuple(visible(0, 20), invisible, visible(0, 20)).map(([a, c, b]) => `"${a}${c}${b}"`),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
  /** docs/api.md's rule, read independently: one pair of enclosing quotes is dropped; 1–255 of U+0021–U+007E. */
  const keyOf = (raw: string): string | undefined => {
    const inner = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
    return inner.length >= 1 && inner.length <= 255 && [...inner].every((c) => c >= '!' && c <= '~' && c !== '"') ? inner : undefined;
  };

  it('accepts exactly 1–255 visible ASCII characters but the double quote, bare or quoted, and returns the key unquoted', () => {
    fc.assert(
      fc.property(candidate, (raw) => {
        const key = keyOf(raw);
        if (key === undefined) expect(() => checkIdempotencyKey(raw)).toThrow(IdempotencyKeyError);
        else expect(checkIdempotencyKey(raw)).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('written text (names and messages)', () => {
  /** docs/api.md's rule, read from the Unicode properties: neither whitespace, nor control, nor default-ignorable. */
  const visible = (c: string) => (c.codePointAt(0) ?? 0) > 0xffff || !/[\s\p{Cc}\p{Default_Ignorable_Code_Point}]/u.test(c);
  // As Ajv compiles it (the u flag), and as a client that reads the published schema may (without).
  const patterns = [new RegExp(WRITTEN_TEXT, 'u'), new RegExp(WRITTEN_TEXT)];

  it('needs a visible character: every character of U+0001-U+FFFF but the surrogates, alone and among spaces', () => {
    const disagree: string[] = [];
    for (let cp = 1; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCharCode(cp);
      for (const pattern of patterns) {
        for (const text of [c, ` ${c}\u200b`]) {
          if (pattern.test(text) !== visible(c)) disagree.push(`U+${cp.toString(16).padStart(4, '0')} (${pattern.flags || 'no flags'})`);
        }
      }
    }
    expect(disagree).toEqual([]);
  });

  it('takes a character beyond U+FFFF as visible, and refuses NUL and lone surrogates wherever they are', () => {
    for (const pattern of patterns) {
      expect(pattern.test('\u{1F600}')).toBe(true);
      expect(pattern.test('\u200b\u{E0041}')).toBe(true);
      expect(pattern.test('Ada\u0000')).toBe(false);
      expect(pattern.test('Ada\ud800')).toBe(false);
      expect(pattern.test('\udc00Ada')).toBe(false);
    }
  });
});
