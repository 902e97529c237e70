// Debian's chromium (/usr/bin/chromium, installed by .ci/run), launched headless for playwright-core
// with the flags this closed network needs (no background connections, no updates, no sync).
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * The browser (with the Blink `features` asked for, e.g. WebMCP), or why it could not be launched:
 * kept so that every test using it fails with that reason (a failing beforeAll hook would only mark
 * them skipped).
 */
export async function launchChromium(options: { features?: readonly string[] } = {}): Promise<{ browser?: Browser; error?: unknown }> {
  const features = options.features?.length ? [`--enable-features=${options.features.join(',')}`] : [];
  try {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
        ...features,
      ],
    });
    return { browser };
  } catch (error) {
    return { error };
  }
}

/** The launched browser, or an error naming why there is none. */
export function launched({ browser, error }: { browser?: Browser; error?: unknown }): Browser {
  if (!browser) throw new Error(`chromium could not be launched from ${CHROMIUM}: ${String(error)}`);
  return browser;
}
