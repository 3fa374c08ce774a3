// Each process reads its own settings: a worker is not stopped by a setting
// only the API reads, and still refuses a wrong setting of its own.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadWorkerConfig } from '../../config.ts';

const secret = { FORCE_KEY_SECRET: 'process-settings-test-secret-0123456789' };
const wrongApiSetting = { ...secret, API_KEY_CLOCK_SKEW_SECONDS: 'soon', TRUST_PROXY: 'true' };

describe('settings per process', () => {
  it('starts a worker whatever the API settings say, which the API refuses', () => {
    expect(() => loadConfig(wrongApiSetting)).toThrow(ConfigError);
    const config = loadWorkerConfig(wrongApiSetting);
    expect(config.WORKER_LANES).toEqual(['bulk', 'interactive']);
    expect(Object.keys(config)).not.toContain('API_KEY_CLOCK_SKEW_SECONDS');
  });

  it("refuses a worker's own wrong setting, and one of every process", () => {
    expect(() => loadWorkerConfig({ ...secret, WORKER_LANES: 'fast' })).toThrow(/WORKER_LANES/);
    expect(() => loadWorkerConfig({ ...secret, TEMPORAL_TLS_CERT_FILE: '/cert.pem' })).toThrow(/TEMPORAL_TLS_KEY_FILE/);
  });

  it('derives the same Temporal address and export folder as the API', () => {
    const env = { ...secret, TEMPORAL_PORT: '7999', DATA_DIR: '/srv/records' };
    const { temporalAddress, exportDir } = loadConfig(env);
    expect(loadWorkerConfig(env)).toMatchObject({ temporalAddress, exportDir });
  });
});
