// A real SMTP server (npm smtp-server) on a free local port that parses what it receives
// (mailparser), can refuse mail on demand, and can be stopped and started again on the same port.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  readonly envelope: { readonly from: string; readonly to: readonly string[] };
  readonly parsed: ParsedMail;
  readonly raw: string;
  /** When its DATA began (Date.now()). */
  readonly receivedAt: number;
}

export interface TestSmtpServer {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedMail[];
  /** Answers RCPT with this SMTP code (e.g. 550, 451), or accepts when null. */
  rejectWith: number | null;
  /** Milliseconds each mail's DATA waits before it is accepted (a slow server); 0 by default. */
  acceptDelayMs: number;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  let server: SMTPServer | undefined;
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();

  const options = (state: TestSmtpServer): SMTPServerOptions => ({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (state.rejectWith !== null) {
        return callback(Object.assign(new Error(`refused by test (${state.rejectWith})`), { responseCode: state.rejectWith }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const receivedAt = Date.now();
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = await simpleParser(raw);
        if (state.acceptDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.acceptDelayMs));
        received.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          parsed,
          raw,
          receivedAt,
        });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });

  const state: TestSmtpServer = {
    url: '',
    port,
    received,
    rejectWith: null,
    acceptDelayMs: 0,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} mails, received ${received.length}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 100);
        });
      }
      return received.slice(0, count);
    },
    async stop() {
      const current = server;
      server = undefined;
      if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
    },
    async start() {
      const next = new SMTPServer(options(state));
      await new Promise<void>((resolve, reject) => {
        next.once('error', reject);
        next.listen(state.port, '127.0.0.1', () => resolve());
      });
      // A client killed mid-mail (the SIGKILL tests) resets its connection: an error event for a mail
      // never accepted, which the tests judge by what was. The `listen` listener above hears only the
      // first; a second would be an uncaught exception.
      next.on('error', () => {});
      server = next;
      const address = next.server.address() as AddressInfo;
      (state as { port: number }).port = address.port;
      (state as { url: string }).url = `smtp://127.0.0.1:${address.port}`;
    },
  };
  await state.start();
  return state;
}
