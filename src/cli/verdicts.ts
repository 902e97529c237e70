// Moving an inquiry between the inbox and the quarantine (docs/spam.md, docs/operations.md). The
// CLI sends nothing itself: a release queues the deliveries, and the running server's worker sends them.
import { normaliseReference, REFERENCE_PATTERN } from '../inquiries/reference.js';
import { moveInquiry as move } from '../inquiries/verdicts.js';
import type { InquiryVerdict, Store } from '../storage/ports.js';
import { iso } from './format.js';

/** The one reference a verdict command takes, normalised, or the problem with its arguments. */
export function verdictReference(positionals: readonly string[]): string | { problem: string } {
  if (positionals.length !== 1) return { problem: 'expected one inquiry reference, e.g. INQ-7K2M9Q' };
  const reference = normaliseReference(positionals[0] as string);
  if (!REFERENCE_PATTERN.test(reference)) return { problem: `"${positionals[0]}" is not an inquiry reference such as INQ-7K2M9Q` };
  return reference;
}

/**
 * Gives an inquiry the verdict; a release (to the inbox) queues a delivery per configured channel it
 * has none on. Prints what it did, and why not when it did nothing; resolves to the exit code.
 */
export async function moveInquiry(
  store: Store,
  reference: string,
  verdict: InquiryVerdict,
  channels: readonly string[],
  now = new Date(),
): Promise<number> {
  const outcome = await move(store, reference, verdict, channels, now);
  if (outcome.kind === 'missing') {
    process.stderr.write(`studio-inquiry: no inquiry ${reference}\n`);
    return 1;
  }
  if (outcome.kind === 'unchanged') {
    process.stdout.write(`${reference} is in the ${verdict === 'spam' ? 'quarantine' : 'inbox'} already: nothing changed.\n`);
    return 0;
  }
  const { inquiry } = outcome;
  const received = `received ${iso(inquiry.receivedAt)}`;
  if (verdict === 'spam') {
    process.stdout.write(
      `Moved ${reference} (${received}) to the quarantine at ${iso(now)}; deliveries already made stay made, pending ones are still sent.\n`,
    );
  } else {
    const queued = channels.length === 0 ? 'no delivery channel is configured' : `its deliveries (${channels.join(', ')}) are queued`;
    process.stdout.write(`Released ${reference} (${received}) to the inbox at ${iso(now)}: ${queued}; a running server sends them.\n`);
  }
  return 0;
}
