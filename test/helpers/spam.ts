// An inquiry the spam filter quarantines, for the tests of the quarantine and its digest.
import { validInquiry } from './app.js';

/** A link-stuffed SEO pitch, as contact forms get them daily: longer than the digest's excerpt. */
export const SEO_PITCH = validInquiry({
  firstName: 'Mark',
  lastName: 'Stone',
  email: 'mark@rankfast.example',
  company: 'Rank Fast',
  message:
    'Hi, we offer affordable SEO services and guest post backlinks to rank your website on the first page of Google. ' +
    'Samples: https://a.rankfast.example https://b.rankfast.example https://c.rankfast.example https://d.rankfast.example https://e.rankfast.example',
});
