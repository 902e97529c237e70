// The inquiry service's write on each backend, where a random reference turns out to be taken:
// known taken when it is checked, or taken between the check and the insert (by another instance).
import { describe, expect, it } from 'vitest';
import { createInquiryService } from '../../src/inquiries/service.js';
import type { Store } from '../../src/storage/ports.js';
import { validInquiry } from '../helpers/app.js';
import { BACKENDS, storePerTest } from '../helpers/databases.js';

describe.each(BACKENDS)('on $name, an inquiry whose random reference is taken', ({ fresh }) => {
  const stores = storePerTest(fresh);
  const open = async (): Promise<Store> => (await stores.open()).store;

  /** Draws the given references in order, then fails the test. */
  function draws(...references: string[]): () => string {
    return () => references.shift() ?? expect.fail('drew more references than expected');
  }

  /** The deliveries of each reference, by channel. */
  async function deliveriesOf(opened: Store, ...references: string[]) {
    const rows = await opened.outbox.forReferences(references);
    return Object.fromEntries(references.map((reference) => [reference, rows.filter((row) => row.reference === reference).length]));
  }

  it('gets another one when the reference is known to be taken, and only its own deliveries', async () => {
    const opened = await open();
    const first = createInquiryService({ store: opened, channels: ['email'], drawReference: draws('INQ-TAKEN1', 'INQ-SPARE0') });
    await first.submit(validInquiry({ email: 'first@example.com' }));
    const second = createInquiryService({ store: opened, channels: ['email'], drawReference: draws('INQ-TAKEN1', 'INQ-FRESH1') }); // two a submission, checked
    const result = await second.submit(validInquiry({ email: 'second@example.com' }));
    expect(result).toMatchObject({ reference: 'INQ-FRESH1', outcome: 'created' });
    expect((await opened.inquiries.findByReference('INQ-FRESH1'))?.email).toBe('second@example.com');
    expect((await opened.inquiries.findByReference('INQ-TAKEN1'))?.email).toBe('first@example.com');
    expect(await deliveriesOf(opened, 'INQ-TAKEN1', 'INQ-FRESH1')).toEqual({ 'INQ-TAKEN1': 1, 'INQ-FRESH1': 1 });
  });

  it('rolls the batch back when the reference is taken after the check, and stores each submission alone', async () => {
    const opened = await open();
    // Stored when no channel was configured: no delivery of its own that a constraint would see
    // clash with one written for it by mistake.
    await createInquiryService({ store: opened, channels: [], drawReference: draws('INQ-RACE01', 'INQ-SPARE0') }).submit(
      validInquiry({ email: 'earlier@example.com' }),
    );
    // As if another instance had inserted INQ-RACE01 between this batch's check and its insert.
    let transactions = 0;
    const racing: Store = {
      ...opened,
      intake: { ...opened.intake, lookup: async (query, tx) => ({ ...(await opened.intake.lookup(query, tx)), taken: new Set() }) },
      transaction: (work, options) => {
        transactions++;
        return opened.transaction(work, options);
      },
    };
    const service = createInquiryService({
      store: racing,
      channels: ['email'],
      // The batch of two draws four; each submission retried alone draws two.
      drawReference: draws('INQ-RACE01', 'INQ-OTHER1', 'INQ-SPARE1', 'INQ-SPARE2', 'INQ-ALONE1', 'INQ-SPARE3', 'INQ-ALONE2', 'INQ-SPARE4'),
    });
    const results = await Promise.all([
      service.submit(validInquiry({ email: 'one@example.com' })),
      service.submit(validInquiry({ email: 'two@example.com' })),
    ]);
    expect(transactions).toBe(3); // the batch, rolled back; then each alone
    expect(results.map((result) => result.reference)).toEqual(['INQ-ALONE1', 'INQ-ALONE2']);
    expect((await opened.inquiries.findByReference('INQ-ALONE1'))?.email).toBe('one@example.com');
    expect((await opened.inquiries.findByReference('INQ-ALONE2'))?.email).toBe('two@example.com');
    expect((await opened.inquiries.findByReference('INQ-RACE01'))?.email).toBe('earlier@example.com');
    expect(await opened.inquiries.findByReference('INQ-OTHER1')).toBeUndefined();
    // Nothing of the rolled-back batch is left: no delivery was attached to the earlier inquiry.
    expect(await deliveriesOf(opened, 'INQ-RACE01', 'INQ-OTHER1', 'INQ-ALONE1', 'INQ-ALONE2')).toEqual({
      'INQ-RACE01': 0,
      'INQ-OTHER1': 0,
      'INQ-ALONE1': 1,
      'INQ-ALONE2': 1,
    });
  });
});
