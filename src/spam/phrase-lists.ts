// The phrase lists of spam_phrases (phrases.ts), by tier and kind of spam. A phrase is a wording a
// kind of spam uses, never a plain word a brief uses too ("SEO", "crypto", "invoice", "loan").

/** The offer itself: what a brief never asks for, in the seller's words. */
export const STRONG = [
  // Links and rankings for sale.
  ...['backlink', 'backlinks', 'link building', 'link-building', 'link insertion', 'niche edits', 'link juice', 'PBN'],
  ...['guest post', 'guest posts', 'guest posting', 'sponsored post', 'sponsored article', 'do-follow', 'dofollow'],
  ...['domain authority', 'DA 50', 'high DA', 'first page of Google', 'page 1 of Google', 'Google page 1', 'top of Google'],
  ...['not ranking', 'SEO services', 'SEO packages', 'SEO audit', 'keyword ranking', 'keyword rankings'],
  ...['search engine optimization services', 'rank your website', 'rank your site', 'top 10 of Google'],
  // Outreach that opens on the recipient's site.
  ...['I noticed your website', 'noticed that your website', 'was checking your website', 'your website is not'],
  ...["your website isn't", 'your site is not', 'redesign your website', 'revamp your website', 'website owner'],
  ...['errors on your website', 'issues on your website', 'is this the owner', 'reply with yes', 'reply yes', 'reply "yes"'],
  ...['remove you from our list'],
  // Audiences, leads, followers and reviews for sale.
  ...['email list of', 'mailing list of', 'decision makers list', 'qualified appointments', 'sales-ready leads'],
  ...['through contact forms', 'real followers', 'active followers', 'buy reviews'],
  // Money schemes, gambling, loans, pills, advance fees.
  ...['crypto investment', 'crypto trading', 'crypto signals', 'cryptocurrency investment', 'trading bot', 'binary options'],
  ...['guaranteed returns', 'guaranteed profit', 'double your money', 'make money online', 'crypto airdrop', 'token airdrop'],
  ...['daily profit', 'per day from home', 'financial freedom'],
  ...['online casino', 'casino bonus', 'free spins', 'no deposit bonus', 'welcome bonus', 'online slots', 'slot machines'],
  ...['fixed matches', 'fixed match', 'sure odds'],
  ...['payday loan', 'payday loans', 'instant loan', 'no credit check', 'merchant cash advance', "you're pre-approved"],
  ...['you are pre-approved', 'you have been pre-approved', 'no prescription', 'generic viagra', 'male enhancement'],
  ...['next of kin', 'consignment box', 'million US dollars', 'transfer of the funds'],
  // Notices and dunning that are not what they claim.
  ...['overdue invoice', 'outstanding invoice', 'payment overdue', 'you have won', 'domain listing', 'search engine submission'],
  ...['legal action against you', 'flagged for suspension', 'will be suspended', 'has been suspended', 'permanently removed'],
  // Other languages.
  ...['продвижение сайта', 'раскрутка сайта', 'продвижение вашего сайта', 'в ТОП-10', 'рассылка по формам'],
  ...['рассылки по формам', 'казино', 'ставки на спорт', '外链', '快排', '代发', '蜘蛛池'],
  ...['primera página de Google', 'posicionamiento web garantizado', 'gana dinero', 'ganar dinero desde casa'],
  ...['primeira página do Google', 'ganhe dinheiro', 'prima pagina di Google', 'guadagnare da casa'],
  ...['erste Seite bei Google', 'gagnez jusqu', 'première page de Google', 'kiếm tiền', 'primeras posiciones de Google'],
  ...['ganhar dinheiro', 'kostenpflichtige Abmahnung', 'nhà cái', 'nạp rút', '代开发票', '涨粉', '百度首页', '快速排名'],
  ...['presale', '1000x', 'liquidity locked', 'personal attorney to the late', 'forward this to your CEO'],
];

/** A seller's wording (prices, services, opt-outs): a buyer rarely writes two or three of these. */
export const PITCH = [
  ...['your business', 'grow your business', 'businesses like yours', 'agencies like yours', 'companies like yours'],
  ...['sites like yours', 'your existing website', 'your online presence', 'your competitors', 'your Google rankings'],
  ...['SEO expert', 'SEO experts', 'SEO team', 'local SEO', 'white hat', 'black hat'],
  ...['affordable price', 'affordable prices', 'affordable rates', 'reasonable price', 'no obligation', 'not interested'],
  ...['unsubscribe', 'opt out', 'Dear business owner', 'Hello dear', 'Dear website owner', 'dear friend'],
  ...['social media marketing', 'digital marketing services', 'digital marketing agency', 'lead generation'],
  ...['new clients per month', 'explainer video', 'virtual assistant', 'outsourcing partner', 'offshore team'],
  ...['white label', 'white-label', 'dedicated developers', 'web design services', 'web development services'],
  ...['app development services', 'mobile app for your business', 'my rate', 'our rates', 'price list', 'our packages'],
  ...['starting at only', 'starts at only', 'trading platform', 'forex', 'wallet address', 'investment opportunity'],
  ...['passive income', 'earn money', 'work from home', 'sports betting', 'jackpot', 'bonus up to', 'win rate', 'betting tips'],
  ...['personal loan', 'loan offer', 'business funding', 'working capital', 'bad credit', 'low interest', 'pre-approved'],
  ...['invoice attached', 'attached invoice', 'view invoice', 'outstanding balance', 'final notice', 'act now'],
  ...['limited time offer', '100% guaranteed', 'money back', 'money-back', 'guaranteed', 'risk-free', 'risk free'],
  ...['claim your', 'click here', 'click the link', 'avoid permanent', 'verify your account', 'verify your page'],
  ...['copyright infringement', 'infringing on', 'copyright-protected', 'DMCA notice', 'community standards'],
  ...['email list', 'contact list of', 'attendee list', 'attendees list', 'verified contacts', 'appointment setting'],
  ...['booked meetings', 'contact forms of', 'Instagram followers', 'TikTok followers', 'YouTube views'],
  ...['5-star reviews', 'five-star reviews', 'positive reviews', 'Google reviews for', 'without prescription'],
  ...['beneficiary of', 'Wikipedia page', 'press release distribution', 'chatbot for your', 't.me', 'DM us'],
  ...['generic medications', 'brand and generic', 'weight loss injections', 'discreet shipping', 'discreet packaging'],
  ...['I saw your profile', 'serious relationship', 'looking for a man', 'my photos', 'documents you asked for'],
  ...['documents you requested', 'shared a document with you', 'listing fee', 'inclusion fee', 'featured listing'],
  ...['expose your business', 'booked calls', 'sales calls', 'qualified calls', 'sales appointments'],
  ...['Dear CEO', 'person in charge', 'past due', 'days overdue', 'unlimited graphic design', 'unlimited design requests'],
  ...['flat monthly fee', 'missed calls', 'nobody picks up', 'to the moon', 'airdrop', 'renda extra', 'trabalhando de casa'],
  ...['senza garanzie', "tasso d'interesse", 'Prüfung Ihrer Website', 'cá cược', 'без верификации'],
  ...['в топ', 'заработок', 'заработать', '网站排名', '加微信', 'posicionamos', 'Abmahnung'],
];

/** Wording a buyer may use too ("your website", "free quote"): it counts little, and only so far. */
export const WEAK = [
  ...['your website', 'your site', 'your company', 'your page', 'your channel', 'your profile', 'your brand'],
  ...['came across your website', 'came across your company', 'visited your website', 'reaching out', 'quick call'],
  ...['quick question', 'Dear Sir', 'Dear Sir/Madam', 'more traffic', 'organic traffic', 'targeted traffic'],
  ...['website traffic', 'rank higher', 'ranking well', 'Google ranking', 'more leads', 'new leads', 'qualified leads'],
  ...['more customers', 'more clients', 'more views', 'free quote', 'free audit', 'free trial', 'free consultation'],
  ...['free report', 'best price', 'if you are interested', "if you're interested", 'if interested', 'let me know if'],
  ...['would you be interested', 'are you interested', 'credit score', 'wire transfer', 'special offer', 'within 24 hours'],
  ...['SEO agency', 'within 48 hours', 'appeal the decision', 'shortlisted', 'Forbes', 'ADA compliance', 'ADA lawsuit'],
  ...['accessibility lawsuit', 'WCAG violations', 'PageSpeed', 'card processing', 'processing fees', 'AI chatbot'],
  ...['online pharmacy', 'WhatsApp', 'Telegram', 'WeChat', '微信', 'collab', 'animated video', 'followers', 'crypto', 'bitcoin'],
  ...['prestito', 'prestiti', 'préstamo', 'бонус', 'ставки', 'thành viên mới', '发票'],
  ...['предлагаем', 'коммерческое предложение', '推广', '保证', 'posicionamiento', 'référencement', 'investissement'],
];
