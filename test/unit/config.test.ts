// loadConfig: the defaults of docs/configuration.md, and one clear error naming the variable for each bad value.
import fc from 'fast-check';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DEFAULT_SPAM_THRESHOLD } from '../../src/spam/weights.js';

describe('TRUST_PROXY', () => {
  it('accepts only what Fastify takes for its trustProxy (else the app failed to build, with a stack trace)', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const entry = fc.oneof(
      fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.')),
      fc.constantFrom('::1', 'fe80::', '::ffff:10.0.0.1', '2001:db8::', 'loopback', 'uniquelocal', 'not-an-address'),
    );
    const value = fc
      .array(fc.tuple(entry, fc.option(fc.integer({ min: 0, max: 140 })), fc.boolean()), { minLength: 1, maxLength: 3 })
      .map((entries) =>
        entries
          .map(([address, prefix, twice]) => (prefix === null ? address : `${address}/${prefix}${twice ? `/${prefix}` : ''}`))
          .join(','),
      );
    fc.assert(
      fc.property(value, (trustProxy) => {
        let accepted: unknown;
        try {
          accepted = loadConfig({ TRUST_PROXY: trustProxy }).trustProxy;
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          return;
        }
        expect(() => Fastify({ trustProxy: accepted as string[] })).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      publicUrl: 'http://localhost:3000',
      database: { kind: 'sqlite', path: 'data/studio.db' },
      smtp: null,
      webhook: null,
      mailFrom: { name: null, address: 'no-reply@localhost' },
      studioTimeZone: 'UTC',
      rateLimitInquiries: { max: 5, windowMs: 10 * 60_000 },
      trustProxy: false,
      corsOrigins: ['http://localhost:3000'],
      logLevel: 'info',
      trustedIssuers: {},
      deliveryLeaseMs: 120_000,
      serviceMailLimit: 200,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('warns of settings that do less than they seem to: a channel half set up, none at all, an unsigned webhook, signing keys in clear', () => {
    const smtp = { SMTP_URL: 'smtp://mail.example.com', INQUIRY_TO: 'studio@example.com' };
    const webhook = { WEBHOOK_URL: 'https://hooks.example/inquiry', WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}` };
    const noChannel = expect.stringMatching(/^no delivery channel is configured/);
    const sealed = { SIGNING_KEY_SECRET: 'a signing key secret, long enough' };
    expect(loadConfig({ ...sealed, ...smtp, ...webhook }).warnings).toEqual([]);
    expect(loadConfig({ ...sealed, ...smtp, MAIL_FROM: 'Studio <studio@example.com>' }).warnings).toEqual([]);
    expect(loadConfig({ ...sealed }).warnings).toEqual([noChannel]);
    expect(loadConfig({ ...sealed, INQUIRY_TO: 'studio@example.com', MAIL_FROM: 'Studio <studio@example.com>' }).warnings).toEqual([
      noChannel,
      'INQUIRY_TO is set but SMTP_URL is not: no email is sent',
      'MAIL_FROM is set but SMTP_URL is not: no email is sent',
    ]);
    expect(loadConfig({ ...sealed, ...webhook, INQUIRY_TO: 'studio@example.com' }).warnings).toEqual([
      'INQUIRY_TO is set but SMTP_URL is not: no email is sent',
    ]);
    expect(loadConfig({ ...sealed, ...smtp, WEBHOOK_URL: webhook.WEBHOOK_URL }).warnings).toEqual([
      'WEBHOOK_SECRET is not set: webhook requests are sent unsigned',
    ]);
    expect(loadConfig({ ...sealed, ...smtp, WEBHOOK_SECRET: webhook.WEBHOOK_SECRET }).warnings).toEqual([
      'WEBHOOK_SECRET is set but WEBHOOK_URL is not: no webhook is sent',
    ]);
    expect(loadConfig({ ...smtp, ...webhook, SIGNING_KEY_SECRET: undefined }).warnings).toEqual([
      'SIGNING_KEY_SECRET is not set: the token-signing private keys are stored unencrypted in the database',
    ]);
  });

  it('derives PUBLIC_URL from PORT and drops a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://studio.example/' }).publicUrl).toBe('https://studio.example');
    expect(loadConfig({ PUBLIC_URL: 'https://studio.example/' }).mailFrom).toEqual({ name: null, address: 'no-reply@studio.example' });
  });

  it('takes the display name of MAIL_FROM where it gives one, and an IANA zone in its canonical spelling', () => {
    expect(loadConfig({ MAIL_FROM: 'hello@example.com' }).mailFrom).toEqual({ name: null, address: 'hello@example.com' });
    expect(loadConfig({ MAIL_FROM: '"Northlight, Lisbon" <hello@example.com>' }).mailFrom).toEqual({
      name: 'Northlight, Lisbon',
      address: 'hello@example.com',
    });
    expect(loadConfig({ STUDIO_TIMEZONE: 'america/new_york' }).studioTimeZone).toBe('America/New_York');
    expect(loadConfig({ STUDIO_TIMEZONE: 'UTC' }).studioTimeZone).toBe('UTC');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/test',
      SMTP_URL: 'smtps://user:pass@mail.example.com:465',
      INQUIRY_TO: 'studio@example.com',
      MAIL_FROM: 'Northlight <hello@example.com>',
      STUDIO_TIMEZONE: 'Europe/London',
      WEBHOOK_URL: 'https://hooks.example/inquiry',
      WEBHOOK_SECRET: 'whsec_c2VjcmV0IG9mIGF0IGxlYXN0IHR3ZW50eS1mb3VyIGJ5dGVz',
      TRUSTED_ISSUERS: '{"https://idp.example":"https://idp.example/jwks.json"}',
      RATE_LIMIT_INQUIRIES: '100/h',
      TRUST_PROXY: '2',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      LOG_LEVEL: 'debug',
      DELIVERY_LEASE_SECONDS: '30',
      SERVICE_MAIL_LIMIT: '50',
    });
    expect(config).toMatchObject({
      database: { kind: 'postgres', url: 'postgres://u:p@127.0.0.1:5432/test' },
      smtp: { url: 'smtps://user:pass@mail.example.com:465', inquiryTo: 'studio@example.com' },
      mailFrom: { name: 'Northlight', address: 'hello@example.com' },
      studioTimeZone: 'Europe/London',
      webhook: { url: 'https://hooks.example/inquiry', secret: 'whsec_c2VjcmV0IG9mIGF0IGxlYXN0IHR3ZW50eS1mb3VyIGJ5dGVz' },
      trustedIssuers: { 'https://idp.example': 'https://idp.example/jwks.json' },
      rateLimitInquiries: { max: 100, windowMs: 3_600_000 },
      trustProxy: 2,
      corsOrigins: ['https://a.example', 'https://b.example'],
      logLevel: 'debug',
      deliveryLeaseMs: 30_000,
      serviceMailLimit: 50,
    });
    expect(loadConfig({ DELIVERY_LEASE_SECONDS: '5' }).deliveryLeaseMs).toBe(5_000);
    expect(loadConfig({ DELIVERY_LEASE_SECONDS: '3600' }).deliveryLeaseMs).toBe(3_600_000);
    expect(loadConfig({ SERVICE_MAIL_LIMIT: '1' }).serviceMailLimit).toBe(1);
    expect(loadConfig({ SERVICE_MAIL_LIMIT: '10000' }).serviceMailLimit).toBe(10_000);
    expect(loadConfig({ RATE_LIMIT_INQUIRIES: 'off' }).rateLimitInquiries).toBeNull();
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.0.0.2' }).trustProxy).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(loadConfig({ TRUST_PROXY: 'loopback,10.0.0.0/8,::1' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', '::1']);
    expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/studio/inbox.db' }).database).toEqual({
      kind: 'sqlite',
      path: '/var/lib/studio/inbox.db',
    });
  });

  it('stops start-up on a bad SERVICE_MAIL_LIMIT with one line saying what it takes', () => {
    expect(() => loadConfig({ SERVICE_MAIL_LIMIT: 'lots' })).toThrow(
      new ConfigError('SERVICE_MAIL_LIMIT', '"lots" is not a whole number of codes per hour from 1 to 10000'),
    );
  });

  it('filters spam by default at the engine threshold; SPAM_FILTER=off turns it off, SPAM_THRESHOLD tunes it', () => {
    expect(loadConfig({}).spamFilter).toEqual({ threshold: DEFAULT_SPAM_THRESHOLD });
    expect(loadConfig({ SPAM_FILTER: 'on', SPAM_THRESHOLD: '5.5' }).spamFilter).toEqual({ threshold: 5.5 });
    expect(loadConfig({ SPAM_THRESHOLD: '100' }).spamFilter).toEqual({ threshold: 100 });
    expect(loadConfig({ SPAM_FILTER: 'off' }).spamFilter).toBeNull();
  });

  it('stops start-up on a bad SPAM_FILTER or SPAM_THRESHOLD with one line saying what it takes', () => {
    expect(() => loadConfig({ SPAM_FILTER: 'yes' })).toThrow(new ConfigError('SPAM_FILTER', '"yes" is neither on nor off'));
    for (const bad of ['0', '-1', 'high', '1e3', '100.5', '4,5']) {
      expect(() => loadConfig({ SPAM_THRESHOLD: bad })).toThrow(
        new ConfigError('SPAM_THRESHOLD', `"${bad}" is not a score above 0 and at most 100 (such as 4 or 5.5)`),
      );
    }
  });

  it('sends the quarantine digest daily at 08:00 UTC by default; SPAM_DIGEST_HOUR moves it, SPAM_DIGEST=off stops it', () => {
    expect(loadConfig({}).spamDigest).toEqual({ hourUtc: 8 });
    expect(loadConfig({ SPAM_DIGEST: 'daily', SPAM_DIGEST_HOUR: '0' }).spamDigest).toEqual({ hourUtc: 0 });
    expect(loadConfig({ SPAM_DIGEST_HOUR: '23' }).spamDigest).toEqual({ hourUtc: 23 });
    expect(loadConfig({ SPAM_DIGEST: 'off' }).spamDigest).toBeNull();
    // An hour with the digest off does nothing: said at start-up.
    expect(
      loadConfig({
        WEBHOOK_URL: 'https://hooks.example/x',
        SPAM_DIGEST: 'off',
        SPAM_DIGEST_HOUR: '7',
        SIGNING_KEY_SECRET: 'a signing key secret, long enough',
      }).warnings,
    ).toEqual([
      'WEBHOOK_SECRET is not set: webhook requests are sent unsigned',
      'SPAM_DIGEST_HOUR is set but SPAM_DIGEST is off: no digest is sent on a schedule',
    ]);
  });

  it('stops start-up on a bad SPAM_DIGEST or SPAM_DIGEST_HOUR with one line saying what it takes', () => {
    for (const bad of ['weekly', 'on', 'Daily']) {
      expect(() => loadConfig({ SPAM_DIGEST: bad })).toThrow(new ConfigError('SPAM_DIGEST', `"${bad}" is neither daily nor off`));
    }
    for (const bad of ['24', '-1', '8am', '08:00', '7.5', '100']) {
      expect(() => loadConfig({ SPAM_DIGEST_HOUR: bad })).toThrow(
        new ConfigError('SPAM_DIGEST_HOUR', `"${bad}" is not an hour of the day from 0 to 23 (UTC)`),
      );
    }
  });

  it('takes HOST as an IP address or a host name', () => {
    for (const host of ['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'studio-1.internal', 'Studio.Example.']) {
      expect(loadConfig({ HOST: host }).host).toBe(host);
    }
  });

  it('keeps a path in PUBLIC_URL', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://studio.example/inquiry/' }).publicUrl).toBe('https://studio.example/inquiry');
    expect(loadConfig({ PUBLIC_URL: 'https://studio.example/studio/inquiry-v1.2_~x' }).publicUrl).toBe(
      'https://studio.example/studio/inquiry-v1.2_~x',
    );
  });

  it.each([
    [{ HOST: '999.1.1.1' }, 'HOST'],
    [{ HOST: '10.0.0' }, 'HOST'],
    [{ HOST: 'not a host' }, 'HOST'],
    [{ HOST: 'http://localhost' }, 'HOST'],
    [{ HOST: '[::1]' }, 'HOST'],
    [{ HOST: '-studio.example' }, 'HOST'],
    [{ HOST: `${'a'.repeat(64)}.example` }, 'HOST'],
    [{ PUBLIC_URL: 'https://x.example/?a=1#f' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/?' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/#top' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://user:secret@x.example' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/a:b' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/in*' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/a//b' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://x.example/%C3%A9' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'mailto:studio@x.example' }, 'PUBLIC_URL'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PUBLIC_URL: 'localhost:3000' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://studio.example' }, 'PUBLIC_URL'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com' }, 'INQUIRY_TO'],
    [{ SMTP_URL: 'not a url', INQUIRY_TO: 'a@b.c' }, 'SMTP_URL'],
    [{ SMTP_URL: 'http://mail.example.com', INQUIRY_TO: 'a@b.c' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com', INQUIRY_TO: 'studio' }, 'INQUIRY_TO'],
    [{ MAIL_FROM: 'Studio' }, 'MAIL_FROM'],
    [{ WEBHOOK_URL: 'hooks.example' }, 'WEBHOOK_URL'],
    [{ WEBHOOK_URL: 'https://hook:secret@hooks.example/inquiry' }, 'WEBHOOK_URL'],
    [{ WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: 'secret' }, 'WEBHOOK_SECRET'],
    // Too short for Standard Webhooks (1 and 23 bytes), and unpadded base64 the reference verifier cannot load.
    [{ WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: 'whsec_QQ==' }, 'WEBHOOK_SECRET'],
    [{ WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: `whsec_${Buffer.alloc(23, 7).toString('base64')}` }, 'WEBHOOK_SECRET'],
    [
      { WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 7).toString('base64').replace(/=+$/, '')}abc` },
      'WEBHOOK_SECRET',
    ],
    [{ WEBHOOK_URL: 'https://hooks.example', WEBHOOK_SECRET: 'whsec_abc' }, 'WEBHOOK_SECRET'],
    [{ STUDIO_PROFILE: '/nonexistent/profile.json' }, 'STUDIO_PROFILE'],
    [{ TRUSTED_ISSUERS: 'https://idp.example' }, 'TRUSTED_ISSUERS'],
    [{ TRUSTED_ISSUERS: '{"https://idp.example": 5}' }, 'TRUSTED_ISSUERS'],
    [{ RATE_LIMIT_INQUIRIES: 'lots' }, 'RATE_LIMIT_INQUIRIES'],
    [{ RATE_LIMIT_INQUIRIES: '0/m' }, 'RATE_LIMIT_INQUIRIES'],
    [{ CORS_ORIGINS: 'https://a.example/path' }, 'CORS_ORIGINS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/99' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0.0.0.0/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8/8' }, 'TRUST_PROXY'],
    [{ PORT: '0' }, 'PORT'],
    [{ REDIS_URL: 'redis:foo' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://' }, 'REDIS_URL'],
    [{ SMTP_URL: 'smtp://', INQUIRY_TO: 'studio@example.com' }, 'SMTP_URL'],
    [{ METRICS_TOKEN: 'pässwörd-pässwörd-1234' }, 'METRICS_TOKEN'],
    [{ METRICS_TOKEN: 'a token with spaces in it' }, 'METRICS_TOKEN'],
    [{ DELIVERY_LEASE_SECONDS: 'two minutes' }, 'DELIVERY_LEASE_SECONDS'],
    [{ DELIVERY_LEASE_SECONDS: '4' }, 'DELIVERY_LEASE_SECONDS'],
    [{ DELIVERY_LEASE_SECONDS: '3601' }, 'DELIVERY_LEASE_SECONDS'],
    [{ DELIVERY_LEASE_SECONDS: '1.5' }, 'DELIVERY_LEASE_SECONDS'],
    [{ SERVICE_MAIL_LIMIT: 'lots' }, 'SERVICE_MAIL_LIMIT'],
    [{ SERVICE_MAIL_LIMIT: '0' }, 'SERVICE_MAIL_LIMIT'],
    [{ SERVICE_MAIL_LIMIT: '-5' }, 'SERVICE_MAIL_LIMIT'],
    [{ SERVICE_MAIL_LIMIT: '12.5' }, 'SERVICE_MAIL_LIMIT'],
    [{ SERVICE_MAIL_LIMIT: '200/h' }, 'SERVICE_MAIL_LIMIT'],
    [{ SERVICE_MAIL_LIMIT: '10001' }, 'SERVICE_MAIL_LIMIT'],
    // A value pasted with a line break in it: the message stays one line.
    [{ SMTP_URL: 'smtp://mail.example.com', INQUIRY_TO: 'studio@example.com\nBcc: x@evil.example' }, 'INQUIRY_TO'],
    [{ MAIL_FROM: 'Studio\r\n<no-reply>' }, 'MAIL_FROM'],
    [{ MAIL_FROM: 'Studio\r\nBcc: x <no-reply@example.com>' }, 'MAIL_FROM'],
    [{ STUDIO_TIMEZONE: 'Mars/Olympus_Mons' }, 'STUDIO_TIMEZONE'],
    [{ STUDIO_TIMEZONE: '+01:00' }, 'STUDIO_TIMEZONE'],
    [{ TRUST_PROXY: '10.0.0.1,loop\u2028back' }, 'TRUST_PROXY'],
  ])('rejects %o naming %s', (env, variable) => {
    let caught: unknown;
    try {
      loadConfig(env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(variable);
    expect((caught as ConfigError).message.startsWith(`${variable}: `)).toBe(true);
    expect((caught as ConfigError).message).not.toContain('\n');
  });

  it('names the variable in one line for any value it refuses, whatever characters the value holds', () => {
    const variables = ['PORT', 'HOST', 'PUBLIC_URL', 'DATABASE_URL', 'INQUIRY_TO', 'MAIL_FROM', 'WEBHOOK_URL', 'WEBHOOK_SECRET'];
    const more = ['STUDIO_PROFILE', 'TRUSTED_ISSUERS', 'RATE_LIMIT_INQUIRIES', 'TRUST_PROXY', 'CORS_ORIGINS', 'LOG_LEVEL'];
    const names = [
      ...variables,
      ...more,
      'REDIS_URL',
      'SMTP_URL',
      'METRICS_TOKEN',
      'DELIVERY_LEASE_SECONDS',
      'SERVICE_MAIL_LIMIT',
      'STUDIO_TIMEZONE',
    ];
    const piece = fc.oneof(fc.string(), fc.constantFrom('\n', '\r\n', '\u2028', '\u0085', '\u001b[2J', '"', '{"a\nb":1}', 'smtp://x'));
    const value = fc.array(piece, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.constantFrom(...names), value, (variable, text) => {
        // SMTP_URL needs INQUIRY_TO (and the other way round) to get as far as the value.
        const env = { SMTP_URL: 'smtp://mail.example.com', INQUIRY_TO: 'studio@example.com', [variable]: text };
        try {
          loadConfig(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          expect((error as ConfigError).variable).toBe(variable);
          expect((error as ConfigError).message.startsWith(`${variable}: `)).toBe(true);
          expect((error as ConfigError).message).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
