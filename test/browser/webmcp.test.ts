// The contact form as a WebMCP tool (the declarative API), in Debian's chromium against the real app
// with the spam filter on: one chromium with WebMCP turned on acts as a browser agent would
// (document.modelContext lists the tool and calls it), one without it is the browser people have.
// Either way the form sends as before; the honeypot is never a parameter an agent could fill.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, reserveBaseUrl, startTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, launched } from '../helpers/browser.js';

let plain: Awaited<ReturnType<typeof launchChromium>> = {};
let agentic: Awaited<ReturnType<typeof launchChromium>> = {};
let testApp: TestApp;
let base: string;

beforeAll(async () => {
  const reserved = await reserveBaseUrl();
  base = reserved.base;
  testApp = await startTestApp({ listen: true, port: reserved.port, startWorker: false, env: { PUBLIC_URL: base, SPAM_FILTER: 'on' } });
  [plain, agentic] = await Promise.all([launchChromium(), launchChromium({ features: ['WebMCP', 'WebMCPTesting'] })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([plain.browser?.close(), agentic.browser?.close()]);
  await testApp?.close();
});

const FIELDS = ['firstName', 'lastName', 'email', 'company', 'message'];

interface Opened {
  readonly page: Page;
  /** The bodies and headers of the page's POSTs to /api/contact. */
  readonly posts: { body: Record<string, unknown>; headers: Record<string, string> }[];
  readonly errors: string[];
  close(): Promise<void>;
}

async function open(browser: Browser): Promise<Opened> {
  const context = await browser.newContext({ locale: 'en-GB' });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const opened: Opened = { page, posts: [], errors: [], close: () => context.close() };
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${base}/api/contact`)
      opened.posts.push({ body: JSON.parse(request.postData() ?? '{}'), headers: request.headers() });
  });
  page.on('pageerror', (error) => opened.errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') opened.errors.push(message.text());
  });
  expect((await page.goto(`${base}/`, { waitUntil: 'load' }))?.status()).toBe(200);
  return opened;
}

interface Tool {
  name: string;
  description: string;
  inputSchema: { type: string; properties: Record<string, { type: string; description?: string }>; required: string[] };
}

/** What a page with WebMCP offers an agent's browser (document.modelContext), and the last tool answer. */
interface AgentView {
  document: { modelContext: { getTools(): Promise<Tool[]>; executeTool(tool: Tool, input: unknown): Promise<string> } };
  toolAnswer: Promise<string>;
}

/** The tools the page registers, as an agent's browser lists them. */
const toolsOf = (page: Page) =>
  page.evaluate(async () => {
    const tools = await (globalThis as unknown as AgentView).document.modelContext.getTools();
    return tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  });

/** Starts a call of the page's tool as an agent does; its answer is read with `answerOf`. */
async function callTool(page: Page, input: Record<string, string>): Promise<void> {
  await page.evaluate(async (args) => {
    const view = globalThis as unknown as AgentView;
    const [tool] = await view.document.modelContext.getTools();
    if (!tool) throw new Error('the page registers no tool');
    view.toolAnswer = view.document.modelContext.executeTool(tool, args).catch((error) => `failed: ${error}`);
  }, input);
  // The browser fills the form in; the person is to check it and press Send (no toolautosubmit).
  await expect.poll(() => page.locator('#firstName').inputValue()).toBe(input.firstName ?? '');
}

const answerOf = (page: Page) => page.evaluate(() => (globalThis as unknown as AgentView).toolAnswer);
const judgementOf = async (reference: string) => (await testApp.services.store.inquiries.judgements([reference])).get(reference);

const inquiry = (n: number) => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  message: `A website for the Analytical Engine (${n}), by spring. Budget agreed.`,
});

describe('the form’s WebMCP attributes', () => {
  it('name the tool, describe it and each field, on the form people use; the honeypot is read-only', async () => {
    const { page, errors, close } = await open(launched(plain));
    const form = page.locator('#inquiry-form');
    expect(await form.getAttribute('toolname')).toBe('submit_inquiry');
    expect(await form.getAttribute('tooldescription')).toContain(`Send a project inquiry to ${testApp.profile.name}`);
    expect(await form.getAttribute('toolautosubmit')).toBeNull();
    for (const name of FIELDS) {
      const description = await page.locator(`#inquiry-form [name="${name}"]`).getAttribute('toolparamdescription');
      expect(description?.length, name).toBeGreaterThan(10);
    }
    expect(await page.locator('#website').getAttribute('readonly')).toBe('');
    expect(await page.locator('#website').getAttribute('toolparamdescription')).toBeNull();
    expect(errors).toEqual([]);
    await close();
  });

  it('make one tool for an agent’s browser: the five fields, their descriptions, the four required ones, no honeypot', async () => {
    const { page, close } = await open(launched(agentic));
    const [tool, ...others] = await toolsOf(page);
    expect(others).toEqual([]);
    expect(tool?.name).toBe('submit_inquiry');
    expect(tool?.description).toMatch(/^Send a project inquiry to /);
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(FIELDS);
    for (const name of FIELDS) {
      const control = page.locator(`#inquiry-form [name="${name}"]`);
      expect(tool?.inputSchema.properties[name]?.description, name).toBe(await control.getAttribute('toolparamdescription'));
    }
    expect(tool?.inputSchema.required).toEqual(['firstName', 'lastName', 'email', 'message']);
    await close();
  });
});

describe('an agent calling the tool', () => {
  it('fills the form in; the person presses Send; the agent gets the confirmation, the inquiry is in the inbox', async () => {
    const { page, posts, errors, close } = await open(launched(agentic));
    const input = inquiry(1);
    await callTool(page, input);
    expect(posts).toEqual([]); // nothing is sent before the person presses Send
    // Set apart for the person to check, until it is sent.
    const outline = () => page.evaluate<string>(`getComputedStyle(document.getElementById('inquiry-form')).outlineStyle`);
    expect(await page.evaluate<boolean>(`document.getElementById('inquiry-form').matches(':tool-form-active')`)).toBe(true);
    expect(await outline()).toBe('dashed');
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    const answer = await answerOf(page);
    expect(await outline()).toBe('none');
    expect(answer).toMatch(/^Thank you — .* Your reference is INQ-/);
    const reference = referenceOf(answer);
    expect(await page.locator('#form-status').textContent()).toBe(answer);
    expect(posts.map((post) => post.body)).toEqual([input]);
    expect(posts[0]?.headers.honeypot).toBeUndefined();
    // Proof of work solved as for anyone, the honeypot untouched: no reason to hold it back.
    expect(await judgementOf(reference)).toMatchObject({ verdict: 'inbox', reasons: [{ code: 'valid_proof' }] });
    // What was sent in the person's name stays in view.
    for (const [name, value] of Object.entries(input)) expect(await page.locator(`#${name}`).inputValue()).toBe(value);
    expect(errors).toEqual([]);
    await close();
  });

  it('gets what the page shows when a field is missing, and nothing is sent', async () => {
    const { page, posts, close } = await open(launched(agentic));
    await callTool(page, { ...inquiry(2), lastName: '' });
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    expect(await answerOf(page)).toBe('Please correct the highlighted field. Last name is required.');
    expect(posts).toEqual([]);
    await close();
  });
});

describe.each([
  ['without WebMCP', () => launched(plain)],
  ['with WebMCP', () => launched(agentic)],
])('a person %s', (name, browser) => {
  it('sends the form as before: confirmation with a reference, the form emptied', async () => {
    const { page, posts, errors, close } = await open(browser());
    const input = inquiry(3);
    await page.getByLabel('First name').fill(input.firstName);
    await page.getByLabel('Last name').fill(input.lastName);
    await page.getByLabel('Email').fill(input.email);
    await page.getByLabel('Message').fill(`${input.message} Sent ${name}.`);
    await page.getByRole('button', { name: 'Send inquiry' }).click();
    const status = page.locator('#form-status.status--success');
    await status.waitFor({ state: 'visible' });
    const reference = referenceOf((await status.textContent()) ?? '');
    expect(posts).toHaveLength(1);
    expect((await judgementOf(reference))?.verdict).toBe('inbox');
    for (const name of FIELDS) expect(await page.locator(`#${name}`).inputValue()).toBe('');
    expect(errors).toEqual([]);
    await close();
  });
});
