// /docs: the API reference rendered from the served OpenAPI documents by
// Swagger UI, every file from this service. The page is opened in Debian's
// headless Chromium (installed by scripts/ensure-chromium.sh when missing),
// which may reach nothing but the test's own server.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS, ensureChromium, launchChromium } from '../support/chromium.ts';
import { startHarness, type Harness } from '../support/harness.ts';

let harness: Harness;
/** A server with no AUTH_TOKENS: it generated its own admin token, as `npm start` does. */
let generated: Harness;
let generatedDataDir: string;
let browser: Browser | undefined;
let chromiumUnavailable: string | undefined;

beforeAll(async () => {
  chromiumUnavailable = await ensureChromium();
  if (chromiumUnavailable) console.warn(`docs.test.ts: the browser checks are skipped: ${chromiumUnavailable}`);
  harness = await startHarness({ worker: false });
  generatedDataDir = mkdtempSync(join(tmpdir(), 'entity-records-docs-'));
  generated = await startHarness({ worker: false, env: { AUTH_TOKENS: '', DATA_DIR: generatedDataDir } });
  if (!chromiumUnavailable) browser = await launchChromium();
}, CHROMIUM_INSTALL_TIMEOUT_MS + 120_000);

afterAll(async () => {
  await browser?.close();
  await harness?.close();
  await generated?.close();
  if (generatedDataDir) rmSync(generatedDataDir, { recursive: true, force: true });
});

const securitySchemes = async (server: Harness, version: string) =>
  JSON.stringify(
    ((await (await server.api(`/api/${version}/openapi.json`, { as: null })).json()) as { components: { securitySchemes: unknown } })
      .components.securitySchemes,
  );

describe('/docs without a browser', () => {
  it('serves the index and the reference pages without a token, under a same-origin CSP', async () => {
    for (const path of ['/docs', '/docs/v2', '/docs/v1']) {
      const response = await harness.api(path, { as: null });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await response.text();
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('names both ways to authenticate, bearer tokens and API-key signatures, on the index and in each reference', async () => {
    const index = await (await harness.api('/docs', { as: null })).text();
    expect(index).toContain('Bearer');
    expect(index).toContain('NDA-HMAC-SHA256');
    for (const version of ['v2', 'v1']) {
      const document = (await (await harness.api(`/api/${version}/openapi.json`, { as: null })).json()) as {
        info: { description: string };
      };
      expect(document.info.description, version).toContain('Bearer <token>');
      expect(document.info.description, version).toContain('NDA-HMAC-SHA256');
    }
  });

  it('serves Swagger UI from node_modules, the XSDs, and nothing else under /docs/assets and /docs/schemas', async () => {
    const bundle = await harness.api('/docs/assets/swagger-ui-bundle.js', { as: null });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    await bundle.body?.cancel();
    const xsd = await harness.api('/docs/schemas/entity-records-2025.xsd', { as: null });
    expect(xsd.status).toBe(200);
    expect(xsd.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(await xsd.text()).toContain('targetNamespace="http://cam.tacr.cz/2025"');
    for (const path of [
      '/docs/assets/package.json',
      '/docs/assets/..%2F..%2Fpackage.json',
      '/docs/schemas/cam-2019.xsd',
      '/docs/assets/swagger-ui-bundle.js.map',
    ]) {
      const response = await harness.api(path, { as: null });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      await response.body?.cancel();
    }
  });
});

describe('the addresses the README gives', () => {
  it('answers every /docs address the README names, without a token; /docs/schemas/ lists the XSDs it serves', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const named = new Set(
      [...readme.matchAll(/(?:`|http:\/\/127\.0\.0\.1:8080)(\/docs[^`\s)]*?)[.,]?(?=[`\s)])/g)].map((match) => match[1]!),
    );
    expect(named).toContain('/docs/schemas/');
    for (const path of named) {
      const response = await harness.api(path, { as: null });
      expect(response.status, path).toBe(200);
      await response.body?.cancel();
    }
    const index = await (await harness.api('/docs/schemas/', { as: null })).text();
    const linked = [...index.matchAll(/href="(\/docs\/schemas\/[^"]+)"/g)].map((match) => match[1]!);
    expect(linked).toEqual(['/docs/schemas/entity-records-2025.xsd', '/docs/schemas/entity-records-2019.xsd']);
    for (const path of linked) expect((await harness.api(path, { as: null })).status, path).toBe(200);
    expect(index).toContain('http://cam.tacr.cz/2025');
    expect((await harness.api('/docs/schemas', { as: null })).status).toBe(200);
  });
});

describe('where the token comes from', () => {
  it("names the generated admin token's file in the bearer scheme (the Authorize dialog) when the server generated one", async () => {
    for (const version of ['v2', 'v1']) {
      expect(await securitySchemes(generated, version), version).toContain(`${join(generatedDataDir, 'secrets', 'admin-token')}`);
      expect(await securitySchemes(harness, version), `${version} with AUTH_TOKENS configured`).not.toContain('admin-token');
    }
  });
});

describe('/docs in headless Chromium', () => {
  let context: BrowserContext;
  let page: Page;
  const offOrigin: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!browser) return;
    context = await browser.newContext({ serviceWorkers: 'block' });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${harness.baseUrl}/`)) return route.continue();
      offOrigin.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
  });

  afterAll(async () => {
    await context?.close();
  });

  it('lists both versions and renders the v2 batch operations, then v1 through the version switcher', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);

    await page.goto(`${harness.baseUrl}/docs`);
    await expect.poll(() => page.getByRole('link', { name: 'v1 (legacy)' }).count()).toBeGreaterThan(0);
    await page.getByRole('link', { name: 'v2 (current)' }).first().click();
    await page.waitForURL(`${harness.baseUrl}/docs/v2`);

    const submit = page.locator('.opblock-post').filter({ has: page.locator('.opblock-summary-path[data-path="/batches"]') });
    await submit.waitFor({ state: 'visible', timeout: 30_000 });
    expect((await submit.locator('.opblock-summary-method').textContent())?.trim()).toBe('POST');
    for (const path of ['/batches/test', '/batches/{updateRequestId}/status', '/batches/{updateRequestId}/result']) {
      await page.locator(`.opblock-summary-path[data-path="${path}"]`).waitFor({ state: 'visible' });
    }
    const text = await page.locator('#swagger-ui').innerText();
    expect(text).toContain('/batches');
    expect(text).toContain('POST');
    expect(text).toContain('Entity Records Service API');

    // The operation opens with its documented parameters and media types.
    await submit.locator('.opblock-summary').click();
    await submit.locator('.parameter__name', { hasText: /^forceKey$/ }).waitFor({ state: 'visible' });
    expect(await submit.innerText()).toContain('application/problem+json');

    await page.getByRole('link', { name: 'v1 (legacy)' }).click();
    await page.waitForURL(`${harness.baseUrl}/docs/v1`);
    await page.locator('.opblock-summary-path[data-path="/batches/{bid}/response"]').waitFor({ state: 'visible', timeout: 30_000 });
    expect(await page.locator('.opblock-post .opblock-summary-path[data-path="/batches"]').count()).toBe(1);

    expect(offOrigin, 'requests that left the test server').toEqual([]);
    expect(pageErrors, 'errors on the page (script errors, CSP violations)').toEqual([]);
  });

  it('shows in the Authorize dialog where the server put its generated admin token', async (ctx) => {
    if (!browser) ctx.skip(chromiumUnavailable);
    const own = await browser!.newContext({ serviceWorkers: 'block' });
    try {
      const docs = await own.newPage();
      await docs.goto(`${generated.baseUrl}/docs/v2`);
      await docs.locator('.btn.authorize').first().click({ timeout: 30_000 });
      const dialog = docs.locator('.dialog-ux .modal-ux');
      await dialog.waitFor({ state: 'visible' });
      expect(await dialog.innerText()).toContain(join(generatedDataDir, 'secrets', 'admin-token'));
    } finally {
      await own.close();
    }
  });
});
