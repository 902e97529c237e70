// Property-based: whatever body arrives, /api/contact never answers 5xx; it accepts exactly the
// bodies an independent reading of the Inquiry rules accepts, and rejects the rest with a 400 that
// names at least one field.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INQUIRY_LIMITS } from '../../src/inquiries/schema.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
beforeAll(async () => {
  testApp = await startTestApp({ startWorker: false });
});
afterAll(async () => {
  await testApp.close();
});

const FIELDS = ['firstName', 'lastName', 'email', 'company', 'message'] as const;
const REQUIRED = ['firstName', 'lastName', 'email', 'message'];
const MAX: Record<string, number> = {
  firstName: INQUIRY_LIMITS.nameMaxLength,
  lastName: INQUIRY_LIMITS.nameMaxLength,
  company: INQUIRY_LIMITS.companyMaxLength,
  email: INQUIRY_LIMITS.emailMaxLength,
  message: INQUIRY_LIMITS.messageMaxLength,
};

/** The oracle: the rules of interface document §2.1 and the README, written out independently. */
function isValidInquiry(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const record = body as Record<string, unknown>;
  if (Object.keys(record).some((key) => !(FIELDS as readonly string[]).includes(key))) return false;
  if (REQUIRED.some((key) => !(key in record))) return false;
  return Object.entries(record).every(([key, value]) => {
    if (typeof value !== 'string' || [...value].length > (MAX[key] ?? 0)) return false;
    if (value.includes('\u0000')) return false; // PostgreSQL cannot store it; nobody means it
    if (key === 'email') return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) && !value.includes('..');
    if (key === 'company') return true;
    return value.trim().length > 0 || /\S/u.test(value);
  });
}

const fieldValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('', ' ', '\n\t', 'ada@example.com', 'a@b', 'x'.repeat(201), '\u0000', 'Ada\u0000', '\r\nBcc: x@y.z'),
  fc.emailAddress(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
);

const inquiryLike = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })), fieldValue, { maxKeys: 7 });
const anyJson = fc.oneof(inquiryLike, fc.jsonValue({ maxDepth: 3 }));

describe('POST /api/contact with arbitrary bodies', () => {
  it('never answers 5xx, and accepts exactly the valid inquiries', async () => {
    await fc.assert(
      fc.asyncProperty(anyJson, async (body) => {
        const response = await testApp.app.inject({
          method: 'POST',
          url: '/api/contact',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        expect(response.statusCode).toBeLessThan(500);
        if (response.statusCode === 200) {
          expect(isValidInquiry(body)).toBe(true);
          return;
        }
        expect(response.statusCode).toBe(400);
        const problem = response.json();
        // The JSON parser refuses prototype-poisoning keys outright; everything else names its fields.
        if (problem.error === 'invalid_json') {
          expect(JSON.stringify(body)).toMatch(/"(__proto__|constructor)"/);
          return;
        }
        expect(problem.errors.length).toBeGreaterThan(0);
        // The oracle's email rule is looser than RFC-grade parsing; all other rules must agree.
        if (isValidInquiry(body)) expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/email']);
      }),
      { numRuns: 2000 },
    );
  });

  it('never answers 5xx to arbitrary bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 200 }),
        fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8'),
        async (payload, contentType) => {
          const response = await testApp.app.inject({
            method: 'POST',
            url: '/api/contact',
            headers: { 'content-type': contentType },
            payload,
          });
          expect(response.statusCode).toBeLessThan(500);
          expect(response.headers['content-type']).toMatch(/^(application\/problem\+json|text\/plain)/);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
