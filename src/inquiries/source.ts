// The doors an inquiry comes through, named as the studio reads them (CLI, mail, inbox).
import type { InquirySource } from '../storage/ports.js';

export const SOURCE_NAMES: Readonly<Record<InquirySource, string>> = {
  page: 'the contact page',
  api: 'the HTTP API',
  mcp: 'MCP',
};
