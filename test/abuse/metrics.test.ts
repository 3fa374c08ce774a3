import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';

// /metrics behind its own token: an anonymous scrape learns nothing.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';

describe('/metrics with METRICS_TOKEN', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ worker: false, env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('answers only the scraper that sends the token', async () => {
    expect((await harness.api('/metrics', { as: null })).status).toBe(401);
    expect(
      (await harness.api('/metrics', { as: null, headers: { authorization: 'Bearer not-the-metrics-token-000000000000' } })).status,
    ).toBe(401);
    // An API token is not the metrics token.
    expect((await harness.api('/metrics', { as: 'admin' })).status).toBe(401);
    const scraped = await harness.api('/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('# TYPE');
  });
});
