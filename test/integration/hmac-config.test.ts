// The pure parts of HMAC API keys: the service's canonical string against the
// tests' independent signer, and the refusal of bad key configuration at start.
// (The replay guard lives in PostgreSQL: hmac.test.ts and shared-guards.test.ts.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { canonicalString } from '../../api/auth/nda-hmac.ts';
import { ConfigError, loadConfig } from '../../config.ts';
import { elzaDataToHash } from '../support/nda-signer.ts';

describe('the independent signer', () => {
  it("builds the issue's example string, and the service's canonical string agrees on tricky URLs", () => {
    const example = elzaDataToHash({
      host: '127.0.0.1',
      method: 'GET',
      pathAndQuery: '/api/v2/updates?fromTransId=a&toTransId=b&page=1&pageSize=10',
      date: '20261123160502',
    });
    expect(example).toBe('127.0.0.1GET/api/v2/updatesfromTransId=a&toTransId=b&page=1&pageSize=1020261123160502');
    for (const pathAndQuery of [
      '/',
      '/api/v2/batches',
      '/api/v1/entities/Nov%C3%A1k%2Fx+y',
      '/a//b/',
      '/x?q=Nov%C3%A1k+a%2Bb%26c%3Dd&flag&=&e=',
      '/x?q=100%25&r=%zz%4',
      '/x?',
    ]) {
      const [path, query] = pathAndQuery.includes('?')
        ? [pathAndQuery.slice(0, pathAndQuery.indexOf('?')), pathAndQuery.slice(pathAndQuery.indexOf('?') + 1)]
        : [pathAndQuery, ''];
      const parts = { host: 'records.example.org', method: 'POST', date: '20261123160502' };
      expect(canonicalString({ ...parts, rawPath: path, rawQuery: query }), pathAndQuery).toBe(elzaDataToHash({ ...parts, pathAndQuery }));
    }
    expect(elzaDataToHash({ host: 'h', method: 'GET', pathAndQuery: '/e/Nov%C3%A1k%2Fx+y?q=a+b%2Bc', date: 'D' })).toBe(
      'hGET/e/Novák/x+yq=a b+cD',
    );
  });
});

describe('API key configuration', () => {
  const base = { DATA_DIR: '/nonexistent', FORCE_KEY_SECRET: 'f'.repeat(32) };
  const secret = 's'.repeat(40);
  const entry = (extra: Record<string, unknown> = {}) => ({
    name: 'elza',
    keyId: 'elza-1',
    secret,
    permissions: ['read', 'write'],
    ...extra,
  });
  const refusal = (keys: unknown) => {
    try {
      loadConfig({ ...base, API_KEYS: typeof keys === 'string' ? keys : JSON.stringify(keys) });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('parses valid keys, whose secrets print as [redacted]', () => {
    const config = loadConfig({
      ...base,
      API_KEYS: JSON.stringify([entry(), entry({ name: 'cli', keyId: 'cli-1', permissions: ['admin'] })]),
    });
    expect(config.apiKeys.map(({ name, keyId, permissions }) => ({ name, keyId, permissions }))).toEqual([
      { name: 'elza', keyId: 'elza-1', permissions: ['read', 'write'] },
      { name: 'cli', keyId: 'cli-1', permissions: ['admin'] },
    ]);
    expect(config.apiKeys[0]!.secret.reveal()).toBe(secret);
    expect(JSON.stringify(config.apiKeys)).not.toContain(secret);
    expect(inspect(config, { depth: 10 })).not.toContain(secret);
    expect(`${config.apiKeys[0]!.secret}`).toBe('[redacted]');
  });

  it('reads API_KEYS_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entity-records-keys-'));
    try {
      const file = join(dir, 'keys.json');
      writeFileSync(file, JSON.stringify([entry()]));
      expect(loadConfig({ ...base, API_KEYS_FILE: file }).apiKeys).toHaveLength(1);
      expect(() => loadConfig({ ...base, API_KEYS_FILE: join(dir, 'missing.json') })).toThrow(/API_KEYS_FILE .*missing\.json/);
      expect(() => loadConfig({ ...base, API_KEYS_FILE: file, API_KEYS: JSON.stringify([entry()]) })).toThrow(/not both/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start on a short secret, a duplicate keyId or a malformed entry, naming the entry and never its secret', () => {
    const short = refusal([entry(), entry({ name: 'short', keyId: 'short-1', secret: 'x'.repeat(31) })]);
    expect(short).toMatch(/API_KEYS entry 2 \(name "short", keyId "short-1"\): secret: at least 32 characters/);
    expect(short).not.toContain('x'.repeat(31));

    const duplicate = refusal([entry(), entry({ name: 'other' })]);
    expect(duplicate).toMatch(/entry 2 \(name "other", keyId "elza-1"\): keyId is already used by entry 1/);
    expect(duplicate).not.toContain(secret);

    const malformed: Array<[unknown, RegExp]> = [
      ['not json', /API_KEYS is not valid JSON/],
      [{ name: 'x' }, /must be a JSON array/],
      [[entry({ permissions: ['read', 'fly'] })], /entry 1 .*permissions\.1/],
      [[entry({ permissions: [] })], /entry 1 .*permissions/],
      [[entry({ keyId: 'has,comma' })], /entry 1 .*keyId: printable ASCII without spaces or commas/],
      [[entry({ keyId: undefined })], /entry 1 \(name "elza"\): keyId/],
      [[entry({ name: '' })], /entry 1 .*name/],
      [[entry({ secret: 1234567890123456 })], /entry 1 .*secret/],
      [[entry({ secrets: 'typo' })], /entry 1 .*secrets/],
      [[null], /entry 1: /],
    ];
    for (const [keys, message] of malformed) {
      const text = refusal(keys);
      expect(text, JSON.stringify(keys)).toMatch(message);
      expect(text).not.toContain(secret);
    }
  });

  it('takes singleWriter on a key, and refuses it with the replay guard off', () => {
    const keys = JSON.stringify([entry({ singleWriter: true })]);
    expect(loadConfig({ ...base, API_KEYS: keys }).apiKeys[0]!.singleWriter).toBe(true);
    expect(() => loadConfig({ ...base, API_KEYS: keys, API_KEY_REPLAY_GUARD: 'false' })).toThrow(
      /API_KEY_REPLAY_GUARD=false cannot hold single-writer keys \(elza\)/,
    );
  });

  it('refuses a PUBLIC_HOST that is not a host name', () => {
    expect(() => loadConfig({ ...base, PUBLIC_HOST: 'https://records.example.org/path' })).toThrow(/PUBLIC_HOST/);
    expect(loadConfig({ ...base, PUBLIC_HOST: 'Records.Example.org:443' }).PUBLIC_HOST).toBe('records.example.org');
  });
});
