// The webhook channel: POSTs each inquiry (and the quarantine digest) as JSON to WEBHOOK_URL, signed
// per Standard Webhooks (docs/delivery.md; standardwebhooks.com spec, "Signature scheme").
import { createHmac } from 'node:crypto';
import type { AgentIdentities, AgentIdentity } from '../auth/agent-identity.js';
import type { DeliveryRecord, InquiryRecord, Outgoing } from '../storage/ports.js';
import type { Channel, SendResult } from './channel.js';

export interface WebhookChannelOptions {
  readonly url: string;
  /** `whsec_<base64>`; without it requests go unsigned. */
  readonly secret: string | null;
  readonly timeoutMs?: number;
  /** Who the inquiry's agent is (its name, its person's verified email), for the payload's `agent`. */
  readonly identify?: AgentIdentities;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The event's body. Its `timestamp` is when the event happened (Standard Webhooks: "not necessarily
 * the same of when it was delivered"): the inquiry's receipt, so every attempt sends the same body.
 * When an attempt was made is `webhook-timestamp`.
 */
export function webhookPayload(inquiry: InquiryRecord, agent: AgentIdentity | null = null) {
  return {
    type: 'inquiry.received',
    timestamp: inquiry.receivedAt.toISOString(),
    data: {
      reference: inquiry.reference,
      firstName: inquiry.firstName,
      lastName: inquiry.lastName,
      email: inquiry.email,
      company: inquiry.company,
      message: inquiry.message,
      receivedAt: inquiry.receivedAt.toISOString(),
      client_id: inquiry.clientId,
      // The door it came through (page, api, mcp); null for an inquiry stored before doors were recorded.
      source: inquiry.source,
      // The agent that sent it, and the address its person proved (docs/delivery.md); null without one.
      agent: agent && { name: agent.name, verified_email: agent.verifiedEmail },
    },
  };
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the decoded secret. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** How much of a redirect's Location the error keeps. */
const LOCATION_SHOWN_MAX = 200;

/**
 * A 2xx ends the delivery; 4xx other than 408 and 429 is permanent; the rest is retried, no sooner than a
 * Retry-After (Standard Webhooks, "Retry schedule"). A redirect is not followed (the signed body would go
 * where the receiver says): its error names the target, so the operator sees what WEBHOOK_URL should be.
 */
export function classifyWebhookStatus(
  status: number,
  { retryAfter = null, location = null }: { retryAfter?: string | null; location?: string | null } = {},
  now = new Date(),
): SendResult {
  if (status >= 200 && status < 300) return { outcome: 'succeeded' };
  let error = `webhook answered HTTP ${status}`;
  if (status >= 300 && status < 400 && location) {
    const shown = location.length > LOCATION_SHOWN_MAX ? `${location.slice(0, LOCATION_SHOWN_MAX)}…` : location;
    error += `, a redirect to ${shown} (not followed: WEBHOOK_URL must be the address that answers)`;
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return { outcome: 'failed', error };
  const retryAfterMs = retryAfterDelayMs(retryAfter, now);
  return retryAfterMs === undefined ? { outcome: 'retry', error } : { outcome: 'retry', error, retryAfterMs };
}

/** RFC 9110 §10.2.3: Retry-After is delay-seconds or an HTTP-date; anything else is ignored. */
export function retryAfterDelayMs(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An IMF-fixdate or one of the obsolete forms (RFC 9110 §5.6.7): each names a weekday and "GMT".
  if (!/^[A-Za-z]{3}.* GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

export function createWebhookChannel(options: WebhookChannelOptions): Channel {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    name: 'webhook',
    async send(delivery: DeliveryRecord, payload: Outgoing): Promise<SendResult> {
      // A service message on this channel is an event already (the quarantine digest): its body is sent as queued.
      const body =
        payload.kind === 'inquiry'
          ? JSON.stringify(webhookPayload(payload.inquiry, (await options.identify?.(payload.inquiry.clientId)) ?? null))
          : payload.message.body;
      const sentAt = new Date();
      // One id per delivery, the same on every retry, so the receiver can drop repeats.
      const id = `msg_${delivery.id}`;
      const timestamp = Math.floor(sentAt.getTime() / 1000);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'studio-inquiry-webhook/1.0',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
      };
      if (options.secret) headers['webhook-signature'] = signWebhook(options.secret, id, timestamp, body);
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual', // a redirect is an answer to retry, not to follow with a signed body
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.body?.cancel();
        return classifyWebhookStatus(response.status, {
          retryAfter: response.headers.get('retry-after'),
          location: response.headers.get('location'),
        });
      } catch (error) {
        const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
        return { outcome: 'retry', error: `webhook request failed: ${reason}` };
      }
    },
  };
}
