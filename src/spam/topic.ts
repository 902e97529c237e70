// What a brief is about: the studio's work (a website, a shop, an app, a brand, a design) or the
// running of one (hosting, an invoice, a staging link), named in one of the languages briefs come in.
// Spam about loans, parcels, diets or dating names none of it.
import { ODD_CASE, withoutU } from './case-fold.js';

/** Stems and words, matched case-insensitively anywhere in the text (inflected languages differ in endings). */
export const TOPIC_WORDS = [
  // English
  String.raw`web\s*-?sites?|web\s*pages?|landing\s+pages?|\bpages?\b|\bsites?\b|\bweb\b|\bapps?\b|applications?|mobile|\bios\b|android`,
  String.raw`\bshop\b|\bstores?\b|e-?commerce|webshop|microsite|homepage|checkout|online|booking|intranet|portal|platform|dashboard`,
  String.raw`shopify|wordpress|webflow|woocommerce|magento|squarespace|\bwix\b|\bcms\b|\bsaas\b|\bmvp\b|front-?end|back-?end|\bapi\b`,
  String.raw`\blogos?\b|brand|identity|design|\bux\b|\bui\b|prototype|figma|typograph|illustrat|packaging|template|theme|plugin|newsletter`,
  String.raw`develop|rebuild|migrat|accessib|wcag|maintenance|hosting|domain|\bssl\b|cookie|login|staging|\bbug\b|portfolio`,
  'project|quote|proposal|budget|invoice',
  // German, French, Spanish, Italian, Portuguese, Dutch
  'webseite|internetseite|onlineshop|auftritt|gestaltung|entwickl|angebot|relaunch|rechnung',
  'boutique|refonte|maquette|devis|conception|développ|facture',
  'sitio|página|tienda|aplicaci|diseño|desarroll|presupuesto|factura',
  String.raw`\bsito|negozio|progett|sviluppo|preventivo|fattura`,
  'loja|aplicativo|desenvolv|orçamento|projeto|fatura',
  'huisstijl|ontwerp|offerte|factuur',
  // Polish, Czech, Swedish, Finnish, Hungarian, Turkish, Serbian
  'stron|sklep|aplikac|projekt|wycen|faktur|stránk|e-shop|návrh|vývoj|nabídk',
  'hemsida|webbplats|webbshop|utveckl|offert|sajt|kotisivu|verkkosivu|weboldal|webáruház',
  'uygulama|tasarım|e-ticaret|teklif|сајт|онлајн',
  // Russian, Ukrainian, Greek
  'сайт|магазин|приложени|дизайн|логотип|разработ|лендинг|онлайн|платформ|страниц|додат|розробк|застосун|кабінет|сторінк',
  'ιστοσελ|ιστότοπ|εφαρμογ|σχεδια|eshop',
  // Arabic, Hebrew, Hindi, Thai
  'موقع|تطبيق|تصميم|متجر|אתר|אפליקצי|עיצוב|חנות|वेबसाइट|ऐप|डिज़ाइन|डिजाइन|लोगो|ऑनलाइन|पोर्टल|เว็บ|ออนไลน์',
  // Chinese, Japanese, Korean, Vietnamese, Indonesian
  '网站|网页|网店|官网|独立站|网上|平台|系统|系統|應用|应用|小程序|设计|設計|商城|开发|開發',
  String.raw`サイト|ホームページ|アプリ|デザイン|ロゴ|制作|オンライン|ショップ|システム|\bEC\b`,
  '웹사이트|홈페이지|사이트|앱|디자인|로고|개발|쇼핑몰|자사몰|프로젝트',
  'trang web|ứng dụng|thiết kế|situs|aplikasi|desain|toko online',
];

const TOPIC = new RegExp(TOPIC_WORDS.join('|'), 'iu');
const ALTERNATIVES = TOPIC_WORDS.flatMap((words) => words.split('|'));
const isPlain = (word: string): boolean => !/[\\()[\]?*+^$.|]/.test(word) && word === word.toLowerCase();

/** Common words one of the patterns above takes ("website" by web\s*-?sites?). */
const COMMON_FORMS = ['website', 'webpage', 'application', 'ecommerce', 'e-commerce', 'frontend', 'backend'];

/** Plain lower-case words the pattern takes: one is a match exactly when the lower-cased text has it. */
export const PLAIN_TOPIC_WORDS: readonly string[] = [...COMMON_FORMS, ...ALTERNATIVES.filter(isPlain)];
/** The other alternatives (all ASCII): without the u flag, as they match alike on text without odd case. */
export const OTHER_TOPIC_PATTERN = withoutU(new RegExp(ALTERNATIVES.filter((word) => !isPlain(word)).join('|'), 'iu'));

/** Whether the text names anything of the studio's work, in any of the languages listed. */
export function namesStudioWork(text: string): boolean {
  if (ODD_CASE.test(text)) return TOPIC.test(text);
  const lower = text.toLowerCase();
  return PLAIN_TOPIC_WORDS.some((word) => lower.includes(word)) || OTHER_TOPIC_PATTERN.test(text);
}
