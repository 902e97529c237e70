// Hype: the emoji of a promotion ("🚀🔥💰") and money promised ("turned $250 into $8,420",
// "R$ 500 por dia", "bonus 15 000 ₽"). A brief names a budget; it does not promise gains.

const HYPE_EMOJI = /[🚀🔥💰💸💎🎰🎁🤑📈💯⚡🎉🙌💵🏆✅🆓]/gu;

/** How many hype emoji the text has, and how many kinds. */
export function hypeEmoji(text: string): { count: number; kinds: number } {
  const found = text.match(HYPE_EMOJI) ?? [];
  return { count: found.length, kinds: new Set(found).size };
}

const AMOUNT = String.raw`(?:[$€£¥₽₹₫]|R\$|US\$|USD|EUR|GBP)\s?\d[\d.,\s]*[kKmM]?|\d[\d.,\s]*[kKmM]?\s?(?:[$€£¥₽₹₫]|USD|EUR|GBP|руб|euro)`;
const GAIN = String.raw`earn|earning|profit|returns|bonus|won|winnings|turned|ganhar|ganar|ganhe|gana|guadagn|verdien|gagn|заработ|бонус|赚|thưởng|tặng|por\s+d[ií]a|per\s+day|a\s+day|al\s+giorno|pro\s+tag|в\s+день|每天|mỗi\s+ngày`;

/** A gain word within 40 characters of a money amount, either side. */
export const MONEY_PROMISE = new RegExp(`(?:${AMOUNT})[^.!?\\n]{0,40}(?:${GAIN})|(?:${GAIN})[^.!?\\n]{0,40}(?:${AMOUNT})`, 'iu');

/** What every amount has: a currency's sign, code or word. Most texts have none, and this finds them faster. */
const CURRENCY = /[$€£¥₽₹₫]|usd|eur|gbp|руб/iu;

export function promisesMoney(text: string): boolean {
  return CURRENCY.test(text) && MONEY_PROMISE.test(text);
}
