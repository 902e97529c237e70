// Each spam rule with an inquiry it catches and one it lets pass (docs/spam.md).
import { describe, expect, it } from 'vitest';
import { NEUTRAL_SIGNALS, type SpamCode, type SpamInquiry, type SpamSignals } from '../../src/spam/types.js';
import { judge } from '../../src/spam/verdict.js';
import { DEFAULT_SPAM_THRESHOLD, SPAM_WEIGHTS } from '../../src/spam/weights.js';

const brief: SpamInquiry = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  company: 'Analytical Engines Ltd',
  message: 'We need a new website for our engine, launching in spring. Our current site is https://engines.example.com.',
};

function codesOf(change: Partial<SpamInquiry>, signals: Partial<SpamSignals> = {}): SpamCode[] {
  return judge({ ...brief, ...change }, { ...NEUTRAL_SIGNALS, ...signals }).reasons.map(({ code }) => code);
}

describe('the plain brief', () => {
  it('is inbox with no reasons and a score of 0', () => {
    expect(judge(brief, NEUTRAL_SIGNALS)).toEqual({ verdict: 'inbox', score: 0, reasons: [] });
  });
});

describe('too_many_links', () => {
  it('catches a message stuffed with links', () => {
    const message = Array.from({ length: 8 }, (_, index) => `https://pills${index}.example.ru`).join(' ');
    expect(codesOf({ message })).toContain('too_many_links');
    expect(judge({ ...brief, message }, NEUTRAL_SIGNALS).verdict).toBe('spam');
  });

  it('lets a brief with a link or two, or three references, pass', () => {
    expect(codesOf({ message: 'Our site is studio.pt and the shop is https://shop.studio.pt/en.' })).toEqual([]);
    expect(codesOf({ message: 'We like https://linear.app, stripe.com and www.framer.com.' })).toEqual([]);
  });

  it('does not count email addresses or dotted words as links', () => {
    expect(codesOf({ message: 'Write to ana@studio.pt, a.b@c.de or x@y.io; we use Node.js and Vue.js, e.g. Nuxt.' })).toEqual([]);
  });
});

describe('link_in_name', () => {
  it('catches a URL or an email address in a name, a URL in the company', () => {
    expect(codesOf({ firstName: 'Cheap SEO https://x.example.com' })).toContain('link_in_name');
    expect(codesOf({ lastName: 'www.best-deals.example.com' })).toContain('link_in_name');
    expect(codesOf({ lastName: 'sales@deals.example.com' })).toContain('link_in_name');
    expect(codesOf({ company: 'https://replica.example.com' })).toContain('link_in_name');
    expect(codesOf({ company: 'sales@replica.example.com' })).toContain('link_in_name');
  });

  it('lets a company named after its domain pass', () => {
    expect(codesOf({ company: 'Booking.com' })).toEqual([]);
    expect(codesOf({ firstName: "D'Arcy", lastName: 'St. John-Smith', company: 'Smith & Co. Ltd.' })).toEqual([]);
  });
});

describe('url_shortener', () => {
  it('catches a shortened link', () => {
    expect(codesOf({ message: 'View your invoice: https://bit.ly/3xYzAb' })).toContain('url_shortener');
    expect(codesOf({ message: 'see tinyurl.com/abc123' })).toContain('url_shortener');
  });

  it('lets a full link pass', () => {
    expect(codesOf({ message: 'Our Figma file: https://www.figma.com/file/abc/Site' })).toEqual([]);
  });
});

describe('markup_link', () => {
  it('catches HTML and BBCode links', () => {
    expect(codesOf({ message: 'Best offer <a href="https://x.example.com">here</a>' })).toContain('markup_link');
    expect(codesOf({ message: 'Great site [url=https://x.example.com]casino[/url]' })).toContain('markup_link');
  });

  it('lets a brief that speaks of HTML pass', () => {
    expect(codesOf({ message: 'The <header> and <a> elements should keep our brand colours.' })).toEqual([]);
  });
});

describe('spam_phrases', () => {
  it('catches an offer of links and rankings', () => {
    const message = 'We sell high DA backlinks and guest posts, do-follow, to get you on the first page of Google.';
    expect(codesOf({ message })).toContain('spam_phrases');
    expect(judge({ ...brief, message }, NEUTRAL_SIGNALS).verdict).toBe('spam');
  });

  it('matches whole words, whatever the case or look-alike letters', () => {
    expect(codesOf({ message: 'FREE SPINS today' })).toContain('spam_phrases');
    expect(codesOf({ message: '𝐁𝐀𝐂𝐊𝐋𝐈𝐍𝐊𝐒 for sale' })).toContain('spam_phrases');
    expect(codesOf({ message: 'Our app lists feedbacklinks and guest postcards.' })).toEqual([]);
  });

  it('lets a brief with a few such words stay in the inbox', () => {
    const message =
      "I'm reaching out because I saw your website. We want more customers and better Google ranking. Could we have a quick call, and do you give a free quote?";
    const judgement = judge({ ...brief, message }, NEUTRAL_SIGNALS);
    expect(judgement.reasons.map(({ code }) => code)).toEqual(['spam_phrases']);
    expect(judgement.verdict).toBe('inbox');
  });
});

describe('disposable_email', () => {
  it("catches a throwaway address from mailchecker's list, subdomains included", () => {
    expect(codesOf({ email: 'bot@mailinator.com' })).toContain('disposable_email');
    expect(codesOf({ email: 'bot@x.yopmail.com' })).toContain('disposable_email');
  });

  it('lets ordinary providers and privacy relays pass', () => {
    for (const email of ['ana@gmail.com', 'li@163.com', 'jo@proton.me', 'me@duck.com', 'x1@mozmail.com', 'a@simplelogin.com']) {
      expect(codesOf({ email })).toEqual([]);
    }
  });
});

describe('random_name', () => {
  it('catches random-string names', () => {
    expect(codesOf({ firstName: 'xkqzvbnmrt' })).toContain('random_name');
    expect(codesOf({ lastName: 'GwXkzqpTrv' })).toContain('random_name');
    expect(judge({ ...brief, firstName: 'JmRtXqzPl', lastName: 'bvKqTrWzx' }, NEUTRAL_SIGNALS).verdict).toBe('spam');
  });

  it('never counts names in other scripts, accented or short names, or hard consonant clusters', () => {
    const names = [
      ['Li', 'Ng'],
      ['Åsa', 'Ek'],
      ['伟', '张'],
      ['محمد', 'العتيبي'],
      ['Андрей', 'Смирнов'],
      ['राहुल', 'शर्मा'],
      ['지은', '김'],
      ['Grzegorz', 'Brzęczyszczykiewicz'],
      ['Zbigniew', 'Szczepański'],
      ['Aram', 'Mkrtchyan'],
      ['Nino', 'Mtskhvetadze'],
      ['Karl', 'Schwarzschild'],
      ['Rhodri', 'Llwchwr'],
      ['Maria', 'DeLaCruz'],
      ['Nkosinathi', 'Mthembu'],
    ];
    for (const [firstName = '', lastName = ''] of names) expect(codesOf({ firstName, lastName })).toEqual([]);
  });
});

describe('repeated_message', () => {
  it('catches the same body from other addresses within the hour', () => {
    expect(codesOf({}, { repeatedFromOtherAddresses: 1 })).toEqual(['repeated_message']);
    expect(judge(brief, { ...NEUTRAL_SIGNALS, repeatedFromOtherAddresses: 2 }).verdict).toBe('spam');
  });

  it('lets a message sent once pass', () => {
    expect(codesOf({}, { repeatedFromOtherAddresses: 0 })).toEqual([]);
  });
});

describe('honeypot', () => {
  it('catches a filled hidden field, on its own', () => {
    expect(judge(brief, { ...NEUTRAL_SIGNALS, honeypot: true })).toMatchObject({ verdict: 'spam', reasons: [{ code: 'honeypot' }] });
  });

  it('lets an empty one pass', () => {
    expect(codesOf({}, { honeypot: false })).toEqual([]);
  });
});

describe('the proof of work', () => {
  it('adds points when invalid, removes some when valid, and is neutral when missing', () => {
    const score = (proof: SpamSignals['proof']): number => judge(brief, { ...NEUTRAL_SIGNALS, proof }).score;
    expect(codesOf({}, { proof: 'invalid' })).toEqual(['invalid_proof']);
    expect(score('invalid')).toBe(SPAM_WEIGHTS.invalidProof);
    expect(score('valid')).toBe(SPAM_WEIGHTS.validProof);
    expect(score('missing')).toBe(0);
  });

  it('does not quarantine a brief on an invalid proof alone', () => {
    expect(judge(brief, { ...NEUTRAL_SIGNALS, proof: 'invalid' }).verdict).toBe('inbox');
  });
});

describe('a claimed agent', () => {
  const spammy = { ...brief, message: 'Backlinks, guest posts, free spins: https://bit.ly/x <a href="https://x.example.com">go</a>' };

  it('is never quarantined on content, and the reasons still say what was seen', () => {
    const judgement = judge(spammy, { ...NEUTRAL_SIGNALS, trustedAgent: true });
    expect(judgement.verdict).toBe('inbox');
    expect(judgement.score).toBe(0);
    expect(judgement.reasons.map(({ code }) => code)).toEqual(['url_shortener', 'markup_link', 'spam_phrases', 'trusted_agent']);
    expect(judge(spammy, NEUTRAL_SIGNALS).verdict).toBe('spam');
  });

  it('still counts what is not content', () => {
    expect(judge(brief, { ...NEUTRAL_SIGNALS, trustedAgent: true, honeypot: true }).verdict).toBe('spam');
  });
});

describe('the threshold', () => {
  it('defaults to DEFAULT_SPAM_THRESHOLD and can be set by the caller', () => {
    const signals = { ...NEUTRAL_SIGNALS, repeatedFromOtherAddresses: 1 };
    expect(judge(brief, signals).score).toBeLessThan(DEFAULT_SPAM_THRESHOLD);
    expect(judge(brief, signals, { threshold: 2 }).verdict).toBe('spam');
    expect(judge(brief, { ...NEUTRAL_SIGNALS, honeypot: true }, { threshold: 20 }).verdict).toBe('inbox');
  });
});
