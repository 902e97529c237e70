// The benchmark's mailbox: a real SMTP server (npm smtp-server) on 127.0.0.1 that accepts every
// message and records its X-Inquiry-Reference header, read straight from the raw header block (no
// MIME parsing, so the sink costs the shared CPU as little as possible).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  readonly url: string;
  /** Messages received, including any duplicate deliveries. */
  readonly messages: () => number;
  /** Distinct X-Inquiry-Reference values seen. */
  readonly references: ReadonlySet<string>;
  /** Messages whose reference had already been received (a delivery sent twice). */
  readonly duplicates: () => number;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const REFERENCE_HEADER = /^X-Inquiry-Reference:[ \t]*(\S+)/im;

export async function startSmtpSink(): Promise<SmtpSink> {
  const references = new Set<string>();
  let messages = 0;
  let duplicates = 0;

  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // Enough for the service's pooled connections; the default is not limited either.
    maxClients: 256,
    // close() waits for open connections at most this long before dropping them.
    closeTimeout: 2_000,
    onData(stream, _session, callback) {
      // Keep only the header block: the body is drained and dropped.
      let head: Buffer = Buffer.alloc(0);
      let headerDone = false;
      stream.on('data', (chunk: Buffer) => {
        if (headerDone) return;
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        const end = head.indexOf(HEADER_END);
        if (end !== -1) {
          head = head.subarray(0, end);
          headerDone = true;
        }
      });
      stream.on('end', () => {
        messages++;
        const reference = REFERENCE_HEADER.exec(head.toString('latin1'))?.[1];
        if (reference !== undefined) {
          if (references.has(reference)) duplicates++;
          references.add(reference);
        }
        callback();
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A client that drops its connection must not bring the benchmark down.
  server.on('error', () => {});
  const { port } = server.server.address() as AddressInfo;

  let closed = false;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages: () => messages,
    references,
    duplicates: () => duplicates,
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
