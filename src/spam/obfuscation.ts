// Text written to slip past filters: look-alike letters from another script inside a Latin word
// ("Неllо", Cyrillic Н and е), and words spelt out letter by letter ("b-a-c-k-l-i-n-k-s", "S.E.O").

/** A word's letters: Latin ones beside Cyrillic or Greek ones make a mixed-script word. */
const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOK_ALIKE_SCRIPTS = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/** The words mixing Latin letters with Cyrillic or Greek ones. */
export function mixedScriptWords(text: string): string[] {
  if (!LOOK_ALIKE_SCRIPTS.test(text)) return [];
  return [...text.matchAll(WORD)].map(([word]) => word).filter((word) => LATIN.test(word) && LOOK_ALIKE_SCRIPTS.test(word));
}

/** Three or more single Latin letters, each separated by the same dot, hyphen, underscore or space. */
const SPELT_OUT = /(?<![\p{L}\p{N}])[a-z](?:([.\-_ ])[a-z])(?:\1[a-z])+(?![\p{L}\p{N}])\.?/giu;

export interface SpeltOut {
  /** The text with each spelt-out word joined ("S.E.O" -> "SEO"): what the phrase list reads. */
  readonly text: string;
  /** The spelt-out words of at least five letters: short ones ("U.S.A.") are common abbreviations. */
  readonly long: readonly string[];
}

/** A spelt-out run, ASCII-only (ſ and K fold to s, k) and checked at its end alone: most texts have
 * none ("need a new" ends inside a word), and this finds that faster than SPELT_OUT. */
const MAY_BE_SPELT_OUT = /[a-z\u017f\u212a]([.\-_ ])[a-z\u017f\u212a](?:\1[a-z\u017f\u212a])+(?![a-z0-9])/i;

const NONE: readonly string[] = Object.freeze([]);

/** The last few texts read: several rules read the same fields of one inquiry. */
const recent = new Map<string, SpeltOut>();

export function joinSpeltOut(text: string): SpeltOut {
  if (!MAY_BE_SPELT_OUT.test(text)) return { text, long: NONE };
  const known = recent.get(text);
  if (known !== undefined) return known;
  const long: string[] = [];
  const joined = text.replace(SPELT_OUT, (run) => {
    const word = run.replace(/[^a-z]/giu, '');
    if (word.length >= 5) long.push(word);
    return word;
  });
  const result = Object.freeze({ text: joined, long: Object.freeze(long) });
  if (recent.size >= 8) recent.clear();
  recent.set(text, result);
  return result;
}
