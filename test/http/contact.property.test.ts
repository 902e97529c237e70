// Property-based: /api/contact never answers 5xx, accepts (and stores as sent) exactly the bodies an
// independent reading of docs/api.md's rules accepts, and names exactly the bad fields in its 400;
// lengths near each limit tried with astral characters, and Idempotency-Key headers too.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INQUIRY_LIMITS } from '../../src/inquiries/schema.js';
import { referenceOf, startTestApp, type TestApp, validInquiry } from '../helpers/app.js';

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

/** RFC 5322 §3.2.3 atext: the characters of a dot-atom local part. */
const ATEXT = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-/=?^_`{|}~";
const LETTERS_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The address rule, written out independently: RFC 5322 §3.4.1 addr-spec with a dot-atom local part
 * (no quoted strings) and an RFC 5321 §4.1.2 Domain (two or more letter-digit-hyphen labels, no
 * address literal), at most 254 characters. No quoted local parts, IP literals or non-ASCII.
 */
function isEmailAddress(value: string): boolean {
  if ([...value].length > INQUIRY_LIMITS.emailMaxLength) return false;
  const at = value.lastIndexOf('@');
  if (at < 0) return false;
  const atoms = value.slice(0, at).split('.');
  const labels = value.slice(at + 1).split('.');
  const isAtom = (atom: string) => atom.length > 0 && [...atom].every((c) => ATEXT.includes(c));
  const isLabel = (label: string) =>
    label.length > 0 && [...label].every((c) => LETTERS_DIGITS.includes(c) || c === '-') && !label.startsWith('-') && !label.endsWith('-');
  return atoms.every(isAtom) && labels.length >= 2 && labels.every(isLabel);
}

function isValidField(key: string, value: unknown): boolean {
  if (typeof value !== 'string' || [...value].length > (MAX[key] ?? 0)) return false;
  if (value.includes('\u0000')) return false; // PostgreSQL cannot store it; nobody means it
  if (key === 'email') return isEmailAddress(value);
  if (key === 'company') return true;
  return hasVisibleCharacter(value);
}

/**
 * docs/api.md's rule for names and messages, read independently: a character that is neither
 * whitespace, nor a control character, nor default-ignorable (zero-width, bidi and variation marks,
 * fillers), where characters beyond U+FFFF always count as visible.
 */
function hasVisibleCharacter(value: string): boolean {
  return [...value].some((c) => (c.codePointAt(0) ?? 0) > 0xffff || !/[\s\p{Cc}\p{Default_Ignorable_Code_Point}]/u.test(c));
}

const pointerTo = (key: string) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The oracle: the JSON Pointers of the fields docs/api.md's rules refuse ([] for a valid inquiry). */
function invalidPointers(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [''];
  const record = body as Record<string, unknown>;
  const bad = Object.keys(record).filter((key) => !(FIELDS as readonly string[]).includes(key) || !isValidField(key, record[key]));
  const missing = REQUIRED.filter((key) => !Object.hasOwn(record, key));
  return [...bad, ...missing].map(pointerTo).sort();
}

const post = (payload: unknown, headers: Record<string, string> = {}) =>
  testApp.app.inject({
    method: 'POST',
    url: '/api/contact',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });

const pointersOf = (problem: { errors: { pointer: string }[] }) => problem.errors.map((e) => e.pointer).sort();

/** Each run of a property stores its own inquiry: a unique email never folds into an earlier one. */
let runs = 0;
const uniqueEmail = () => `run-${++runs}@example.com`;

async function expectStoredAsSent(response: { statusCode: number; body: string }, sent: Record<string, string>) {
  expect(response.statusCode).toBe(200);
  const stored = await testApp.services.store.inquiries.findByReference(referenceOf(response.body));
  expect(stored).toMatchObject({ ...sent, company: sent.company ?? null });
}

// --- addresses -------------------------------------------------------------------------------

const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });
const localPart = fc
  .array(chars(ATEXT, 1, 24), { minLength: 1, maxLength: 4 })
  .map((atoms) => atoms.join('.'))
  .filter((local) => local.length <= 64);
/** RFC 1035 §2.3.1: 1–63 letters, digits and hyphens, starting and ending with a letter or digit. */
const label = fc.oneof(
  chars(LETTERS_DIGITS, 1, 1),
  fc.tuple(chars(LETTERS_DIGITS, 1, 1), chars(`${LETTERS_DIGITS}-`, 0, 61), chars(LETTERS_DIGITS, 1, 1)).map((parts) => parts.join('')),
);
const domainName = fc.array(label, { minLength: 2, maxLength: 4 }).map((labels) => labels.join('.'));
/** An address padded with labels to `target` characters (or one fewer): the 254 limit itself. */
const addressNearLimit = fc
  .tuple(localPart, domainName, fc.oneof(fc.constant(INQUIRY_LIMITS.emailMaxLength), fc.integer({ min: 240, max: 253 })))
  .map(([local, domain, target]) => {
    let padded = domain;
    let room = target - local.length - 1 - padded.length;
    while (room >= 2) {
      const length = Math.min(63, room - 1);
      padded = `${'x'.repeat(length)}.${padded}`;
      room -= length + 1;
    }
    return `${local}@${padded}`;
  });
const validAddress = fc
  .oneof(
    fc.emailAddress(),
    fc.emailAddress({ size: 'large' }),
    fc.tuple(localPart, domainName).map(([l, d]) => `${l}@${d}`),
    addressNearLimit,
  )
  .filter((address) => address.length <= INQUIRY_LIMITS.emailMaxLength);
/** A valid address with one character inserted or deleted: sometimes still valid, mostly not. */
const editedAddress = fc
  .tuple(validAddress, fc.nat(), fc.constantFrom(...' "(),.:;<>@[\\]-+x\u00e9\u{1F600}\t\n\u0000', 'delete'))
  .map(([address, at, edit]) => {
    const i = at % (address.length + 1);
    return edit === 'delete' ? address.slice(0, i) + address.slice(i + 1) : address.slice(0, i) + edit + address.slice(i);
  });

// --- lengths near the limits ------------------------------------------------------------------

const codePoint = fc.oneof(
  fc.integer({ min: 0x1f300, max: 0x1faff }).map((c) => String.fromCodePoint(c)), // emoji
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)), // any astral
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 2 }), // clusters: ZWJ sequences, flags, marks
);
/** Exactly `length` code points, cycling through `units`, led by an emoji (so never blank). */
function textOf(units: string[], length: number): string {
  const pool = ['\u{1F3A8}', ...units.join('').replaceAll('\u0000', '')];
  return Array.from({ length }, (_, i) => pool[i % pool.length]).join('');
}
const TEXT_FIELDS = ['firstName', 'lastName', 'company', 'message'] as const;

// --- Idempotency-Key headers ------------------------------------------------------------------

const VISIBLE_ASCII = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
const visibleKey = (minLength: number, maxLength: number) => chars(VISIBLE_ASCII, minLength, maxLength);
/** What a header can carry (no CR, LF or NUL; HTTP strips whitespace at either end) that is not visible ASCII. */
const notVisible = fc.constantFrom(' ', '\t', '\u0001', '\u001f', '\u007f', '\u0080', '\u00e9', '\u00ff', '\u20ac', '\u{1F600}');
const headerKey = fc.oneof(
  visibleKey(1, 255),
  visibleKey(1, 255).map((key) => `"${key}"`),
  visibleKey(256, 300),
  fc.constantFrom('', '""', '"', '"a"b"', 'a"b'),
  fc.tuple(visibleKey(1, 40), notVisible, visibleKey(1, 40)).map(([a, c, b]) => a + c + b),
  fc.tuple(visibleKey(1, 40), notVisible, visibleKey(1, 40)).map(([a, c, b]) => `"${a}${c}${b}"`),
);
/** docs/api.md's rule, read independently: a bare token or a quoted string of 1–255 of U+0021–U+007E but the double quote. */
function keyOf(header: string): string | undefined {
  const inner = header.length >= 2 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
  return /^[\x21\x23-\x7e]{1,255}$/.test(inner) ? inner : undefined;
}

const fieldValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '\n\t',
    'ada@example.com',
    'a@b',
    'x'.repeat(201),
    '\u0000',
    'Ada\u0000',
    '\r\nBcc: x@y.z',
    '\u200b',
    '\u{E0041}',
  ),
  // Whitespace and invisible characters, now and then with a visible one among them.
  fc.string({
    unit: fc.constantFrom(
      ' ',
      '\u0085',
      '\u00ad',
      '\u034f',
      '\u180e',
      '\u200b',
      '\u200d',
      '\u202e',
      '\u2060',
      '\u3164',
      '\ufe0f',
      '\ufeff',
      '\u0007',
      'a',
    ),
    maxLength: 6,
  }),
  fc.emailAddress(),
  editedAddress,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
);

const inquiryLike = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })), fieldValue, { maxKeys: 7 });
const anyJson = fc.oneof(inquiryLike, fc.jsonValue({ maxDepth: 3 }));

describe('POST /api/contact with arbitrary bodies', () => {
  it('never answers 5xx, accepts exactly the valid inquiries, and names exactly the bad fields', async () => {
    await fc.assert(
      fc.asyncProperty(anyJson, async (body) => {
        const response = await post(body);
        expect(response.statusCode).toBeLessThan(500);
        const expected = invalidPointers(body);
        if (response.statusCode === 200) {
          expect(expected).toEqual([]);
          return;
        }
        expect(response.statusCode).toBe(400);
        const problem = response.json();
        // The JSON parser refuses prototype-poisoning keys outright; everything else names its fields.
        if (problem.error === 'invalid_json') {
          expect(JSON.stringify(body)).toMatch(/"(__proto__|constructor)"/);
          return;
        }
        expect(pointersOf(problem)).toEqual(expected);
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

describe('POST /api/contact email addresses', () => {
  it('accepts every dot-atom address at a domain name, up to 254 characters, and stores it as sent', async () => {
    await fc.assert(
      fc.asyncProperty(validAddress, async (email) => {
        expect(isEmailAddress(email)).toBe(true);
        const sent = validInquiry({ email, message: `address run ${++runs}` });
        await expectStoredAsSent(await post(sent), sent);
      }),
      { numRuns: 300 },
    );
  });

  it('accepts an edited address exactly when it is still one, and otherwise names /email', async () => {
    await fc.assert(
      fc.asyncProperty(editedAddress, async (email) => {
        const response = await post(validInquiry({ email, message: `edited address run ${++runs}` }));
        if (isEmailAddress(email)) expect(response.statusCode).toBe(200);
        else expect({ status: response.statusCode, pointers: pointersOf(response.json()) }).toEqual({ status: 400, pointers: ['/email'] });
      }),
      { numRuns: 400 },
    );
  });
});

describe('POST /api/contact lengths in code points', () => {
  it('accepts each text field of astral characters up to its limit, stored as sent, and names it above', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TEXT_FIELDS),
        fc.integer({ min: -3, max: 3 }),
        fc.array(codePoint, { minLength: 1, maxLength: 8 }),
        async (field, offset, units) => {
          const limit = MAX[field] ?? 0;
          const text = textOf(units, limit + offset);
          const sent = validInquiry({ email: uniqueEmail(), [field]: text });
          const response = await post(sent);
          if (offset <= 0) {
            await expectStoredAsSent(response, sent);
            return;
          }
          expect(response.statusCode).toBe(400);
          expect(response.json().errors).toEqual([{ pointer: `/${field}`, detail: `must be at most ${limit} characters long` }]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('POST /api/contact Idempotency-Key', () => {
  it('accepts 1–255 visible ASCII characters, bare or quoted as the same key, and refuses anything else with invalid_idempotency_key', async () => {
    // One body for every run: a key seen before replays, a new key folds into the first inquiry.
    const body = validInquiry({ email: 'idempotency-property@example.com', message: 'One body for every key.' });
    await fc.assert(
      fc.asyncProperty(headerKey, async (header) => {
        const response = await post(body, { 'idempotency-key': header });
        const key = keyOf(header);
        if (key === undefined) {
          expect(response.statusCode).toBe(400);
          expect(response.json().error).toBe('invalid_idempotency_key');
          return;
        }
        expect(response.statusCode).toBe(200);
        // The quoted form is the same key: sending it replays this answer.
        const quoted = await post(body, { 'idempotency-key': `"${key}"` });
        expect({ status: quoted.statusCode, replayed: quoted.headers['idempotent-replayed'], body: quoted.body }).toEqual({
          status: 200,
          replayed: 'true',
          body: response.body,
        });
      }),
      { numRuns: 300 },
    );
  });
});
