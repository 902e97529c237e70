// Prometheus metrics (prom-client): requests by route and status, inquiries accepted and by verdict,
// quarantines by reason, quarantine digests queued, rows deleted by retention, deliveries by channel
// and state (read from the outbox at scrape time: every instance reports the shared truth), delivery latency, process metrics.

import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { withTimeout } from './deadline.js';
import type { DeliveryStatus, InquiryJudgement, Outbox } from './storage/ports.js';

export type Metrics = ReturnType<typeof createMetrics>;

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'dead'];
/**
 * How long a scrape waits for the outbox's counts: well inside Prometheus's default scrape timeout
 * (10 s), so that while the database is away the rest (requests, process) is still reported.
 */
export const OUTBOX_COUNT_TIMEOUT_MS = 2_000;

export interface MetricsOptions {
  /** The configured channels: each reports every status, 0 included, from the first scrape on. */
  readonly channels: readonly string[];
  readonly logger?: Pick<Logger, 'warn'>;
}

export function createMetrics(outbox: Pick<Outbox, 'countByChannelAndStatus'>, { channels, logger }: MetricsOptions) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'studio_inquiry_' });
  const requests = new Counter({
    name: 'studio_inquiry_http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const inquiries = new Counter({
    name: 'studio_inquiry_inquiries_accepted_total',
    help: 'Inquiries accepted, by outcome (created, duplicate, replayed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const verdicts = new Counter({
    name: 'studio_inquiry_inquiries_by_verdict_total',
    help: 'New inquiries stored, by verdict (inbox, spam; docs/spam.md).',
    labelNames: ['verdict'],
    registers: [registry],
  });
  const quarantines = new Counter({
    name: 'studio_inquiry_quarantines_by_reason_total',
    help: 'Inquiries quarantined, by each reason code that counted toward it (one inquiry counts under each of its codes).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const digests = new Counter({
    name: 'studio_inquiry_quarantine_digests_total',
    help: 'Quarantine digests this instance queued on its schedule, by channel (email, webhook; docs/spam.md).',
    labelNames: ['channel'],
    registers: [registry],
  });
  /** Counts a new inquiry's verdict and, for spam, each of its reason codes once. */
  const judged = ({ verdict, reasons }: InquiryJudgement): void => {
    verdicts.inc({ verdict });
    if (verdict === 'spam') for (const reason of new Set(reasons.map(({ code }) => code))) quarantines.inc({ reason });
  };
  type Counts = Awaited<ReturnType<typeof outbox.countByChannelAndStatus>>;
  /** One read of the outbox per scrape, shared by the two gauges below (collected at once); null when it failed. */
  let reading: Promise<Counts | null> | undefined;
  const readOutbox = (): Promise<Counts | null> => {
    reading ??= withTimeout(outbox.countByChannelAndStatus(), OUTBOX_COUNT_TIMEOUT_MS)
      .catch((error: unknown) => {
        // The other metrics are what an operator needs most while the database is away.
        logger?.warn({ err: error }, 'could not count the deliveries for /metrics');
        return null;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  new Gauge({
    name: 'studio_inquiry_outbox_readable',
    help: 'Whether this scrape read the deliveries from the database (1) or could not (0: studio_inquiry_deliveries is left out).',
    registers: [registry],
    async collect() {
      this.set((await readOutbox()) === null ? 0 : 1);
    },
  });
  new Gauge({
    name: 'studio_inquiry_deliveries',
    help:
      'Deliveries in the outbox, by channel and status (pending, succeeded, failed, dead). Read from the shared database: ' +
      'every instance reports the same figures, so aggregate over instances with max(), not sum().',
    labelNames: ['channel', 'status'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await readOutbox();
      if (counts === null) return;
      // A status with no delivery reads 0 rather than disappearing, so alerts on it keep working.
      for (const channel of new Set([...channels, ...counts.map((row) => row.channel)])) {
        for (const status of DELIVERY_STATUSES) this.set({ channel, status }, 0);
      }
      for (const { channel, status, count } of counts) this.set({ channel, status }, count);
    },
  });
  const deliveryLatency = new Histogram({
    name: 'studio_inquiry_delivery_latency_seconds',
    help: 'Time from queueing a delivery to its success, by channel.',
    labelNames: ['channel'],
    buckets: [0.1, 0.5, 1, 5, 30, 60, 300, 3600, 24 * 3600],
    registers: [registry],
  });
  const deletedByRetention = new Counter({
    name: 'studio_inquiry_retention_deleted_total',
    help: 'Rows the hourly maintenance deleted, by kind (inquiries, deliveries, attempts, idempotencyKeys, messages, clients, claims, …).',
    labelNames: ['kind'],
    registers: [registry],
  });
  /** Counts what one maintenance run deleted. */
  const deleted = (counts: Readonly<Record<string, number | undefined>>): void => {
    for (const [kind, count] of Object.entries(counts)) if (count) deletedByRetention.inc({ kind }, count);
  };
  return { registry, requests, inquiries, judged, digests, deliveryLatency, deleted };
}
