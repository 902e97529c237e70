// `digest --send`: takes the quarantine digest now and queues it (docs/spam.md). As with `release`,
// the CLI sends nothing itself: the running server's worker delivers what it queued.
import type { Config } from '../config.js';
import { digestRoute, queueDigest } from '../spam/digest.js';
import type { Store } from '../storage/ports.js';
import { UsageError, type Values, type Work } from './commands.js';

export function digest(values: Values, positionals: readonly string[]): Work {
  if (positionals.length > 0) throw new UsageError(`digest takes no argument, got: ${positionals.join(' ')}`);
  if (values.send !== true) throw new UsageError('digest needs --send: it queues the digest of the quarantine now');
  return (store, config) => sendDigest(store, config);
}

/** Queues the digest of what went to the quarantine since the last one; prints what it queued, if anything. */
export async function sendDigest(store: Store, config: Pick<Config, 'smtp' | 'webhook'>, now = new Date()): Promise<number> {
  const route = digestRoute({ inquiryTo: config.smtp?.inquiryTo ?? null, webhook: config.webhook !== null });
  if (route === null) {
    process.stderr.write(
      'studio-inquiry: no delivery channel is configured (SMTP_URL and INQUIRY_TO, or WEBHOOK_URL): the digest has nowhere to go\n',
    );
    return 1;
  }
  const outcome = await queueDigest(store, route, { period: null, now });
  if (outcome.kind !== 'queued') {
    process.stdout.write('Nothing went to the quarantine since the last digest: nothing queued.\n');
    return 0;
  }
  const where = route.channel === 'email' ? `by email to ${route.to}` : 'to the webhook';
  const count = outcome.total === 1 ? '1 inquiry' : `${outcome.total} inquiries`;
  const unlisted = outcome.total - outcome.listed.length;
  process.stdout.write(
    `Queued the quarantine digest ${where} at ${now.toISOString()}: ${count}${unlisted > 0 ? ` (${unlisted} counted, not listed)` : ''}; a running server sends it.\n` +
      outcome.listed.map((reference) => `  ${reference}\n`).join(''),
  );
  return 0;
}
