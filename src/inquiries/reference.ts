// Inquiry references such as INQ-7K2M9Q: short enough to read out on the phone, unambiguous in any
// font (Crockford's base 32 has no I, L, O or U), about a billion possibilities.
import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 6;

export const REFERENCE_PATTERN = /^INQ-[0-9A-HJKMNP-TV-Z]{6}$/;

export function newReference(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `INQ-${code}`;
}

/** Accepts what a person might type: lower case, no prefix, and the look-alikes O→0, I/L→1. */
export function normaliseReference(input: string): string {
  const code = input
    .trim()
    .toUpperCase()
    .replace(/^INQ-?/, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  return `INQ-${code}`;
}
