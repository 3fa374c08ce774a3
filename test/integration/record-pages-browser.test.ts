// The record pages (/global) in Debian's headless Chromium (installed by
// scripts/ensure-chromium.sh when missing), which may reach nothing but the
// test's own servers: they load under their CSP with their stylesheet and
// no script, a person can search, follow links and sign in and out, every
// page passes axe-core without a serious or critical violation, and none
// scrolls sideways at a phone's width (375 px).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS, ensureChromium, launchChromium } from '../support/chromium.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { seedRecordPages, type RecordPagesData } from '../support/record-pages.ts';

const PHONE = { width: 375, height: 740 };
/** A record page that answers 404. */
const UNKNOWN_RECORD = '/global/999999999999';
const AXE_SOURCE = readFileSync(join(createRequire(import.meta.url).resolve('axe-core'), '..', 'axe.min.js'), 'utf8');

let pub: Harness;
let signedIn: Harness;
let data: RecordPagesData;
let browser: Browser | undefined;
let chromiumUnavailable: string | undefined;

beforeAll(async () => {
  chromiumUnavailable = await ensureChromium();
  if (chromiumUnavailable) console.warn(`record-pages-browser.test.ts: the browser checks are skipped: ${chromiumUnavailable}`);
  pub = await startHarness({ env: { RECORD_PAGES: 'public', ANONYMOUS_READ_RATE_LIMIT: '0' } });
  signedIn = await startHarness({ worker: false, env: { RECORD_PAGES: 'signed-in', ANONYMOUS_READ_RATE_LIMIT: '0' } });
  data = await seedRecordPages(pub);
  if (!chromiumUnavailable) browser = await launchChromium();
}, CHROMIUM_INSTALL_TIMEOUT_MS + 120_000);

afterAll(async () => {
  await browser?.close();
  await pub?.close();
  await signedIn?.close();
});

/** A browser context that reaches only the test servers, recording what left them and every page error (CSP violations are console errors). */
async function openContext(options: { viewport?: { width: number; height: number } } = {}) {
  const context = await browser!.newContext({ serviceWorkers: 'block', ...options });
  const offOrigin: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${pub.baseUrl}/`) || url.startsWith(`${signedIn.baseUrl}/`)) return route.continue();
    offOrigin.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // The browser asks for /favicon.ico on its own (the pages link none), and reports a page answered 404 on purpose.
    const { url } = message.location();
    if (message.type() === 'error' && !url.endsWith('/favicon.ico') && !url.endsWith(UNKNOWN_RECORD)) errors.push(message.text());
  });
  return { context, page, offOrigin, errors };
}

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated by the driver, not loaded by the page: the pages' CSP allows no script at all.
  await page.evaluate(AXE_SOURCE);
  // Expressions as text: the test is compiled without the DOM's types.
  const results = (await page.evaluate('axe.run()')) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>;
  };
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
}

/** The pages of each kind: the front door with results, a record, a replaced record, a revision, a history, a 404 and the sign-in page. */
function pagesToCheck(): Array<{ base: string; path: string }> {
  const revision = `/global/${data.karel.entityId}/revision/${data.karel.firstRev}`;
  return [
    { base: pub.baseUrl, path: `/global?name=${data.marker}` },
    { base: pub.baseUrl, path: `/global/${data.karel.entityId}` },
    { base: pub.baseUrl, path: `/global/${data.replaced.entityId}` },
    { base: pub.baseUrl, path: `/global/${data.hostile.entityId}` },
    { base: pub.baseUrl, path: revision },
    { base: pub.baseUrl, path: `/global/${data.karel.entityId}/revisions` },
    { base: pub.baseUrl, path: UNKNOWN_RECORD },
    { base: pub.baseUrl, path: '/global?name=ab' },
    { base: signedIn.baseUrl, path: `/global/sign-in?next=${encodeURIComponent(`/global/${data.karel.entityId}`)}` },
  ];
}

describe('/global in headless Chromium', () => {
  let context: BrowserContext | undefined;

  afterAll(async () => {
    await context?.close();
  });

  it('loads every kind of page with its stylesheet under the CSP, from the test server alone; no page has a serious or critical accessibility violation', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);
    const opened = await openContext();
    context = opened.context;
    const { page } = opened;
    for (const { base, path } of pagesToCheck()) {
      await page.goto(`${base}${path}`);
      expect(await page.title(), path).toMatch(/ · Entity records$/);
      expect(await page.locator('html').getAttribute('lang')).toBe('en');
      // The stylesheet applied (the header's bottom border is its rule).
      expect(await page.evaluate("getComputedStyle(document.querySelector('header.site')).borderBottomStyle"), path).toBe('solid');
      expect(await seriousViolations(page), path).toEqual([]);
    }
    expect(opened.offOrigin, 'requests that left the test servers').toEqual([]);
    expect(opened.errors, 'errors on the pages (CSP violations included)').toEqual([]);
  });

  it('fits a phone: no page scrolls sideways at 375 px', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);
    const { context: phone, page, errors } = await openContext({ viewport: PHONE });
    try {
      for (const { base, path } of pagesToCheck()) {
        await page.goto(`${base}${path}`);
        const width = (await page.evaluate('document.scrollingElement.scrollWidth')) as number;
        expect(width, path).toBeLessThanOrEqual(PHONE.width);
      }
      expect(errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });

  it('lets a person search by name and type, page through the results and follow a result, a reference and a revision', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);
    const { context: own, page, errors } = await openContext();
    try {
      await page.goto(`${pub.baseUrl}/global`);
      await page.getByLabel('Name contains').fill(data.marker);
      await page.getByLabel('Type').selectOption('PERSON');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/\/global\?name=/);
      expect(await page.locator('main').innerText()).toContain(`${data.fillers + 2} records; 1–20 shown.`);
      await page.getByRole('link', { name: 'Next' }).click();
      await page.waitForURL(/page=2/);
      expect(await page.locator('main').innerText()).toContain(`21–${data.fillers + 2} shown.`);

      await page.goto(`${pub.baseUrl}/global?name=${data.marker}&type=PERSON`);
      await page.getByRole('link', { name: `Čapek ${data.marker}, Karel` }).click();
      await page.waitForURL(`${pub.baseUrl}/global/${data.karel.entityId}`);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Čapek ${data.marker}, Karel`);
      await page
        .getByRole('link', { name: `Čapek ${data.marker} Josef` })
        .first()
        .click();
      await page.waitForURL(`${pub.baseUrl}/global/${data.josef.entityId}`);

      await page.goto(`${pub.baseUrl}/global/${data.karel.entityId}`);
      await page.locator('ol.history a').last().click();
      await page.waitForURL(/\/revision\//);
      expect(await page.locator('main').innerText()).toContain('not as it is now');
      expect(errors).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('signs a person in with a token, keeps them signed in by an HttpOnly cookie, and signs them out', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);
    const { context: own, page, errors } = await openContext();
    try {
      const record = `${signedIn.baseUrl}/global/${data.karel.entityId}`;
      await page.goto(record);
      await page.waitForURL(/\/global\/sign-in\?next=/);
      await page.getByLabel('Access token').fill(TEST_TOKENS.read);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(record);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Čapek ${data.marker}, Karel`);
      const cookies = await own.cookies(signedIn.baseUrl + '/global');
      expect(cookies.map(({ name, httpOnly, sameSite, path }) => ({ name, httpOnly, sameSite, path }))).toEqual([
        { name: 'records_session', httpOnly: true, sameSite: 'Lax', path: '/global' },
      ]);
      expect(await page.evaluate('document.cookie')).toBe('');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/global\/sign-in$/);
      expect(await own.cookies(signedIn.baseUrl + '/global')).toEqual([]);
      await page.goto(record);
      await page.waitForURL(/\/global\/sign-in\?next=/);
      expect(errors).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
