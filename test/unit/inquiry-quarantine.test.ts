// Intake with the spam filter on each backend: a new inquiry judged spam is stored without
// deliveries (in a batch beside inbox ones), a repeat keeps the verdict, a claimed agent's content is
// not held against it, the same body from several addresses within an hour is counted, and each new
// inquiry is reported with its judgement once.
import { describe, expect, it } from 'vitest';
import { createInquiryService } from '../../src/inquiries/service.js';
import type { InquiryJudgement, Store } from '../../src/storage/ports.js';
import { validInquiry } from '../helpers/app.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';

const SEO_PITCH = validInquiry({
  email: 'mark@rankfast.example',
  message:
    'We offer affordable SEO services and guest post backlinks for your website: https://a.example https://b.example https://c.example https://d.example https://e.example',
});

describe.each(BACKENDS)('on $name, intake with the spam filter', ({ fresh }) => {
  const stores = storePerTest(fresh);

  it('stores spam beside inbox inquiries in one batch, queuing deliveries for the inbox ones only', async () => {
    const { store } = await stores.open();
    const judged: InquiryJudgement[] = [];
    const service = createInquiryService({
      store,
      channels: ['email', 'webhook'],
      spamFilter: { threshold: 4 },
      onJudged: (judgement) => judged.push(judgement),
    });
    const [inbox, spam, repeat, replay, replayAgain] = await Promise.all([
      service.submit(validInquiry()),
      service.submit(SEO_PITCH),
      service.submit(SEO_PITCH),
      service.submit(validInquiry({ email: 'keyed@example.com' }), { idempotencyKey: 'k-1' }),
      service.submit(validInquiry({ email: 'keyed@example.com' }), { idempotencyKey: 'k-1' }),
    ]);
    expect(repeat).toMatchObject({ reference: spam.reference, outcome: 'duplicate' });
    expect(replayAgain.reference).toBe(replay.reference);
    const judgements = await store.inquiries.judgements([inbox.reference, spam.reference]);
    expect(judgements.get(inbox.reference)?.verdict).toBe('inbox');
    expect(judgements.get(spam.reference)).toMatchObject({
      verdict: 'spam',
      reasons: expect.arrayContaining([expect.objectContaining({ code: 'too_many_links' })]),
    });
    expect((await store.outbox.forReference(inbox.reference)).map((delivery) => delivery.channel).sort()).toEqual(['email', 'webhook']);
    expect(await store.outbox.forReference(spam.reference)).toEqual([]);
    // Three new inquiries, each reported once: the repeat and the replay are not new.
    expect(judged.map((judgement) => judgement.verdict).sort()).toEqual(['inbox', 'inbox', 'spam']);
  });

  it('does not hold content against a claimed agent, and judges nothing with the filter off', async () => {
    const { store } = await stores.open();
    const on = createInquiryService({ store, channels: ['email'], spamFilter: { threshold: 4 } });
    const trusted = await on.submit(SEO_PITCH, { clientId: 'client-1', trustedAgent: true });
    const off = createInquiryService({ store, channels: ['email'] });
    const unfiltered = await off.submit(validInquiry({ ...SEO_PITCH, email: 'other@rankfast.example' }));
    const judgements = await store.inquiries.judgements([trusted.reference, unfiltered.reference]);
    expect(judgements.get(trusted.reference)).toMatchObject({
      verdict: 'inbox',
      score: 0,
      reasons: expect.arrayContaining([expect.objectContaining({ code: 'trusted_agent' })]),
    });
    expect(judgements.get(unfiltered.reference)).toEqual({ verdict: 'inbox', score: 0, reasons: [] });
    expect(await store.outbox.forReference(trusted.reference)).toHaveLength(1);
    expect(await store.outbox.forReference(unfiltered.reference)).toHaveLength(1);
  });

  const COPIED = 'Dear team, we would love to discuss a website redesign for our bakery chain next month.';
  const codesOf = async (store: Store, reference: string): Promise<InquiryJudgement | undefined> =>
    (await store.inquiries.judgements([reference])).get(reference);

  it('counts the other addresses that sent the same body within an hour, in earlier batches and the same one', async () => {
    const { store } = await stores.open();
    let clock = new Date('2026-03-01T10:00:00Z');
    const service = createInquiryService({ store, channels: ['email'], spamFilter: { threshold: 4 }, now: () => clock });
    const off = createInquiryService({ store, channels: ['email'], now: () => clock });
    // Sent with the filter off, it still counts once the filter is on.
    await off.submit(validInquiry({ email: 'ann@one.example', message: COPIED }));
    clock = new Date(clock.getTime() + 61 * 60_000); // Ann's is now older than an hour
    const ben = await service.submit(validInquiry({ email: 'ben@two.example', message: COPIED }));
    expect((await codesOf(store, ben.reference))?.reasons).toEqual([]);
    clock = new Date(clock.getTime() + 60_000);
    // Another case of Ben's address and other line breaks and capitals: the same sender, the same body.
    const benAgain = await service.submit(
      validInquiry({ email: 'BEN@two.example', message: COPIED.toUpperCase().replace(' WE ', '\n\nWE ') }),
    );
    expect(await codesOf(store, benAgain.reference)).toEqual({ verdict: 'inbox', score: 0, reasons: [] });
    const [cat, dan] = await Promise.all([
      service.submit(validInquiry({ email: 'cat@three.example', message: COPIED })),
      service.submit(validInquiry({ email: 'dan@four.example', message: `  ${COPIED}  ` })),
    ]);
    const judgements = [await codesOf(store, cat.reference), await codesOf(store, dan.reference)];
    // Cat's and Dan's in either order: one saw Ben alone (2.5 points), the other Ben and Cat or Dan (5).
    expect(judgements.map((judgement) => judgement?.score).sort()).toEqual([2.5, 5]);
    expect(judgements.map((judgement) => judgement?.verdict).sort()).toEqual(['inbox', 'spam']);
    expect(judgements.find((judgement) => judgement?.verdict === 'spam')?.reasons).toEqual([
      { code: 'repeated_message', detail: 'the same message from 2 other addresses within an hour' },
    ]);
    const spam = judgements[0]?.verdict === 'spam' ? cat : dan;
    expect(await store.outbox.forReference(spam.reference)).toEqual([]);
  });

  it('never counts a short body, however many addresses send it', async () => {
    const { store } = await stores.open();
    const service = createInquiryService({ store, channels: ['email'], spamFilter: { threshold: 4 } });
    const sent = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((name) =>
        service.submit(validInquiry({ email: `${name}@x.example`, message: 'Please call me back about the website.' })),
      ),
    );
    const judgements = await store.inquiries.judgements(sent.map((result) => result.reference));
    expect([...judgements.values()].map((judgement) => judgement.score)).toEqual([0, 0, 0, 0, 0]);
  });
});
