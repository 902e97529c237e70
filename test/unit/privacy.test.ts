// Addresses masked in logs and stored delivery errors: what is kept (first letter, domain), and a
// real pino logger's output, an error's message and stack included.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { maskDeep, maskEmailAddresses } from '../../src/privacy.js';

describe('maskEmailAddresses', () => {
  it('keeps the first letter and the domain of each address', () => {
    expect(maskEmailAddresses('550 5.1.1 <studio.owner+x@northlight.example>: unknown user')).toBe(
      '550 5.1.1 <s***@northlight.example>: unknown user',
    );
    expect(maskEmailAddresses('to Åsa@bücher.example and li@163.com')).toBe('to Å***@bücher.example and l***@163.com');
    expect(maskEmailAddresses('no address here, just @handles and a.b')).toBe('no address here, just @handles and a.b');
  });

  it('leaves no whole address in any text', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.string(), fc.string(), (address, before, after) => {
        const local = address.slice(0, address.lastIndexOf('@'));
        const masked = maskEmailAddresses(`${before} ${address} ${after}`);
        if (local.length > 1) expect(masked).not.toContain(` ${address} `);
      }),
    );
  });

  it('masks strings deep in records, leaving errors and dates to their serializers', () => {
    const error = new Error('a@b.example');
    const when = new Date(0);
    expect(maskDeep({ to: 'ann@x.example', list: ['bo@y.example', 3], error, when })).toEqual({
      to: 'a***@x.example',
      list: ['b***@y.example', 3],
      error,
      when,
    });
  });
});

describe('the logger', () => {
  it('masks addresses in fields, messages and errors', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    log.warn({ recipient: 'owner@studio.example' }, 'mail to owner@studio.example refused');
    log.error({ err: new Error('550 <owner@studio.example> no such user') }, 'failed');
    const text = lines.join('');
    expect(text).not.toContain('owner@studio.example');
    expect(text).toContain('o***@studio.example');
    expect(JSON.parse(lines[1] ?? '{}').err.message).toBe('550 <o***@studio.example> no such user');
  });
});
