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
    expect(
      codesOf({ message: 'About the new website: write to ana@studio.pt, a.b@c.de or x@y.io; we use Node.js and Vue.js, e.g. Nuxt.' }),
    ).toEqual([]);
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
    for (const email of [
      'ana@gmail.com',
      'li@163.com',
      'jo@proton.me',
      'me@duck.com',
      'x1@mozmail.com',
      'a@simplelogin.com',
      'b@aleeas.com',
    ]) {
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

describe('obfuscated_text', () => {
  it('catches words mixing Latin with look-alike Cyrillic or Greek letters', () => {
    // "Неllо! Gеt mоrе" with Cyrillic Н, е and о among the Latin letters.
    const message = 'Не\u006c\u006cо! Gеt mоrе clients for your business today.';
    expect(codesOf({ message })).toContain('obfuscated_text');
    expect(judge({ ...brief, message }, NEUTRAL_SIGNALS).score).toBeGreaterThanOrEqual(SPAM_WEIGHTS.mixedScript);
  });

  it('catches long words spelt out letter by letter, and reads them joined for the phrase list', () => {
    const message = 'We offer b-a-c-k-l-i-n-k-s and G o o g l e ranking.';
    const judgement = judge({ ...brief, message }, NEUTRAL_SIGNALS);
    expect(judgement.reasons.map(({ code }) => code)).toEqual(expect.arrayContaining(['spam_phrases', 'obfuscated_text']));
    expect(judgement.reasons.find(({ code }) => code === 'spam_phrases')?.detail).toContain('backlinks');
  });

  it('lets text in one script, abbreviations and short spelt-out words pass', () => {
    for (const message of [
      'Мы хотим новый сайт для нашей пекарни в Москве, с онлайн-заказом.',
      'Ελπίζουμε σε μια νέα ιστοσελίδα για το ξενοδοχείο μας στη Νάξο.',
      'We sell to the U.S.A. and the E.U., e.g. via A/B tests; our brand is K.I.S.S.',
      'Jürgen Wößner from Zoë & Søren ApS: Plan A, B and C for the website.',
    ]) {
      expect(codesOf({ message })).toEqual([]);
    }
  });
});

describe('sales_pitch', () => {
  it("catches a message speaking of the recipient's business that offers and asks, with no need of its own", () => {
    const message =
      'Are you still losing visitors on your website? We help studios convert twice as many. Would you be open to a 10-minute call?';
    expect(codesOf({ message })).toContain('sales_pitch');
    expect(judge({ ...brief, message }, NEUTRAL_SIGNALS).reasons.find(({ code }) => code === 'sales_pitch')?.detail).toMatch(/^3 of/);
  });

  it('lets a brief pass that says what its sender needs, however it speaks of the studio', () => {
    const message =
      'We love your studio and your portfolio. We need a new booking site by June; our budget is 12k. Would you be open to a call? We can send the brief.';
    expect(codesOf({ message })).toEqual([]);
  });
});

describe('role_name', () => {
  it('catches a team or department as a name, and a famous brand more', () => {
    expect(codesOf({ firstName: 'Listing', lastName: 'Support' })).toEqual(['role_name']);
    const brand = judge({ ...brief, firstName: 'Google Business', lastName: 'Support' }, NEUTRAL_SIGNALS);
    expect(brand.score).toBe(SPAM_WEIGHTS.roleName.role + SPAM_WEIGHTS.roleName.brand);
    expect(brand.verdict).toBe('spam');
  });

  it('lets people pass, whatever their company is called, Sales and Seo as surnames included', () => {
    for (const [firstName, lastName] of [
      ['Maria', 'Sales'],
      ['Ji-woo', 'Seo'],
      ['Ann', 'Lee'],
    ]) {
      expect(codesOf({ firstName, lastName, company: 'Google Support Services Ltd' })).toEqual([]);
    }
  });
});

describe('hype', () => {
  it('catches promotion emoji, and money promised in any of several languages', () => {
    expect(codesOf({ message: 'New drop 🚀🔥💰 grab it now' })).toContain('hype');
    for (const message of [
      'I turned $250 into $8,420 in three weeks.',
      'Ganhe R$ 500 por dia no celular.',
      'Бонус 15 000 ₽ новым игрокам.',
    ]) {
      expect(codesOf({ message })).toContain('hype');
    }
  });

  it('lets a budget, prices and a cheerful emoji pass', () => {
    for (const message of [
      'Our budget is $8,000 and we pay €200 per month for hosting today. 🙂',
      'Revenue grew 20% last year; we charge €45 per class, which the new site should show. 🎉',
    ]) {
      expect(codesOf({ message })).toEqual([]);
    }
  });
});

describe('spam_vocabulary', () => {
  it("catches a message in spam's words", () => {
    const message =
      'Hi, we help agencies get more clients with our lead generation team. Would you be interested in a free trial? Reply YES and I will send details.';
    expect(codesOf({ message })).toContain('spam_vocabulary');
  });

  it("lets a brief in a brief's words pass", () => {
    expect(
      codesOf({ message: 'We need a new website for our bakery: online orders, a map and opening hours. Budget 6k, launch in May.' }),
    ).toEqual([]);
  });
});

describe('off_topic', () => {
  it("catches a message that names nothing of the studio's work", () => {
    expect(codesOf({ message: 'Your parcel CZ8841207 could not be delivered. Pay the 29 CZK customs fee today to release it.' })).toContain(
      'off_topic',
    );
    expect(codesOf({ message: 'Займ до 500 000 рублей без справок и поручителей, решение за 5 минут.' })).toContain('off_topic');
  });

  it('lets a message about a website, a shop, an app or an invoice pass, in other languages too', () => {
    for (const message of [
      'Could you check invoice 1187? Hosting looks charged twice.',
      'Wir brauchen eine neue Webseite für unsere Schreinerei.',
      '我们想做一个中英文双语的网店，请问报价多少？',
      'أريد تصميم متجر إلكتروني لعلامتي التجارية',
      '新しいホームページを作りたいです。',
    ]) {
      expect(codesOf({ message })).not.toContain('off_topic');
    }
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
    expect(judgement.reasons.map(({ code }) => code)).toEqual([
      'url_shortener',
      'markup_link',
      'spam_phrases',
      'spam_vocabulary',
      'off_topic',
      'trusted_agent',
    ]);
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
