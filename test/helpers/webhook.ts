// A real HTTP webhook receiver (node:http) that verifies Standard Webhooks signatures with the
// reference `standardwebhooks` library and answers with scripted status codes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
  /** The parsed payload when the signature verified; null when it did not. */
  readonly verified: unknown;
}

export interface TestWebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Status codes (with headers, if any) to answer, in order; 200 once they run out. */
  readonly script: (number | { status: number; headers: Record<string, string> })[];
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;

export async function startWebhookReceiver(secret = TEST_WEBHOOK_SECRET): Promise<TestWebhookReceiver> {
  const verifier = new Webhook(secret);
  const received: ReceivedWebhook[] = [];
  const script: TestWebhookReceiver['script'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: unknown = null;
      try {
        verified = verifier.verify(body, request.headers as Record<string, string>);
      } catch {
        verified = null;
      }
      const answer = script.shift() ?? 200;
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      received.push({ headers: request.headers, body, status, verified });
      response.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/inquiry`,
    received,
    script,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`webhook condition not met; received ${received.length} requests`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
