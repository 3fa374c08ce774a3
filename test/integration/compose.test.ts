// docker-compose.yml, read as Docker Compose would read it (YAML with merge
// keys, ${VAR:-default} and ${VAR:?message} interpolation). No Docker engine
// runs here, so this checks what can be checked without one: the services and
// their order, pinned images, health checks, that API and worker can run as N
// replicas, that every file the stack mounts or runs is in the repository, and
// that the environment the API and workers get is a valid configuration.
import { WORKER_NODE_FLAGS } from '../../worker/node-flags.ts';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TokenRegistry } from '../../api/auth/tokens.ts';
import { loadConfig } from '../../config.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  container_name?: string;
  hostname?: string;
  ports?: string[];
  expose?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
  networks?: Record<string, { ipv4_address?: string }>;
  stop_grace_period?: string;
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { file: string }>;
  volumes?: Record<string, unknown>;
}

/** Compose's interpolation: a default where one is given, a stand-in value for required variables. */
function interpolate(text: string): string {
  return text.replace(
    /\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g,
    (_match, name: string, fallback: string | undefined) => fallback ?? `stand-in-${name.toLowerCase()}`,
  );
}

const compose = parse(interpolate(readFileSync(new URL('docker-compose.yml', `file://${ROOT}`), 'utf8')), { merge: true }) as Compose;
const { services } = compose;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const imageTag = (image: string) => image.slice(image.lastIndexOf(':') + 1);
const imageName = (image: string) => image.slice(0, image.lastIndexOf(':'));
/** Host side of a bind mount (./path:/container[:ro]), or undefined for a named volume. */
const hostPath = (volume: string) => (volume.startsWith('./') ? volume.split(':')[0] : undefined);

describe('docker-compose.yml', () => {
  it('has the whole stack: PostgreSQL, Temporal (schema job, server, namespace job, UI), migrations, workers, APIs and their load balancer', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'api',
        'load-balancer',
        'migrate',
        'postgres',
        'temporal',
        'temporal-namespace',
        'temporal-schema',
        'temporal-ui',
        'tls-proxy',
        'worker',
        'worker-interactive',
      ].sort(),
    );
  });

  it('pins every image to a version, uses no deprecated temporalio/auto-setup, and keeps admin-tools at the server version', () => {
    for (const [name, { image }] of Object.entries(services)) {
      if (image === undefined) continue;
      expect(imageName(image), name).not.toBe('temporalio/auto-setup');
      expect(image, name).toContain(':');
      expect(imageTag(image), name).toMatch(/^\d+\.\d+(\.\d+)?$/);
    }
    const server = imageTag(service('temporal').image!);
    expect(imageName(service('temporal').image!)).toBe('temporalio/server');
    for (const job of ['temporal-schema', 'temporal-namespace']) {
      expect(imageName(service(job).image!), job).toBe('temporalio/admin-tools');
      expect(imageTag(service(job).image!), `${job}: schema tools must match the server`).toBe(server);
    }
  });

  it('sets Temporal up in one-shot jobs the server and the service wait for', () => {
    expect(service('temporal').depends_on).toMatchObject({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    expect(service('temporal-namespace').depends_on).toMatchObject({ temporal: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker']) {
      expect(service(name).depends_on, name).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        'temporal-namespace': { condition: 'service_completed_successfully' },
      });
    }
    expect(service('temporal-schema').environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
    expect(service('temporal').environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
  });

  it('runs only scripts and files that are in the repository, and the scripts parse', () => {
    for (const [name, { volumes = [], command = [] }] of Object.entries(services)) {
      for (const volume of volumes) {
        const host = hostPath(volume);
        if (host !== undefined) expect(existsSync(`${ROOT}/${host}`), `${name}: ${volume}`).toBe(true);
      }
      // node [flags] file: the file is the first argument that is not a flag.
      if (command[0] === 'node')
        expect(existsSync(`${ROOT}/${command.slice(1).find((arg) => !arg.startsWith('--'))}`), `${name}: ${command.join(' ')}`).toBe(true);
    }
    for (const job of ['temporal-schema', 'temporal-namespace']) {
      const { command = [], volumes = [] } = service(job);
      const mount = volumes.map((volume) => volume.split(':')).find(([, container]) => command[0]!.startsWith(`${container}/`));
      expect(mount, `${job} runs ${command[0]} from a mounted folder`).toBeDefined();
      const script = `${ROOT}/${mount![0]}/${command[0]!.slice(mount![1]!.length + 1)}`;
      expect(existsSync(script), script).toBe(true);
      execFileSync('sh', ['-n', script]);
    }
  });

  it('checks the health of PostgreSQL, Temporal, every API and every worker', () => {
    for (const name of ['postgres', 'temporal', 'api', 'worker']) expect(service(name).healthcheck?.test.length, name).toBeGreaterThan(0);
    expect(service('load-balancer').depends_on).toMatchObject({ api: { condition: 'service_healthy' } });
    expect(service('api').healthcheck!.test.join(' ')).toContain(`:${service('api').environment!.PORT}/health`);
    expect(service('worker').healthcheck!.test.join(' ')).toContain(`:${service('worker').environment!.WORKER_METRICS_PORT}/`);
  });

  it('lets API and worker scale to N replicas: no container name, hostname or host port of their own', () => {
    for (const name of ['api', 'worker']) {
      const { container_name, hostname, ports, deploy } = service(name);
      expect(container_name, name).toBeUndefined();
      expect(hostname, name).toBeUndefined();
      expect(ports, `${name}: a fixed host port allows one replica per host`).toBeUndefined();
      expect(deploy?.replicas, name).toBeGreaterThanOrEqual(2);
    }
    // Clients reach the APIs through the balancer, which finds the replicas by the service's name.
    expect(service('load-balancer').ports).toEqual([`127.0.0.1:${service('api').environment!.PORT}:8080`]);
    const nginx = readFileSync(`${ROOT}/deploy/nginx/nginx.conf`, 'utf8');
    expect(nginx).toMatch(new RegExp(`server api:${service('api').environment!.PORT} resolve;`));
    expect(nginx).toContain('resolver 127.0.0.11');
  });

  it('starts workers with the Node flags npm start gives them, in the compose file and in npm run worker', () => {
    expect(service('worker').command).toEqual(['node', ...WORKER_NODE_FLAGS, 'worker/main.ts']);
    const scripts = (JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.worker).toBe(['node', ...WORKER_NODE_FLAGS, 'worker/main.ts'].join(' '));
  });

  it('runs a worker service per lane, as npm start runs a process per lane, alike but for the lane', () => {
    const [bulk, interactive] = [service('worker'), service('worker-interactive')];
    expect([loadConfig({ ...bulk.environment }).WORKER_LANES, loadConfig({ ...interactive.environment }).WORKER_LANES]).toEqual([
      ['bulk'],
      ['interactive'],
    ]);
    expect(interactive.command).toEqual(bulk.command);
    expect(interactive.volumes).toEqual(bulk.volumes);
    expect(interactive.healthcheck).toEqual(bulk.healthcheck);
    expect({ ...interactive.environment, WORKER_LANES: 'bulk' }).toEqual(bulk.environment);
  });

  it("gives every worker longer to stop than the worker's own shutdown grace, so a running apply commits before Docker's SIGKILL", () => {
    const seconds = (period: string | undefined) => {
      const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(period ?? '');
      return match ? Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0) : 0;
    };
    for (const name of ['worker', 'worker-interactive']) {
      const grace = loadConfig({ ...service(name).environment }).WORKER_SHUTDOWN_GRACE_SECONDS;
      expect(grace, name).toBeGreaterThanOrEqual(120);
      expect(seconds(service(name).stop_grace_period), name).toBeGreaterThan(grace);
    }
  });

  it('gives API and workers one configuration: the same database, Temporal, queue, force-key secret and shared export volume', () => {
    const api = service('api');
    const worker = service('worker');
    for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'FORCE_KEY_SECRET', 'EXPORT_DIR']) {
      expect(api.environment![key], key).toBeDefined();
      expect(worker.environment![key], key).toBe(api.environment![key]);
    }
    const exportMount = `exports:${api.environment!.EXPORT_DIR}`;
    expect(api.volumes).toContain(exportMount);
    expect(worker.volumes).toContain(exportMount);
    expect(compose.volumes).toHaveProperty('exports');
    expect(service('temporal-namespace').environment!.TEMPORAL_NAMESPACE).toBe(api.environment!.TEMPORAL_NAMESPACE);
  });

  it('hands the API and worker an environment the service accepts, and the API a token file in the documented format', () => {
    for (const name of ['api', 'worker', 'migrate']) {
      const config = loadConfig({ ...service(name).environment });
      expect(config.temporalAddress, name).toBe('temporal:7233');
      expect(config.HOST, name).toBe(name === 'migrate' ? '127.0.0.1' : '0.0.0.0');
    }
    const api = service('api');
    expect(api.secrets).toEqual(['tokens']);
    expect(api.environment!.AUTH_TOKENS_FILE).toBe('/run/secrets/tokens');
    expect(compose.secrets?.tokens?.file).toBe('./deploy/tokens.json');
    // Only the TLS proxy's X-Forwarded-For is believed: TRUSTED_PROXIES is its fixed address, in the network's subnet.
    const proxyAddress = service('tls-proxy').networks?.default?.ipv4_address;
    expect(loadConfig({ ...api.environment }).TRUSTED_PROXIES).toEqual([proxyAddress]);
    const example = readFileSync(`${ROOT}/deploy/tokens.example.json`, 'utf8');
    expect(TokenRegistry.parse(example, 'deploy/tokens.example.json').size).toBeGreaterThan(0);
  });
});
