// Rows as the domain sees them: shared by the stores that read inquiries.
import type { Database } from './schema.js';
import type { InquiryRecord } from './store.js';

type InquiryRow = Database['inquiries'];

export const toInquiry = (row: InquiryRow): InquiryRecord => ({
  reference: row.reference,
  firstName: row.first_name,
  lastName: row.last_name,
  email: row.email,
  company: row.company,
  message: row.message,
  clientId: row.client_id,
  receivedAt: new Date(Number(row.received_at)),
});
