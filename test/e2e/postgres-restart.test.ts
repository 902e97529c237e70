// PostgreSQL (a private cluster, leaving the shared server alone) stopped and started under a running
// service: health answers 503 while it is down, intake a clear 5xx, and the same process recovers by
// itself, delivering every inquiry it answered 200 to exactly once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_IN_TEXT, validInquiry } from '../helpers/app.js';
import { createPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { type ServiceProcess, startService } from '../helpers/process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

/** Short, so that a delivery whose outcome went unrecorded would be sent again within the test. */
const LEASE_SECONDS = 5;
/** How long the database stays down while inquiries keep coming. */
const OUTAGE_MS = 3_000;

let cluster: PgCluster;
let smtp: TestSmtpServer;
let service: ServiceProcess;

beforeAll(async () => {
  cluster = await createPgCluster();
  smtp = await startSmtpServer();
  service = await startService({
    DATABASE_URL: cluster.url,
    SMTP_URL: smtp.url,
    INQUIRY_TO: 'studio@example.com',
    DELIVERY_LEASE_SECONDS: String(LEASE_SECONDS),
  });
}, 30_000);
afterAll(async () => {
  if (service && service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill('SIGTERM');
    await service.exited;
  }
  await smtp?.stop();
  await cluster?.destroy();
}, 30_000);

type Phase = 'up' | 'stopping' | 'down' | 'starting' | 'recovered';

interface Answer {
  readonly phase: Phase;
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function health(): Promise<Response> {
  return fetch(`${service.baseUrl}/api/health`);
}

/** The service's last log lines, for a failure message (it logs every refused request). */
const tail = () => service.output().slice(-4_000);

async function sendStream(phase: () => Phase, lanes: number, label: string) {
  const answers: Answer[] = [];
  let sending = true;
  const lane = async (lane: number) => {
    for (let i = 0; sending; i++) {
      const sentIn = phase();
      try {
        const response = await fetch(`${service.baseUrl}/api/contact`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // Distinct messages: identical ones would fold into one inquiry.
          body: JSON.stringify(validInquiry({ message: `${label} lane ${lane} message ${i}` })),
        });
        const body = await response.text();
        answers.push({ phase: sentIn, status: response.status, contentType: response.headers.get('content-type') ?? '', body });
      } catch (error) {
        // No answer at all: the service died (checked by the test, with its output).
        answers.push({ phase: sentIn, status: 0, contentType: '', body: String(error) });
        return;
      }
      if (sentIn === 'down') await sleep(20); // refusals come back at once: no need to spin
    }
  };
  const running = Array.from({ length: lanes }, (_, index) => lane(index));
  return {
    answers,
    accepted: (during: Phase) => answers.filter((answer) => answer.phase === during && answer.status === 200).length,
    async stop() {
      sending = false;
      await Promise.all(running);
    },
  };
}

describe('PostgreSQL restarting during a run', () => {
  it.each(['fast', 'immediate'] as const)(
    'stopped (%s): health answers 503 meanwhile, the same process recovers and delivers every 200 exactly once',
    async (mode) => {
      let phase: Phase = 'up';
      const stream = await sendStream(() => phase, 4, `restart ${mode}`);
      while (stream.accepted('up') < 50) await sleep(10);

      phase = 'stopping';
      await cluster.stop(mode);
      phase = 'down';
      // Down: health says so, as problem+json, for as long as it lasts.
      const down = await health();
      expect(down.status).toBe(503);
      expect(down.headers.get('content-type')).toContain('application/problem+json');
      expect(await down.json()).toEqual({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: expect.any(String),
        error: 'store_unavailable',
      });
      await sleep(OUTAGE_MS);
      expect((await health()).status).toBe(503);

      phase = 'starting';
      await cluster.start();
      // Up again: the same process answers 200 on health by itself.
      const deadline = Date.now() + 15_000;
      while ((await health()).status !== 200) {
        if (Date.now() > deadline) throw new Error(`health did not recover:\n${tail()}`);
        await sleep(100);
      }
      phase = 'recovered';
      while (stream.accepted('recovered') < 50 && Date.now() < deadline) await sleep(10);
      await stream.stop();
      const { answers } = stream;
      expect(
        answers.filter((answer) => answer.status === 0),
        tail(),
      ).toEqual([]);
      expect(service.child.exitCode, tail()).toBeNull();
      // The broken connections are logged (at warn), not swallowed.
      expect(service.output()).toContain('a database connection broke');

      // Every answer is a 200 with a reference, or a 500 problem saying nothing was stored (the
      // client may retry), with no stack, SQL, path or driver error in it.
      for (const answer of answers.filter((answer) => answer.status !== 200)) {
        expect(answer.status).toBe(500);
        expect(answer.contentType).toContain('application/problem+json');
        expect(JSON.parse(answer.body)).toMatchObject({ status: 500, error: 'inquiry_not_stored', requestId: expect.any(String) });
        expect(answer.body).not.toMatch(/\bat |\.ts\b|\.js\b|ECONN|database system|SELECT|INSERT/);
      }
      // Sent while the database was down: refused, every one; sent after health came back: accepted.
      const duringOutage = answers.filter((answer) => answer.phase === 'down');
      expect(duringOutage.length).toBeGreaterThan(10);
      expect(duringOutage.filter((answer) => answer.status === 200)).toEqual([]);
      expect(stream.accepted('recovered')).toBeGreaterThanOrEqual(50);
      expect(answers.filter((answer) => answer.phase === 'recovered' && answer.status !== 200)).toEqual([]);

      // Every inquiry answered 200 (before, around and after the outage) is mailed exactly once,
      // and every delivery ends recorded as succeeded: an attempt whose outcome was lost to the
      // outage would be mailed again when its lease ran out.
      const references = answers.filter((answer) => answer.status === 200).map((answer) => REFERENCE_IN_TEXT.exec(answer.body)?.[0]);
      expect(new Set(references).size).toBe(references.length);
      expect(await unfinishedDeliveries(20_000)).toBe(0);
      await sleep(500); // time for a second copy to show up, if any
      const counts = new Map<string, number>();
      for (const mail of smtp.received) {
        const reference = String(mail.parsed.headers.get('x-inquiry-reference'));
        counts.set(reference, (counts.get(reference) ?? 0) + 1);
      }
      expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
      expect(references.filter((reference) => counts.get(String(reference)) !== 1)).toEqual([]);
      expect(service.child.exitCode, tail()).toBeNull();
    },
    50_000,
  );
});

/** Deliveries not yet succeeded, once all have or `timeoutMs` has passed. */
async function unfinishedDeliveries(timeoutMs: number): Promise<number> {
  const database = new pg.Client({ connectionString: cluster.url });
  await database.connect();
  try {
    const count = async () => Number((await database.query("SELECT count(*) AS n FROM deliveries WHERE status <> 'succeeded'")).rows[0].n);
    const deadline = Date.now() + timeoutMs;
    let unfinished = await count();
    while (unfinished > 0 && Date.now() < deadline) {
      await sleep(100);
      unfinished = await count();
    }
    return unfinished;
  } finally {
    await database.end();
  }
}
