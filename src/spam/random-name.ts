// Whether a name looks like a random string ("xkqzvbnmrt", "GwXkzqpTrv"). Only runs of plain
// ASCII letters are judged: a name in another script, with an accent, or short never counts.

const MIN_LENGTH = 6;
/** Six ASCII letters in a row: a name without them has no word to judge. */
const LONG_RUN = /[A-Za-z]{6}/;
const VOWELS = /[aeiouy]/g;

/** Consonant pairs common in names written in Latin letters, transliterations included. */
const COMMON_PAIRS = new Set(
  (
    'bb bd bl br bs bk cc ch ck cl cr cs ct cz db dd dh dj dl dm dn dr ds dv dw dz ff fl fr fs ft gd gg gh gl gm gn gr gs gw ' +
    'hd hk hl hm hn hr hs ht hv hw jc jk jn jt kh kk kl kn kr ks kt kv kw lb lc ld lf lg lh lj lk ll lm ln lp lq lr ls lt lv ' +
    'lw lz mb mh mk ml mm mn mp ms mt nc nd nf ng nh nj nk nl nn ns nt nv nz pf ph pl pp pr ps pt rb rc rd rf rg rh rj rk rl ' +
    'rm rn rp rr rs rt rv rw rz sb sc sf sh sk sl sm sn sp sr ss st sv sw sz tc tg th tj tk tl tr ts tt tw tz vl vn vr vs ' +
    'wl wn wr ws wk xh zb zc zd zh zk zl zm zn zr zv zw zz'
  ).split(' '),
);

const isVowel = (letter: string): boolean => 'aeiouy'.includes(letter);

function rarePairs(word: string): number {
  let count = 0;
  for (let index = 0; index + 1 < word.length; index += 1) {
    const first = word.charAt(index);
    const second = word.charAt(index + 1);
    if (!isVowel(first) && !isVowel(second) && !COMMON_PAIRS.has(first + second)) count += 1;
  }
  return count;
}

/** Three unpronounceable pairs, or two with capitals strewn inside or almost no vowels. */
function looksRandomWord(word: string): boolean {
  const lower = word.toLowerCase();
  const rare = rarePairs(lower);
  if (rare !== 2) return rare > 2;
  const vowelShare = (lower.match(VOWELS)?.length ?? 0) / lower.length;
  const innerCapitals = word.match(/[a-z][A-Z]/g)?.length ?? 0;
  return innerCapitals >= 2 || vowelShare < 0.15;
}

/** True when some word of the text is a random-looking run of at least six ASCII letters. */
export function looksRandom(name: string): boolean {
  if (!LONG_RUN.test(name)) return false;
  const words = name.normalize('NFC').split(/[\s\-'’.,_]+/u);
  return words.some((word) => word.length >= MIN_LENGTH && /^[A-Za-z]+$/.test(word) && looksRandomWord(word));
}
