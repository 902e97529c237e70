// Every weight of the spam score and the threshold, in one place. An inquiry whose score reaches
// the threshold is spam. The rules, with an example each, are in docs/spam.md.

export const DEFAULT_SPAM_THRESHOLD = 4;

export const SPAM_WEIGHTS = Object.freeze({
  /** Per link beyond `freeLinks`, up to `maxPoints`: "see a.com b.com c.com d.com e.com" is 3 points. */
  tooManyLinks: { freeLinks: 3, perLink: 1.5, maxPoints: 6 },
  /** "Cheap SEO https://x.example" as a first name, "sales@x.example" as a company. */
  linkInName: 4,
  /** "bit.ly/3xYz", "tinyurl.com/abc": hides where a link goes. */
  urlShortener: 3,
  /** `<a href="...">` or `[url=...]`: written for forums and blogs, never for a contact form. */
  markupLink: 4,
  /** Per distinct phrase: strong ("guest post"), a seller's pitch ("affordable rates") or weak
   * ("your website"); weak ones add at most `weakMaxPoints`, however many a long brief uses. */
  spamPhrase: { strong: 2, pitch: 1.5, weak: 1, weakMaxPoints: 2 },
  /** An address at a throwaway mail domain (mailchecker's list). */
  disposableEmail: 2,
  /** Per name field (first, last, company) that looks like "xkqzvbnmrt" or "GwXkzqpTrv". */
  randomName: 2.5,
  /** Two or more words mixing Latin with look-alike Cyrillic or Greek letters ("Неllо"). */
  mixedScript: 4,
  /** Per word of five letters or more spelt out letter by letter ("b-a-c-k-l-i-n-k-s"), up to `maxPoints`. */
  speltOut: { perWord: 1.5, maxPoints: 3 },
  /** Of a pitch's three parts (their business, an offer, an ask) with no need of its own: all three, or two. */
  salesPitch: { allThree: 2.5, two: 1.5 },
  /** A team or department as the sender's name ("Listing Support"), or a famous brand ("Google …"). */
  roleName: { role: 1.5, brand: 2.5 },
  /** Hype: three or more promotion emoji ("🚀🔥💰"), and money promised ("earn $500 a day"). */
  hype: { emoji: 1.5, money: 2 },
  /** The message's words are those of spam: a point per `oddsPerPoint` of naive Bayes log-odds (vocabulary.ts), up to `maxPoints`. */
  spamVocabulary: { oddsPerPoint: 2.5, maxPoints: 4 },
  /** Nothing of the studio's work named, in any language: a parcel, a loan, a diet (topic.ts). */
  offTopic: 2.5,
  /** Per other address that sent the same body within an hour, up to `maxPoints`. */
  repeatedMessage: { perAddress: 2.5, maxPoints: 7.5 },
  /** The hidden field that people never see was filled in. */
  honeypot: 10,
  /** A proof of work that does not verify, is stale or was used before. */
  invalidProof: 2,
  /** A fresh, valid proof of work lowers the score: a browser did the work. */
  validProof: -2,
});
