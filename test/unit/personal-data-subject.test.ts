// The address an erase or an export is about, as the studio types it: any text gives a person or a
// problem, never a throw; a person only for what the Inquiry schema takes as an address; one person
// whatever the case it is typed in; claim codes found by the mailbox it reaches.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inquirySchema } from '../../src/inquiries/schema.js';
import { dataSubject } from '../../src/personal-data/subject.js';
import { ajv } from '../../src/validation/ajv.js';

const isAddress = ajv.compile<string>(inquirySchema.properties.email);

describe('dataSubject', () => {
  it('gives a person or a problem for any text, a person only for an address the inquiries take', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.emailAddress()), (text) => {
        const subject = dataSubject(text);
        if ('problem' in subject) {
          expect(isAddress(text.trim())).toBe(false);
        } else {
          expect(isAddress(text.trim())).toBe(true);
          expect(subject.email).toBe(text.trim().toLowerCase());
        }
      }),
    );
  });

  it('names one person whatever the case, with spaces around ignored', () => {
    const address = fc.emailAddress().filter((email) => isAddress(email));
    fc.assert(
      fc.property(address, fc.array(fc.boolean(), { minLength: 254, maxLength: 254 }), (email, upper) => {
        const typed = ` ${[...email].map((char, i) => (upper[i] ? char.toUpperCase() : char.toLowerCase())).join('')}\t`;
        expect(dataSubject(typed)).toEqual(dataSubject(email.toLowerCase()));
      }),
    );
  });

  it('finds claim codes by the mailbox the address reaches', () => {
    expect(dataSubject('J.Doe+Studio@GoogleMail.com')).toEqual({ email: 'j.doe+studio@googlemail.com', recipient: 'jdoe@gmail.com' });
    expect(dataSubject('Owner@Example.com')).toEqual({ email: 'owner@example.com', recipient: 'owner@example.com' });
  });

  it('says what is wrong in words', () => {
    expect(dataSubject(' ')).toEqual({ problem: 'missing the email address' });
    expect(dataSubject('ada at example.com')).toEqual({ problem: '"ada at example.com" is not an email address such as ada@example.com' });
  });
});
