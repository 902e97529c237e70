// Prometheus metrics (prom-client): requests by route and status, inquiries accepted, deliveries by
// channel and state (read from the outbox at scrape time, so every instance reports the shared
// truth), delivery latency, and the process's own metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Outbox } from './storage/store.js';

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics(outbox: Pick<Outbox, 'countByChannelAndStatus'>) {
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
  new Gauge({
    name: 'studio_inquiry_deliveries',
    help: 'Deliveries in the outbox, by channel and status (pending, succeeded, failed, dead).',
    labelNames: ['channel', 'status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { channel, status, count } of await outbox.countByChannelAndStatus()) this.set({ channel, status }, count);
    },
  });
  const deliveryLatency = new Histogram({
    name: 'studio_inquiry_delivery_latency_seconds',
    help: 'Time from queueing a delivery to its success, by channel.',
    labelNames: ['channel'],
    buckets: [0.1, 0.5, 1, 5, 30, 60, 300, 3600, 24 * 3600],
    registers: [registry],
  });
  return { registry, requests, inquiries, deliveryLatency };
}
