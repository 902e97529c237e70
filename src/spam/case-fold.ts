// Letters a case-insensitive pattern (flags iu) takes for others than their lower case says: "ſ" for
// "s", "ς" for "σ", "İ" for none. Text without them is matched alike by lower-casing it, and a
// pattern of ASCII alike with or without the u flag (ſ and K are the only ones folding to ASCII).
export const ODD_CASE = /\u0345|[\u00b5\u017f\u0130\u03c2\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u1c80-\u1c88\u1e9b\u1fbe\u212a]/u;

/** An ASCII pattern's copy without the u flag: faster, and alike on text that ODD_CASE finds nothing in. */
export function withoutU(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags.replace('u', ''));
}

/** A code unit beyond ASCII: text without one is its own NFKC form, and read by ASCII patterns alike. */
export const NOT_ASCII = /[\u0080-\uffff]/;

/** NFKC, which folds look-alike letters ("𝐒𝐄𝐎", full-width "ｗｗｗ"); ASCII text is left as it is. */
export const nfkc = (text: string): string => (NOT_ASCII.test(text) ? text.normalize('NFKC') : text);
