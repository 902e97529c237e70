// The shape of a sales pitch: it speaks of the recipient's business (or a pain of theirs), offers
// something and asks for a reply, and never says what the sender needs, as a brief does. English only.
import { ODD_CASE, withoutU } from './case-fold.js';

/** The recipient's business, or a pain a pitch pins on them. */
const ABOUT_THEM = new RegExp(
  [
    String.raw`\byour\s+(?:website|web\s*site|site|blog|business|company|brand|page|channel|profile|listing|domain|store|shop|agency|studio|clients|customers|audience|followers|rankings?|rating|traffic|videos?|online\s+presence|social\s+media|reviews|competitors|visitors|conversions?|sales|revenue|team)\b`,
    String.raw`\bare\s+you\s+(?:still|spending|struggling|tired|losing|paying|missing)\b`,
    String.raw`\byou(?:'re|\s+are)\s+(?:losing|missing\s+out|leaving\s+money)\b`,
    String.raw`\b(?:struggling\s+(?:with|to)|costing\s+you|losing\s+(?:customers|clients|sales|visitors))\b`,
    String.raw`\bwant\s+(?:more|new)\s+(?:clients|customers|leads|sales|traffic|followers)\b`,
  ].join('|'),
  'iu',
);

/** What the sender offers. */
const OFFER = new RegExp(
  [
    String.raw`\b(?:we|i)\s+(?:can|could|will|offer|provide|help|specialize|specialise|deliver|guarantee|have\s+helped|work\s+with|build|create|promote|design|develop)\b`,
    String.raw`\b(?:we've|we\s+have|i've|i\s+have)\s+(?:helped|worked\s+with|built)\b`,
    String.raw`\b(?:we|i)(?:'re|\s+are|'m|\s+am)\s+(?:a|an)\s+(?:team|agency|company|group|leading|certified|professional|expert|freelance|specialist)\b`,
    String.raw`\bour\s+(?:services|packages|team\s+of|clients|experts|platform|agency|prices|rates|solution|system|software|tool|offer)\b`,
    String.raw`\b(?:hire\s+(?:a|an|our)|save\s+up\s+to|get\s+(?:up\s+to\s+)?\d)`,
  ].join('|'),
  'iu',
);

/** The reply or click it asks for. */
const ASK = new RegExp(
  [
    String.raw`\b(?:reply|respond|write\s+back)\b`,
    String.raw`\b(?:are|would)\s+you\s+(?:be\s+)?(?:interested|open)\b|\binterested\s*\?|\blet\s+me\s+know\b`,
    String.raw`\b(?:can|shall|may|should)\s+i\s+send\b|\bwant\s+me\s+to\b`,
    String.raw`\b(?:book|schedule|set\s+up|hop\s+on)\s+a\s+(?:quick\s+)?(?:call|demo|meeting|chat)\b`,
    String.raw`\bfree\s+(?:audit|trial|consultation|report|sample|demo|analysis|mockup|strategy)\b`,
    String.raw`\b\d+[-\s]?min(?:ute)?s?\s+(?:call|chat)\b|\bworth\s+a\s+(?:chat|call|conversation)\b`,
    String.raw`\b(?:click\s+(?:here|the\s+link|below)|order\s+now|buy\s+now|apply\s+now|sign\s+up\s+(?:now|today|free)|join\s+(?:now|free|today))\b`,
    String.raw`\b(?:dm|message|text|call|whatsapp)\s+(?:us|me)\s+(?:now|today|on|at|for)\b`,
    String.raw`\bdo\s+you\s+(?:need|want)\s+(?:more|new|a\s+(?:new|better))\b`,
  ].join('|'),
  'iu',
);

/** What a brief says: its sender's own need, plans or means. */
const NEED = new RegExp(
  [
    String.raw`\b(?:we|i)\s+(?:need|want|would\s+like|are\s+looking|am\s+looking|are\s+planning|am\s+planning|plan|require|have\s+a\s+budget)\b`,
    String.raw`\b(?:we|i)(?:'d\s+like|'re\s+looking|'m\s+looking|'re\s+planning|'m\s+planning)\b`,
    String.raw`\b(?:our|my)\s+(?:current|new|old|existing)\s+(?:website|site|shop|store|app)\b`,
    String.raw`\b(?:budget|deadline|timeline|quote\s+for|how\s+much\s+(?:would|does|do|will))\b`,
  ].join('|'),
  'iu',
);

const PLAIN = { need: withoutU(NEED), parts: [ABOUT_THEM, OFFER, ASK].map(withoutU) };

/** How many of the pitch's three parts the text has; 0 when it says a need of its own. */
export function pitchParts(text: string): number {
  const { need, parts } = ODD_CASE.test(text) ? { need: NEED, parts: [ABOUT_THEM, OFFER, ASK] } : PLAIN;
  if (need.test(text)) return 0;
  return parts.filter((part) => part.test(text)).length;
}
