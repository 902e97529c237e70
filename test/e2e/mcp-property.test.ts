// Property-based, with the official MCP client over a real socket: submit_inquiry answers an error
// exactly when POST /api/contact answers 400 for the same fields (naming the same ones), and accepts
// an idempotencyKey exactly when it matches the schema tools/list advertises.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, startTestApp, type TestApp } from '../helpers/app.js';

let testApp: TestApp;
let client: Client;
beforeAll(async () => {
  testApp = await startTestApp({ listen: true, startWorker: false });
  client = new Client({ name: 'property-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${testApp.baseUrl}/mcp`)));
});
afterAll(async () => {
  await client?.close();
  await testApp?.close();
});

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

const VISIBLE_ASCII = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i));
const visible = (minLength: number, maxLength: number, without = '') =>
  fc.string({ unit: fc.constantFrom(...VISIBLE_ASCII.filter((c) => !without.includes(c))), minLength, maxLength });
const notVisible = fc.constantFrom(' ', '\t', '\n', '\u0000', '\u007f', '\u00e9', '\u{1F600}');

/** The rule docs/api.md gives for the argument, read independently: 1–255 of U+0021–U+007E but ". */
const isKey = (key: unknown) => typeof key === 'string' && /^[\x21\x23-\x7e]{1,255}$/.test(key);

const idempotencyKey = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: visible(1, 255, '"') },
  fc.constantFrom('', '""', '"quoted"', 'k'.repeat(255), 'k'.repeat(256)),
  visible(1, 40).map((key) => `"${key}"`),
  visible(256, 300, '"'),
  fc.tuple(visible(1, 20, '"'), notVisible, visible(1, 20, '"')).map(([a, c, b]) => a + c + b),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(['k'])),
);

let runs = 0;
const text = (valid: fc.Arbitrary<unknown>, ...invalid: unknown[]) =>
  fc.oneof({ weight: 12, arbitrary: valid }, fc.constantFrom(...invalid), fc.string({ unit: 'grapheme', maxLength: 8 }));
const REQUIRED = ['firstName', 'lastName', 'email', 'message'] as const;
/** Fields that are valid about half the time, each wrong in the ways people and agents get them wrong. */
const fields = fc
  .tuple(
    fc.record({
      firstName: text(fc.constantFrom('Ada', 'Zoë', '\u{1F600}'), '', ' ', '\u200b', '\u3164\u00ad', 'x'.repeat(201), 'A\u0000', 42),
      lastName: text(fc.constant('Lovelace'), '', '\n', null),
      email: text(fc.emailAddress(), 'nope', 'a@b', '"q"@example.com', 'a b@example.com', '', 7),
      company: fc.oneof(fc.constant(undefined), text(fc.constant('Analytical Engines'), 'x'.repeat(201), 'A\u0000', false)),
      message: text(fc.constantFrom('A new website, please.', 'An app.'), '', '   ', ['brief']),
    }),
    fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, fc.constantFrom(...REQUIRED, 'extra')),
  )
  .map(([record, change]) => {
    const args: Record<string, unknown> = Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
    if (change === 'extra') args.extra = 'not a field';
    else if (change !== undefined) delete args[change];
    return args;
  });

describe('submit_inquiry and POST /api/contact', () => {
  it('answer an error for the same fields, and the tool accepts exactly the advertised idempotencyKeys', async () => {
    const submit = (await client.listTools()).tools.find((tool) => tool.name === 'submit_inquiry');
    const advertised = new Ajv2020({ strict: false }).compile(submit?.inputSchema.properties?.idempotencyKey as object);
    /** Keys the tool has accepted, with the fields they were accepted with (RFC draft: a key is for one request). */
    const keptWith = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(fields, idempotencyKey, async (generated, key) => {
        const args: Record<string, unknown> = { ...generated };
        if (typeof args.message === 'string' && args.message.trim() !== '') args.message = `${args.message} (run ${++runs})`;
        expect(advertised(key)).toBe(isKey(key));

        const http = await fetch(`${testApp.baseUrl}/api/contact`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(args),
        });
        const answer = (await client.callTool({
          name: 'submit_inquiry',
          arguments: key === undefined ? args : { ...args, idempotencyKey: key },
        })) as ToolResult;
        const toolText = answer.content[0]?.text ?? '';

        expect([200, 400]).toContain(http.status);
        const keyRefused = key !== undefined && !isKey(key);
        const reused = typeof key === 'string' && keptWith.has(key) && keptWith.get(key) !== JSON.stringify(args);
        expect({ isError: answer.isError === true }).toEqual({
          isError: http.status === 400 || keyRefused || (http.status === 200 && reused),
        });

        if (http.status === 400) {
          const { errors } = (await http.json()) as { errors: { pointer: string }[] };
          for (const { pointer } of errors) expect(toolText).toContain(`- ${pointer.slice(1)}:`);
        } else if (!keyRefused && !reused) {
          // One service behind both doors: the tool's call folds into the endpoint's inquiry.
          expect(answer.structuredContent?.reference).toBe(referenceOf(await http.text()));
          if (typeof key === 'string' && !keptWith.has(key)) keptWith.set(key, JSON.stringify(args));
        }
        if (keyRefused) expect(toolText).toContain('- idempotencyKey: must be 1-255 visible ASCII characters');
        if (http.status === 200 && !keyRefused && reused) expect(toolText).toContain('idempotencyKey was already used');
      }),
      { numRuns: 300 },
    );
  });
});
