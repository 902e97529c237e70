// axe-core run inside a page. Its script goes in through the DevTools protocol (page.evaluate), which
// the page's CSP does not govern, where a <script> tag (addScriptTag) would be refused by it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The violations axe finds on the page as it is now, each as "rule: target(s)". */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<{ id: string; nodes: { target: string[] }[] }[]>(
    '(async () => (await axe.run(document, { resultTypes: ["violations"] })).violations.map(({ id, nodes }) => ({ id, nodes: nodes.map((node) => ({ target: node.target.map(String) })) })))()',
  );
  return violations.map(({ id, nodes }) => `${id}: ${nodes.map((node) => node.target.join(' ')).join(', ')}`);
}
