// /global: the record pages a person opens from the registry's client, and
// the front door's search, over HTTP against the real app and database, in
// each RECORD_PAGES mode. (record-pages-browser.test.ts opens them in
// headless Chromium.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenRegistry } from '../../api/auth/tokens.ts';
import { sessionSecret, sessionSigner } from '../../api/pages/session.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { HOSTILE_NAME, seedRecordPages, type RecordPagesData } from '../support/record-pages.ts';

/** The deployment's force keys' secret, shared by its APIs: the sessions' key is derived from it. */
const FORCE_KEY_SECRET = 'record-pages-test-force-key-secret';
const SESSION_SECRET = 'record-pages-test-secret-0123456789';
const WRITE_ONLY_TOKEN = 'test-token-write-only-000000000000';
/** The test tokens, and one that may write but not read. */
const TOKENS = JSON.stringify([
  { token: TEST_TOKENS.admin, name: 'test-admin', permissions: ['admin'] },
  { token: TEST_TOKENS.read, name: 'test-reader', permissions: ['read'] },
  { token: WRITE_ONLY_TOKEN, name: 'write-only', permissions: ['write'] },
]);
const ANONYMOUS_LIMIT = 3;

let pub: Harness;
let signedIn: Harness;
/** A second API process of the signed-in registry: a session cookie issued by one is honoured by the other. */
let signedInOther: Harness;
let off: Harness;
let limited: Harness;
let data: RecordPagesData;

beforeAll(async () => {
  pub = await startHarness({ env: { RECORD_PAGES: 'public', ANONYMOUS_READ_RATE_LIMIT: '0' } });
  const signedEnv = { RECORD_PAGES: 'signed-in', ANONYMOUS_READ_RATE_LIMIT: '0', AUTH_TOKENS: TOKENS, FORCE_KEY_SECRET };
  signedIn = await startHarness({ worker: false, env: signedEnv });
  signedInOther = await startHarness({ worker: false, env: { ...signedEnv, PUBLIC_HOST: 'records.example.org:8443' } });
  off = await startHarness({ worker: false, env: { RECORD_PAGES: 'off' } });
  limited = await startHarness({
    worker: false,
    env: { RECORD_PAGES: 'public', ANONYMOUS_READ_RATE_LIMIT: String(ANONYMOUS_LIMIT), ANONYMOUS_READ_RATE_WINDOW_SECONDS: '3600' },
  });
  data = await seedRecordPages(pub);
});

afterAll(async () => {
  await pub?.sql(`delete from submission_rate where principal like 'anonymous-read:%'`);
  for (const harness of [pub, signedIn, signedInOther, off, limited]) await harness?.close();
});

/** A GET as a browser without credentials sends it (redirects not followed). */
async function page(harness: Harness, path: string, init: RequestInit = {}): Promise<{ response: Response; body: string }> {
  const response = await fetch(`${harness.baseUrl}${path}`, { redirect: 'manual', ...init });
  return { response, body: await response.text() };
}

function expectPageHeaders(response: Response): void {
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = response.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).not.toContain('script-src');
  expect(csp).not.toContain('unsafe-inline');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
}

const titleOf = (body: string) => /<title>([^<]*)<\/title>/.exec(body)?.[1];
const hrefs = (body: string) => [...body.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));

describe('a record page (public)', () => {
  it('shows the record by number: names, type and state, parts and items in words, its relation as a link by name, its history and its API address', async () => {
    const { response, body } = await page(pub, `/global/${data.karel.entityId}`);
    expect(response.status).toBe(200);
    expectPageHeaders(response);
    expect(body).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(titleOf(body)).toBe(`Čapek ${data.marker}, Karel · Entity records`);
    expect(body).toContain(`<h1>Čapek ${data.marker}, Karel</h1>`);
    expect(body).toContain('PERSON · New · spisovatel');
    // The other name, the creation date in words, both descriptions (the second from the second revision).
    expect(body).toMatch(new RegExp(`<h2 id="names">Other names</h2>\\s*<ul><li>Chapek ${data.marker}, Charles</li></ul>`));
    expect(body).toContain('<dt>CRE_DATE</dt><dd>1890-01-09 – 1890-01-09 23:59:59</dd>');
    expect(body).toContain('novinář');
    // The relation, by its target's name.
    expect(body).toContain(`<a href="/global/${data.josef.entityId}">Čapek ${data.marker} Josef</a> (${data.josef.entityId})`);
    // A web link is a link; a javascript: URL is text only.
    expect(body).toContain('href="https://example.org/capek"');
    expect(body).not.toMatch(/href="javascript:/i);
    expect(body).toContain('Not a link');
    // Two revisions, newest first, each linking to its page; the API's XML of the record.
    const revisions = hrefs(body).filter((href) => href.startsWith(`/global/${data.karel.entityId}/revision/`));
    expect(revisions.length).toBeGreaterThanOrEqual(2);
    expect(body).toContain(`href="/api/v2/entities/${data.karel.entityId}"`);
    expect(body).toContain(`<link rel="canonical" href="/global/${data.karel.entityId}">`);
  });

  it('names its revision by the rev the API answers, the metadata revision as such, and lists its history by rev', async () => {
    const { body } = await page(pub, `/global/${data.karel.entityId}`);
    const xml = await (await pub.api(`/api/v2/entities/${data.karel.entityId}`)).text();
    const element = (name: string) => new RegExp(`<(?:\\w+:)?${name}>([^<]+)<`).exec(xml)![1]!;
    const [rev, metadataRev, prevRev] = [element('rev'), element('metadataRev'), element('prevRev')];
    expect(rev).not.toBe(metadataRev);
    expect(body).toContain(`<dt>Revision</dt><dd class="id">${rev}</dd>`);
    expect(body).toContain(`<dt>Metadata revision</dt><dd class="id">${metadataRev}</dd>`);
    expect(body).toContain(
      `<dt>Previous revision</dt><dd class="id"><a href="/global/${data.karel.entityId}/revision/${prevRev}">${prevRev}</a></dd>`,
    );
    // The history shows the same kind of id: the newest entry is this rev, the one before it the previous.
    const history = /<ol class="history">[\s\S]*?<\/ol>/.exec(body)![0];
    const shown = [...history.matchAll(/(?<!metadata )revision <span class="id">([^<]+)<\/span>/g)].map((match) => match[1]);
    expect(shown).toEqual([rev, prevRev]);
  });

  it('shows the same record by its UUID, in either case', async () => {
    for (const id of [data.karel.entityUuid, data.karel.entityUuid.toUpperCase()]) {
      const { response, body } = await page(pub, `/global/${id}`);
      expect(response.status, id).toBe(200);
      expect(body).toContain(`<h1>Čapek ${data.marker}, Karel</h1>`);
      expect(body).toContain(`<link rel="canonical" href="/global/${data.karel.entityId}">`);
    }
  });

  it('links a replaced record to the record that replaced it', async () => {
    const { response, body } = await page(pub, `/global/${data.replaced.entityUuid}`);
    expect(response.status).toBe(200);
    expect(body).toContain('PARTY_GROUP · Replaced');
    expect(body).toContain(`This record was replaced by <a href="/global/${data.josef.entityId}">Čapek ${data.marker} Josef</a>`);
    expect(body).toContain(`<dt>Replaced by</dt><dd><a href="/global/${data.josef.entityId}">`);
  });

  it('shows each revision as a page of its own, with its API address, and says which is not the current one', async () => {
    const { body: current } = await page(pub, `/global/${data.karel.entityId}`);
    const links = hrefs(/<ol class="history">[\s\S]*?<\/ol>/.exec(current)![0]).filter((href) =>
      href.startsWith(`/global/${data.karel.entityId}/revision/`),
    );
    const oldest = links.at(-1)!;
    const { response, body } = await page(pub, oldest);
    expect(response.status).toBe(200);
    expectPageHeaders(response);
    expect(body).toContain('This is the record as it was in its revision of');
    expect(body).not.toContain('novinář');
    const revisionId = oldest.split('/').at(-1)!;
    expect(body).toContain(`href="/api/v2/entities/${data.karel.entityId}/revision/${revisionId}"`);
    // The API serves that address.
    expect((await pub.api(`/api/v2/entities/${data.karel.entityId}/revision/${revisionId}`)).status).toBe(200);
    // By rev (as the API takes it) too; and the newest is the current one.
    expect((await page(pub, `/global/${data.karel.entityId}/revision/${data.karel.firstRev}`)).response.status).toBe(200);
    expect((await page(pub, links[0]!)).body).toContain('This is the current revision');
    const history = await page(pub, `/global/${data.karel.entityId}/revisions`);
    expect(history.response.status).toBe(200);
    expect(history.body).toContain('2 revisions, newest first');
    expect(links).toHaveLength(2);
  });

  it('answers an unknown record or revision with a 404 page and a malformed id with a 400 page, never problem+json', async () => {
    const cases: Array<[string, number]> = [
      ['/global/999999999999', 404],
      ['/global/00000000-0000-4000-8000-000000000000', 404],
      [`/global/${data.karel.entityId}/revision/00000000-0000-4000-8000-000000000000`, 404],
      ['/global/999999999999/revisions', 404],
      ['/global/not-a-number', 400],
      ['/global/0', 400],
      ['/global/12345678901234567', 400],
      [`/global/${data.karel.entityId}/revision/not-a-uuid`, 400],
      [`/global/${data.karel.entityId}/nothing-here`, 404],
      ['/global/a/b/c/d', 404],
      ['/global?page=0', 400],
      ['/global?state=ERS_GONE', 400],
    ];
    for (const [path, status] of cases) {
      const { response, body } = await page(pub, path);
      expect(response.status, path).toBe(status);
      expectPageHeaders(response);
      expect(titleOf(body), path).toBeDefined();
    }
    expect((await page(pub, '/global/')).response.status).toBe(200);
    const head = await page(pub, `/global/${data.karel.entityId}`, { method: 'HEAD' });
    expect(head.response.status).toBe(200);
    expectPageHeaders(head.response);
    const post = await page(pub, `/global/${data.karel.entityId}`, { method: 'POST' });
    expect(post.response.status).toBe(405);
    expect(post.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('ignores query parameters it does not know (those browsers and link shorteners add)', async () => {
    const plain = await page(pub, `/global/${data.karel.entityId}`);
    const tagged = await page(pub, `/global/${data.karel.entityId}?utm_source=elza&fbclid=abc&page=x`);
    expect(tagged.response.status).toBe(200);
    expect(tagged.body).toBe(plain.body);
    const search = await page(pub, `/global?name=${data.marker}&utm_medium=email&gclid=1`);
    expect(search.response.status).toBe(200);
    expect(search.body).toContain(`Čapek ${data.marker}, Karel`);
  });

  it('escapes a hostile name and description everywhere they appear', async () => {
    const record = await page(pub, `/global/${data.hostile.entityId}`);
    const search = await page(pub, `/global?name=${encodeURIComponent(data.marker)}&type=PARTY_GROUP`);
    for (const { body } of [record, search]) {
      expect(body).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; &lt;b&gt;Bold&lt;/b&gt;');
      expect(body).not.toContain(HOSTILE_NAME);
      expect(body).not.toMatch(/<script|<img|onerror=alert\(1\)>|<b>Bold/i);
    }
    expect(titleOf(record.body)).toContain('&lt;script&gt;');
    // What a person typed is escaped too when the page shows it back.
    const typed = await page(pub, `/global?name=${encodeURIComponent('"><script>x</script>')}`);
    expect(typed.response.status).toBe(200);
    expect(typed.body).not.toContain('<script>x');
    expect(typed.body).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
  });
});

describe('the front door (public)', () => {
  it('finds records by a part of any of their names, within a type and a state, twenty a page', async () => {
    const all = await page(pub, `/global?name=${data.marker}`);
    expect(all.response.status).toBe(200);
    const total = 4 + data.fillers;
    expect(all.body).toContain(`${total} records; 1–20 shown.`);
    expect(all.body).toContain('<nav class="pager" aria-label="Result pages">');
    const next = hrefs(all.body).find((href) => href.includes('page=2'))!;
    expect(next).toBe(`/global?name=${data.marker}&page=2`);
    const second = await page(pub, next);
    expect(second.body).toContain(`${total} records; 21–${total} shown.`);
    expect(hrefs(second.body)).toContain(`/global?name=${data.marker}`);

    // Another name of Karel's finds him; case and accents aside.
    const other = await page(pub, `/global?name=${encodeURIComponent(`chapek ${data.marker.toLowerCase()}`)}`);
    expect(other.body).toContain(`href="/global/${data.karel.entityId}"`);
    expect(other.body).toContain('1 record; 1–1 shown.');

    const groups = await page(pub, `/global?name=${data.marker}&type=PARTY_GROUP`);
    expect(groups.body).toContain('2 records; 1–2 shown.');
    expect(groups.body).toContain('<option value="PARTY_GROUP" selected>');
    const replaced = await page(pub, `/global?name=${data.marker}&type=PARTY_GROUP&state=ERS_REPLACED`);
    expect(replaced.body).toContain('1 record; 1–1 shown.');
    expect(replaced.body).toContain(`href="/global/${data.replaced.entityId}"`);
    expect(replaced.body).toContain('<option value="ERS_REPLACED" selected>Replaced</option>');
    // "Any type" and "Any state" (empty values) ask for nothing.
    const any = await page(pub, `/global?name=${data.marker}&type=&state=`);
    expect(any.body).toContain(`${total} records; 1–20 shown.`);
    const none = await page(pub, `/global?name=${data.marker}-nobody`);
    expect(none.body).toContain('No record matches.');
  });

  it('shows a search the service refuses as a message beside the form, not an error', async () => {
    const { response, body } = await page(pub, '/global?name=ab');
    expect(response.status).toBe(200);
    expect(body).toContain('<p class="notice" role="alert">Give at least 3 characters of the name, or choose a type');
    expect(body).toContain('value="ab"');
    // With a type, the same text is looked up among that type's records.
    const narrowed = await page(pub, '/global?name=ab&type=PARTY_GROUP');
    expect(narrowed.response.status).toBe(200);
    expect(narrowed.body).not.toContain('role="alert"');
    expect(body).toContain('<form class="search"');
  });
});

describe('RECORD_PAGES=signed-in', () => {
  const origin = () => signedIn.baseUrl;
  const signIn = (token: string, next: string, headers: Record<string, string> = { origin: origin() }) =>
    page(signedIn, '/global/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ token, next }).toString(),
    });

  it('sends a person without a session to sign in, then back to the record, on any API process', async () => {
    const path = `/global/${data.karel.entityId}?utm_source=elza`;
    const first = await page(signedIn, path);
    expect(first.response.status).toBe(303);
    const signInPage = first.response.headers.get('location')!;
    expect(signInPage).toBe(`/global/sign-in?next=${encodeURIComponent(path)}`);

    const form = await page(signedIn, signInPage);
    expect(form.response.status).toBe(200);
    expectPageHeaders(form.response);
    expect(form.body).toContain(`<input type="hidden" name="next" value="${path.replace('&', '&amp;')}">`);
    expect(form.body).toContain('<form class="sign-in" method="post" action="/global/sign-in">');

    const signedInResponse = await signIn(TEST_TOKENS.read, path);
    expect(signedInResponse.response.status).toBe(303);
    expect(signedInResponse.response.headers.get('location')).toBe(path);
    const setCookie = signedInResponse.response.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^records_session=[\w-]+\.\d+\.[\w-]+; Path=\/global; Max-Age=28800; HttpOnly; SameSite=Lax$/);
    expect(setCookie).not.toContain(TEST_TOKENS.read);
    const cookie = setCookie.split(';')[0]!;

    for (const harness of [signedIn, signedInOther]) {
      const record = await page(harness, path, { headers: { cookie } });
      expect(record.response.status).toBe(200);
      expect(record.body).toContain(`<h1>Čapek ${data.marker}, Karel</h1>`);
      expect(record.body).toContain('Signed in as test-reader');
      expect(record.body).toContain('<form method="post" action="/global/sign-out">');
      const front = await page(harness, `/global?name=${data.marker}`, { headers: { cookie } });
      expect(front.response.status).toBe(200);
    }

    // A tampered or foreign cookie is no session.
    const [name, value] = cookie.split('=') as [string, string];
    const [key, expires, signature] = value.split('.') as [string, string, string];
    for (const forged of [`${key}.${Number(expires) + 3600}.${signature}`, `${key}.${expires}.${'A'.repeat(43)}`, 'garbage']) {
      expect((await page(signedIn, path, { headers: { cookie: `${name}=${forged}` } })).response.status, forged).toBe(303);
    }

    // Signing out ends the session in the browser.
    const out = await page(signedIn, '/global/sign-out', {
      method: 'POST',
      headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(out.response.status).toBe(303);
    expect(out.response.headers.get('set-cookie')).toMatch(/^records_session=; Path=\/global; Max-Age=0; HttpOnly; SameSite=Lax$/);
  });

  it('refuses a token without the read permission, and one it does not know, without a session', async () => {
    const writeOnly = await signIn(WRITE_ONLY_TOKEN, '/global');
    expect(writeOnly.response.status).toBe(403);
    expect(writeOnly.response.headers.get('set-cookie')).toBeNull();
    expect(writeOnly.body).toContain('does not have the read permission');
    const unknown = await signIn('not-a-token-of-this-service', '/global');
    expect(unknown.response.status).toBe(401);
    expect(unknown.response.headers.get('set-cookie')).toBeNull();
    // Sent as a bearer token, the write-only token is refused too; a reader's is accepted as it is.
    expect(
      (await page(signedIn, `/global/${data.karel.entityId}`, { headers: { authorization: `Bearer ${WRITE_ONLY_TOKEN}` } })).response
        .status,
    ).toBe(403);
    const bearer = await page(signedIn, `/global/${data.karel.entityId}`, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } });
    expect(bearer.response.status).toBe(200);
    expect(bearer.body).not.toContain('action="/global/sign-out"');
  });

  it('takes a sign-in form only from its own pages (Origin), and sends a person back only to a record page', async () => {
    for (const headers of [{}, { origin: 'http://evil.example' }, { origin: 'null' }] as Array<Record<string, string>>) {
      const refused = await signIn(TEST_TOKENS.read, '/global', headers);
      expect(refused.response.status, JSON.stringify(headers)).toBe(403);
      expect(refused.response.headers.get('set-cookie')).toBeNull();
    }
    for (const next of ['https://evil.example/', '//evil.example/global', '/api/v2/entities/1', '/global\\@evil']) {
      const signedInResponse = await signIn(TEST_TOKENS.read, next);
      expect(signedInResponse.response.headers.get('location'), next).toBe('/global');
    }
    const out = await page(signedIn, '/global/sign-out', { method: 'POST', headers: { origin: 'http://evil.example' } });
    expect(out.response.status).toBe(403);
  });

  it('sends a person back to an address with characters beyond Latin-1 percent-encoded, not a 500', async () => {
    const next = `/global?name=\u010capek\u20ac\u{1d11e}`;
    const encoded = '/global?name=%C4%8Capek%E2%82%AC%F0%9D%84%9E';
    const signedInResponse = await signIn(TEST_TOKENS.read, next);
    expect(signedInResponse.response.status, signedInResponse.body).toBe(303);
    expect(signedInResponse.response.headers.get('location')).toBe(encoded);
    // Already signed in (here by a bearer token), the sign-in page sends the person on at once.
    const onward = await page(signedIn, `/global/sign-in?next=${encodeURIComponent(next)}`, {
      headers: { authorization: `Bearer ${TEST_TOKENS.read}` },
    });
    expect(onward.response.status, onward.body).toBe(303);
    expect(onward.response.headers.get('location')).toBe(encoded);
  });

  it('behind a proxy, takes the form from the PUBLIC_HOST origin (https, its host and port) and marks the cookie Secure', async () => {
    const post = (origin: string) =>
      page(signedInOther, '/global/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ token: TEST_TOKENS.read, next: '/global' }).toString(),
      });
    const proxied = await post('https://records.example.org:8443');
    expect(proxied.response.status).toBe(303);
    expect(proxied.response.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    // The host name alone is not the origin: another scheme or another port is another site.
    for (const origin of [
      'https://records.example.org.evil.example:8443',
      'https://records.example.org',
      'http://records.example.org:8443',
      'https://records.example.org:9443',
    ]) {
      expect((await post(origin)).response.status, origin).toBe(403);
    }
  });

  it('believes X-Forwarded-Host and -Proto (TRUST_PROXY) only from a peer in TRUSTED_PROXIES', async () => {
    const proxyEnv = {
      RECORD_PAGES: 'signed-in',
      ANONYMOUS_READ_RATE_LIMIT: '0',
      AUTH_TOKENS: TOKENS,
      FORCE_KEY_SECRET,
      TRUST_PROXY: 'true',
    };
    // The tests call from 127.0.0.1: a proxy there, and a proxy elsewhere.
    const behindProxy = await startHarness({ worker: false, env: { ...proxyEnv, TRUSTED_PROXIES: '127.0.0.1' } });
    const pastProxy = await startHarness({ worker: false, env: { ...proxyEnv, TRUSTED_PROXIES: '192.0.2.1' } });
    try {
      const post = (harness: Harness) =>
        page(harness, '/global/sign-in', {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'https://records.example.net',
            'x-forwarded-host': 'records.example.net',
            'x-forwarded-proto': 'https',
          },
          body: new URLSearchParams({ token: TEST_TOKENS.read, next: '/global' }).toString(),
        });
      const proxied = await post(behindProxy);
      expect(proxied.response.status).toBe(303);
      expect(proxied.response.headers.get('set-cookie')).toMatch(/; Secure$/);
      const direct = await post(pastProxy);
      expect(direct.response.status).toBe(403);
      expect(direct.response.headers.get('set-cookie')).toBeNull();
    } finally {
      await behindProxy.close();
      await pastProxy.close();
    }
  });
});

describe('RECORD_PAGES=off', () => {
  it('answers every /global path with a 404 page, with or without credentials', async () => {
    for (const path of [
      '/global',
      `/global/${data.karel.entityId}`,
      '/global/sign-in',
      '/global/assets/pages.css',
      `/global/${data.karel.entityId}/revisions`,
    ]) {
      const anonymous = await page(off, path);
      expect(anonymous.response.status, path).toBe(404);
      expect(anonymous.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const withToken = await page(off, path, { headers: { authorization: `Bearer ${TEST_TOKENS.admin}` } });
      expect(withToken.response.status, path).toBe(404);
    }
  });

  it('leaves the sign-in pages out in public mode too', async () => {
    expect((await page(pub, '/global/sign-in')).response.status).toBe(404);
  });
});

describe('RECORD_PAGES=signed-in on a service opened with AUTH_DISABLED', () => {
  it('shows the pages to everyone, as every other route is open', async () => {
    const open = await startHarness({ worker: false, env: { RECORD_PAGES: 'signed-in', AUTH_DISABLED: 'true' } });
    try {
      expect((await page(open, `/global/${data.karel.entityId}`)).response.status).toBe(200);
      expect((await page(open, '/global/sign-in')).response.status).toBe(303);
    } finally {
      await open.close();
    }
  });
});

describe('anonymous readers of public pages', () => {
  it('are limited per source address, with a 429 page and Retry-After; readers with credentials are not counted', async () => {
    await limited.sql(`delete from submission_rate where principal like 'anonymous-read:%'`);
    const statuses: number[] = [];
    let refused: { response: Response; body: string } | undefined;
    for (let request = 0; request <= ANONYMOUS_LIMIT && refused === undefined; request += 1) {
      const answer = await page(limited, `/global/${data.karel.entityId}`);
      statuses.push(answer.response.status);
      if (answer.response.status === 429) refused = answer;
    }
    expect(statuses.slice(0, -1).every((status) => status === 200)).toBe(true);
    expect(refused, `statuses ${statuses.join(',')}`).toBeDefined();
    expectPageHeaders(refused!.response);
    expect(Number(refused!.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused!.body).toContain('Too many requests');
    const withToken = await page(limited, `/global/${data.karel.entityId}`, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } });
    expect(withToken.response.status).toBe(200);
    await limited.sql(`delete from submission_rate where principal like 'anonymous-read:%'`);
  });
});

describe('a session cookie', () => {
  const registry = TokenRegistry.parse(TOKENS, 'test');
  const signedAt = new Date('2026-01-01T00:00:00Z');
  const later = (hours: number) => new Date(signedAt.getTime() + hours * 3600_000);

  it("names its token's principal until it expires, under its own secret alone, and only while the token is configured", () => {
    const signer = sessionSigner(registry, SESSION_SECRET, 8);
    const { value, maxAgeSeconds } = signer.issue(TEST_TOKENS.read, signedAt);
    expect(maxAgeSeconds).toBe(8 * 3600);
    expect(signer.principalOf(value, later(7.9))?.name).toBe('test-reader');
    expect(signer.principalOf(value, later(8))).toBeUndefined();
    expect(sessionSigner(registry, `${SESSION_SECRET}-other`, 8).principalOf(value, later(1))).toBeUndefined();
    const withoutReader = TokenRegistry.parse(
      JSON.stringify(JSON.parse(TOKENS).filter((entry: { name: string }) => entry.name !== 'test-reader')),
      'test',
    );
    expect(sessionSigner(withoutReader, SESSION_SECRET, 8).principalOf(value, later(1))).toBeUndefined();
    expect(signer.principalOf(undefined, later(1))).toBeUndefined();
  });

  it("is signed with RECORD_PAGES_SESSION_SECRET, else with a key of its own derived from the force keys' secret", () => {
    const derived = sessionSecret({ RECORD_PAGES_SESSION_SECRET: undefined, forceKeySecret: FORCE_KEY_SECRET });
    expect(derived).not.toContain(FORCE_KEY_SECRET);
    expect(sessionSecret({ RECORD_PAGES_SESSION_SECRET: undefined, forceKeySecret: FORCE_KEY_SECRET })).toBe(derived);
    expect(sessionSecret({ RECORD_PAGES_SESSION_SECRET: SESSION_SECRET, forceKeySecret: FORCE_KEY_SECRET })).toBe(SESSION_SECRET);
    expect(sessionSecret({ RECORD_PAGES_SESSION_SECRET: undefined, forceKeySecret: `${FORCE_KEY_SECRET}-other` })).not.toBe(derived);
  });
});
