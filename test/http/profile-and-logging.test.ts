// The studio profile is replaceable through STUDIO_PROFILE, and inquiry text stays out of the logs.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { exampleStudioProfile, loadStudioProfile } from '../../src/studio/profile.js';
import { referenceOf, startTestApp, type TestApp, tempDir, validInquiry } from '../helpers/app.js';

let testApp: TestApp | undefined;

/** `dir`, removed once the test has finished. */
function removedAfter(dir: string): string {
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
afterEach(async () => {
  await testApp?.close();
  testApp = undefined;
});

describe('studio profile', () => {
  it('is the built-in example with 4-6 services and a 24-hour response time', () => {
    expect(exampleStudioProfile.services.length).toBeGreaterThanOrEqual(4);
    expect(exampleStudioProfile.services.length).toBeLessThanOrEqual(6);
    expect(exampleStudioProfile.responseTime).toBe('24 hours');
  });

  it('is replaced by the file STUDIO_PROFILE names, and the confirmation says so', async () => {
    const path = join(removedAfter(tempDir()), 'profile.json');
    writeFileSync(path, JSON.stringify({ ...exampleStudioProfile, name: 'Harbour & Pine', responseTime: '2 business days' }));
    testApp = await startTestApp({ env: { STUDIO_PROFILE: path }, startWorker: false });
    const response = await testApp.app.inject({ method: 'POST', url: '/api/contact', payload: validInquiry() });
    expect(response.body).toContain('Harbour & Pine has received your inquiry');
    expect(response.body).toContain('within 2 business days');
  });

  it('is refused with a message naming what is wrong', () => {
    const path = join(removedAfter(tempDir()), 'profile.json');
    writeFileSync(path, JSON.stringify({ ...exampleStudioProfile, services: [] }));
    expect(() => loadStudioProfile(path)).toThrow(/services/);
    writeFileSync(path, '{ not json');
    expect(() => loadStudioProfile(path)).toThrow(/JSON/);
  });
});

describe('logs', () => {
  it('never contain the inquiry text at info level, even when delivery fails', async () => {
    const logLines: string[] = [];
    testApp = await startTestApp({
      env: { LOG_LEVEL: 'info', WEBHOOK_URL: 'http://127.0.0.1:9/closed' },
      logLines,
      listen: true,
    });
    const secret = 'Zanzibar-7731';
    const response = await fetch(`${testApp.baseUrl}/api/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(validInquiry({ firstName: `First ${secret}`, company: `Co ${secret}`, message: `Brief ${secret}` })),
    });
    const reference = referenceOf(await response.text());
    const deadline = Date.now() + 10_000;
    while (!logLines.some((line) => line.includes('will retry')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const text = logLines.join('');
    expect(text).toContain(reference); // the logs do say which inquiry
    expect(text).toContain('will retry');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('ada@example.com');
  });

  it('say at debug level why a request was refused, in a line of its own size whatever the body', async () => {
    const logLines: string[] = [];
    testApp = await startTestApp({ env: { LOG_LEVEL: 'debug' }, logLines });
    // 6,000 unknown keys: 6,000 validation errors, each of which carries the body and the schema.
    const payload = { ...validInquiry(), ...Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`k${i}`, 1])) };
    const response = await testApp.app.inject({ method: 'POST', url: '/api/contact', payload });
    expect(response.statusCode).toBe(400);
    const rejected = logLines.filter((line) => line.includes('request rejected'));
    expect(rejected).toHaveLength(1);
    expect(JSON.parse(rejected[0] ?? '{}')).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(rejected[0]?.length).toBeLessThan(1_000);
  });
});
