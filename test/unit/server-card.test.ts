// The server card's name: the studio's own website host reversed, PUBLIC_URL's host when the
// website names no domain.
import { describe, expect, it } from 'vitest';
import { serverCardName } from '../../src/mcp/server-card.js';

describe('serverCardName', () => {
  it.each([
    ['https://northlight.example', 'https://inquiries.example.net', 'example.northlight/studio-inquiry'],
    ['https://www.Studio.example.co.uk/about', 'http://127.0.0.1:3000', 'uk.co.example.studio/studio-inquiry'],
    ['https://127.0.0.1', 'https://inquiries.example.net/studio', 'net.example.inquiries/studio-inquiry'],
    ['http://localhost:8080', 'https://inquiries.example.net', 'net.example.inquiries/studio-inquiry'],
    ['mailto:hello@example.com', 'https://inquiries.example.net', 'net.example.inquiries/studio-inquiry'],
  ])('website %s (PUBLIC_URL %s) → %s', (website, publicUrl, name) => {
    expect(serverCardName({ website }, publicUrl)).toBe(name);
  });
});
