// Pure inquiry rules: references, fingerprints, idempotency keys and canonical request hashes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdempotencyKeyError } from '../../src/errors.js';
import { newReference, normaliseReference, REFERENCE_PATTERN } from '../../src/inquiries/reference.js';
import { checkIdempotencyKey, fingerprintOf, hashJson } from '../../src/inquiries/service.js';

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
});
