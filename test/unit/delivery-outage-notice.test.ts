// A failure said once per outage (src/delivery/outage-notice.ts), and its end said once.
import { describe, expect, it } from 'vitest';
import { outageNotice } from '../../src/delivery/outage-notice.js';

describe('outage notice', () => {
  it('reports the first failure of an outage only, and its end once', () => {
    const said: string[] = [];
    const notice = outageNotice(
      (error) => said.push(`down: ${(error as Error).message}`),
      () => said.push('back'),
    );
    notice.succeeded();
    notice.failed(new Error('first'));
    notice.failed(new Error('second'));
    notice.succeeded();
    notice.succeeded();
    notice.failed(new Error('third'));
    expect(said).toEqual(['down: first', 'back', 'down: third']);
  });

  it('says nothing of the end when not asked to', () => {
    const said: unknown[] = [];
    const notice = outageNotice((error) => said.push(error));
    notice.failed('away');
    notice.succeeded();
    expect(said).toEqual(['away']);
  });
});
