import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { addressList } from './settings/address-list.ts';
import { parseApiKeys, type ApiKey } from './settings/api-key-list.ts';
import { hostnameOf } from './settings/host-name.ts';
import { persistentSecret } from './secrets.ts';

// The whole environment, parsed once at start. A bad value stops the process
// with one clear line instead of surfacing later as a strange failure.

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

// Settings grouped by the process that reads them, each documented by its
// comment: docs/settings.md is generated from these comments and schemas
// (npm run settings:reference; lint fails when it differs). "Tuning knob"
// marks a setting that trades throughput against memory or load and has a
// measured default; DEPLOYMENT_SETTINGS below names those every deployment
// sets; the others say what the service does, with defaults that hold.

/** Every process: where the database, Temporal and the data live, and logging. */
const everyProcess = {
  /** The address the API (and the worker's /metrics) binds. */
  HOST: z.string().default('127.0.0.1'),
  /** PostgreSQL; the database is created when missing. */
  DATABASE_URL: z.url().default('postgres://localhost:5432/entity_records'),
  /** The Temporal frontend (host:port); unset, `npm start` runs its own dev server on TEMPORAL_PORT. */
  TEMPORAL_ADDRESS: z.string().optional(),
  /** The Temporal namespace of every workflow. */
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** The workers' task queue; the interactive and export lanes are `<queue>-interactive` and `<queue>-export`. */
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('entity-records'),
  /** The Temporal dev server `npm start` runs, and the default TEMPORAL_ADDRESS. */
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  /** The Web UI port of the dev server `npm start` runs. */
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  /** TLS to Temporal (temporal/client/connection.ts): on by itself, or implied by a CA, a client certificate or an API key. */
  TEMPORAL_TLS: booleanFromEnv.default(false),
  /** The CA that signed Temporal's certificate (PEM), when not a public one. */
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  /** A client certificate (PEM) for mutual TLS to Temporal; goes with TEMPORAL_TLS_KEY_FILE. */
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  /** The client certificate's key (PEM). */
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  /** The name Temporal's certificate is checked against, when not the address's host. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** OpenTelemetry tracing (metrics/tracing.ts): off unless a collector's OTLP/HTTP endpoint is named, e.g. http://otel-collector:4318. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** An API key for Temporal Cloud (implies TLS). */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** A file holding that API key (a mounted secret). */
  TEMPORAL_API_KEY_FILE: z.string().min(1).optional(),
  /** The Temporal Web UI's address, for links to a job's workflow; default: the Temporal host on TEMPORAL_UI_PORT. */
  TEMPORAL_UI_URL: z.url().optional(),
  /** Where the embedded Temporal's SQLite file, logs and generated secrets live. */
  DATA_DIR: z.string().min(1).default('.data'),
  /** pino's level. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The secret of forceKeys (the API's test batches and the worker's applies); default: one generated in DATA_DIR. */
  FORCE_KEY_SECRET: z.string().min(16).optional(),
  /** Where export files are written (worker) and served from (API); default DATA_DIR/exports. */
  EXPORT_DIR: z.string().min(1).optional(),
  /** How far a restore (npm run db:restore) moves the record numbers past the backup's highest: more than the registry can create between a backup and its restore. */
  RESTORE_RECORD_NUMBER_GAP: z.coerce.number().int().min(0).default(10_000_000),
  /**
   * A batch is small (the interactive lane) when it has at most this many
   * changes and at most SMALL_BATCH_MAX_BYTES of body; both are known when it
   * is submitted. SMALL_BATCH_MAX_BYTES=0 sends every batch to the bulk lane.
   */
  SMALL_BATCH_MAX_CHANGES: z.coerce.number().int().min(0).default(10),
  /** See SMALL_BATCH_MAX_CHANGES: the body size within which a batch is small. */
  SMALL_BATCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 * 1024),
};

/** The API processes. */
const api = {
  /** The API's port. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * API processes on PORT (node:cluster): one per core by default. 1 runs the
   * API as one process without a cluster primary.
   */
  API_PROCESSES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(() => availableParallelism()),
  /**
   * Tuning knob: answer a plain GET of a current record before Koa's chain
   * (api/reads/entity-get.ts, about a third less API CPU per GET).
   * `false` sends it through the chain like every request: the prototype
   * `node bench/profile-get.ts -- --through-koa` measures.
   */
  API_DIRECT_ENTITY_GET: booleanFromEnv.default(true),
  /** Set by the API's cluster primary for each process it forks, never by an operator: slot 0 sweeps stranded jobs. */
  API_PROCESS_SLOT: z.coerce.number().int().min(0).optional(),
  /**
   * Largest batch body. The API validates and stores a body as it arrives and
   * the worker applies it in flat memory, so neither grows with this; it
   * bounds the database and the time of one upload.
   */
  BATCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024 * 1024),
  /**
   * Tuning knob: batch uploads (POST of a batch or test batch) one API process
   * reads, validates and stores at once; the rest wait. One principal holds at
   * most half of them (rounded up), so 2 or more keep a slot for others.
   */
  UPLOAD_MAX_CONCURRENT: z.coerce.number().int().positive().default(2),
  /** Uploads waiting for a slot in one API process (large and small each) before a new one is answered 503 with Retry-After. */
  UPLOAD_MAX_WAITING: z.coerce.number().int().min(0).default(64),
  /** Uploads one principal has in progress at once across every API process; beyond, 429 with Retry-After. 0: no limit. */
  UPLOADS_PER_PRINCIPAL: z.coerce.number().int().min(0).default(8),
  /** An upload whose body sends nothing for this long is cut; nothing of it is stored. */
  UPLOAD_IDLE_SECONDS: z.coerce.number().int().positive().default(60),
  /**
   * The slowest an upload's body may arrive, averaged over each window of
   * UPLOAD_MIN_RATE_WINDOW_SECONDS spent waiting for it (the first window is
   * its grace); below, it is cut (400) and nothing of it is stored. 8 KiB/s is
   * 64 kbit/s: an eighth of a 512 kbit/s ADSL uplink. 0: no minimum.
   */
  UPLOAD_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(8192),
  /** The window of UPLOAD_MIN_BYTES_PER_SECOND, and the grace an upload gets before its rate is judged. */
  UPLOAD_MIN_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(30),
  /**
   * A request refused before its body was read is answered, then the rest of
   * its body is read and thrown away for at most this long (and at most
   * BATCH_MAX_BYTES), so a client that writes its whole body before reading
   * sees the refusal; then the connection is closed. 0: closed at once.
   */
  REFUSED_BODY_DRAIN_SECONDS: z.coerce.number().int().min(0).default(60),
  /**
   * Tuning knob: worker threads of one API process that validate uploads
   * against the schema (engine/validation/pool.ts), off the event loop that
   * answers every other request. A thread validates many uploads at once,
   * each in slices, and holds a libxml2 heap of its own (recycled past 256 MiB).
   */
  VALIDATION_THREADS: z.coerce.number().int().positive().max(64).default(1),
  /** Largest test batch (422 TooManyChanges above). */
  TEST_BATCH_MAX_CHANGES: z.coerce.number().int().positive().default(1000),
  /** Above this many changed records, /updates/from answers the summary only. */
  UPDATES_FROM_MAX: z.coerce.number().int().positive().default(10_000),
  /** Largest page of the change feed (v2 and v1). */
  UPDATES_MAX_PAGE_SIZE: z.coerce.number().int().positive().default(50_000),
  /** Largest page of a search (v2 and v1). */
  SEARCH_MAX_PAGE_SIZE: z.coerce.number().int().positive().default(1000),
  /** Each statement of a search is cancelled after this long (503 ServiceUnavailable, reason SearchTimeout); 0: no limit. */
  SEARCH_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(3000),
  /**
   * Tuning knob: rows a search counts at most. A condition matching more
   * values than this, or a total above it, is refused as too broad (400,
   * reason SearchTooBroad), found by counting, never by the planner's
   * estimate. 0: no cap (the statement timeout still applies).
   */
  SEARCH_MAX_MATCHES: z.coerce.number().int().min(0).default(1_000_000),
  /**
   * Days the layout of a paged feed range (where each page starts) is kept in
   * PostgreSQL. A page of a range nobody paged within this time costs one
   * pass over the range again, then its next pages cost their own size.
   */
  FEED_RANGE_RETENTION_DAYS: z.coerce.number().positive().default(7),
  /** Tuning knob: records between two anchors of a feed range's layout; a page reads at most this many records it does not send. */
  FEED_RANGE_ANCHOR_EVERY: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  /** Most identifiers in one export request. */
  EXPORT_MAX_IDS: z.coerce.number().int().positive().default(100_000),
  /** Exports one principal has ACCEPTED or RUNNING at once, counted across every API process; beyond, a start is answered 429 with Retry-After. 0: no limit. */
  EXPORTS_RUNNING_PER_PRINCIPAL: z.coerce.number().int().min(0).default(2),
  /**
   * An export start asking for exactly what an export of the last this many
   * seconds asked for (kind, fromTransId, ids; from any principal) gets that
   * export while it runs or its file is kept; its upToTransId says how old it
   * is. 0: every start writes a file of its own.
   */
  EXPORT_REUSE_SECONDS: z.coerce.number().int().min(0).default(600),
  /**
   * Bytes the files in EXPORT_DIR may take: the kept files plus what running
   * exports wrote so far. At or above it a new export is answered 503 with
   * Retry-After; a running one is never stopped by it, so leave room for the
   * largest export above it. 0: no budget.
   */
  EXPORT_DISK_BUDGET_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(50 * 1024 ** 3),
  /**
   * Bytes of EXPORT_DIR one principal's exports may take (its kept files and
   * what its running exports wrote so far): at or above it that principal's
   * new exports are answered 429 with Retry-After, so that no one reader
   * spends the whole EXPORT_DISK_BUDGET_BYTES. 0: no share.
   */
  EXPORT_DISK_BYTES_PER_PRINCIPAL: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 1024 ** 3),
  /** How long an export file is kept (fixed when the export is requested). */
  EXPORT_RETENTION_HOURS: z.coerce.number().positive().default(24),
  /** How often the expiry schedule (created by the API at start) removes export files past their retention. */
  EXPORT_EXPIRY_EVERY_MINUTES: z.coerce.number().positive().default(5),
  /**
   * How long a v1 POST /batches waits for its result. Below the real client's
   * 60 s read timeout (OkHttp in ELZA), so it gets an answer it can read.
   */
  V1_BATCH_WAIT_SECONDS: z.coerce.number().positive().default(50),
  /**
   * Tuning knob: how long one answer of Temporal about a running batch or
   * export (a describe) serves every status, detail and result read of that
   * job in this API process; reads in the same moment share one describe in
   * any case. Bounds the describes to about 1000 / JOB_STATUS_CACHE_MS per
   * second per polled job and process, however many clients poll. 0: share only.
   */
  JOB_STATUS_CACHE_MS: z.coerce.number().int().min(0).max(10_000).default(500),
  /** The token GET /metrics needs (`Authorization: Bearer <METRICS_TOKEN>`, at least 32 characters); default: one generated in DATA_DIR. */
  METRICS_TOKEN: z.string().min(32, 'at least 32 characters').optional(),
  /** `true` opens every route to anyone (local experiments only; warned at start). */
  AUTH_DISABLED: booleanFromEnv.default(false),
  /** Bearer tokens: a JSON list of {"token" or "tokenSha256", "name", "permissions"} (read, write, force, export, admin). */
  AUTH_TOKENS: z.string().optional(),
  /** A file holding the AUTH_TOKENS list (a mounted secret); set one of the two. */
  AUTH_TOKENS_FILE: z.string().optional(),
  /** HMAC API keys as the registry's client signs (NDA-HMAC-SHA256): a JSON list, or a file holding one. */
  API_KEYS: z.string().optional(),
  /** A file holding the API_KEYS list (a mounted secret); set one of the two. */
  API_KEYS_FILE: z.string().optional(),
  /** How far an X-NDA-Date may lie from the server's clock, either way (a key's own clockSkewSeconds wins); docs/decisions/0142. */
  API_KEY_CLOCK_SKEW_SECONDS: z.coerce.number().int().positive().default(120),
  /**
   * Remember the signed writes of the window (key, signature, body): a v2 export start sent again is answered with the first
   * export (docs/decisions/0053), and another body under a seen signature is logged and counted, and refused for
   * single-writer keys (docs/decisions/0144).
   */
  API_KEY_REPLAY_GUARD: booleanFromEnv.default(true),
  /**
   * Proxies (addresses or CIDRs, comma-separated) whose X-Forwarded-For names
   * the client: for the API keys' allow-lists and the limits kept per source
   * address; with TRUST_PROXY, the only peers whose X-Forwarded-Host and
   * -Proto count. Empty: the connection's address is the client's.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .superRefine((entries, context) => {
      try {
        addressList(entries);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  /**
   * Every connection to PORT may begin with a PROXY protocol header (v1 or
   * v2, as HAProxy and nginx send it), believed only from TRUSTED_PROXIES,
   * which must then begin with one (docs/decisions/0147). Never on where
   * other peers inside TRUSTED_PROXIES can reach the port.
   */
  PROXY_PROTOCOL: booleanFromEnv.default(false),
  /** Failed authentications per source address per window before the address is answered 429 instead of 401; 0 turns the limit off. */
  AUTH_FAILURE_LIMIT: z.coerce.number().int().min(0).default(30),
  /** The window of AUTH_FAILURE_LIMIT. */
  AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  /**
   * Behind a reverse proxy that sets X-Forwarded-Host and -Proto: the host a client signed and the origin of a sign-in
   * form are taken from them, only on connections from TRUSTED_PROXIES (api/forwarded.ts), which it needs.
   */
  TRUST_PROXY: booleanFromEnv.default(false),
  /** The host name clients call (and sign), whatever the request's Host header says; with its port, the sign-in form's origin is https://PUBLIC_HOST. */
  PUBLIC_HOST: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value === '') return undefined;
      const hostname = hostnameOf(value);
      if (hostname === undefined) context.addIssue({ code: 'custom', message: 'a host name, optionally with a port' });
      return hostname;
    }),
  /** Browser origins allowed to call the API (CORS), comma-separated; empty allows none. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .string()
          .refine(
            (origin) => URL.canParse(origin) && new URL(origin).origin === origin,
            'an origin is scheme://host[:port], without a path or trailing slash',
          ),
      ),
    ),
  /** Batch submissions (batches and test batches, v1 and v2) per principal per window; 0 turns the limit off. Exports never spend it. */
  SUBMISSION_RATE_LIMIT: z.coerce.number().int().min(0).default(300),
  /** The window of SUBMISSION_RATE_LIMIT. */
  SUBMISSION_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  /** Export requests (v2 export starts, synchronous v1 snapshots and revisions) per principal per window, a budget apart from the batches'; 0 turns the limit off. */
  EXPORT_RATE_LIMIT: z.coerce.number().int().min(0).default(600),
  /** The window of EXPORT_RATE_LIMIT. */
  EXPORT_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  /** Connections of each API process's main pool (short reads, uploads, job rows). */
  DB_POOL_SIZE: z.coerce.number().int().positive().default(10),
  /** How long a request waits for a pooled connection before it is answered 503 with Retry-After. */
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * PostgreSQL hot standbys (streaming replicas of DATABASE_URL, comma-separated URLs) that serve the API's reads: feed
   * and OAI pages, activity-stream pages, synchronous v1 exports, record pages, GETs and searches. Writes, job rows and
   * locks stay on the primary. Empty: every read on the primary (docs/decisions/0192).
   */
  DATABASE_READ_URLS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((url) => url.trim())
        .filter((url) => url !== ''),
    )
    .pipe(z.array(z.url())),
  /**
   * Seconds a standby may be behind the primary and still serve reads that name no transaction (GETs, searches, the
   * newest feed and activity-stream pages). One further behind, or not answering, leaves the rotation until it catches up.
   */
  REPLICA_MAX_LAG: z.coerce.number().positive().default(5),
  /** Connections of each API process's pool for long reads (feed pages, synchronous v1 exports), apart from the main pool. */
  LONG_READ_CONNECTIONS: z.coerce.number().int().positive().default(4),
  /** Each statement of a long read (a feed query, a cursor's read) is cancelled after this long; 0: no limit. */
  LONG_READ_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  /** A long read's transaction left idle this long (its client does not drain the response) is ended by PostgreSQL; 0: no limit. */
  LONG_READ_IDLE_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /** Long reads (feed pages, export downloads, synchronous v1 exports) one principal holds at once across every API process; 0: no limit. */
  LONG_READS_PER_PRINCIPAL: z.coerce.number().int().min(0).default(4),
  /** A long read's lease lasts this long unless its API process renews it: what a process that died holding one costs. */
  LONG_READ_LEASE_SECONDS: z.coerce.number().int().min(3).default(30),
  /** A long read's response that sends nothing for this long (a stalled reader) is cut, freeing its connection and transaction. */
  LONG_READ_STALL_SECONDS: z.coerce.number().int().positive().default(30),
  /** A long read's response still being written after this long is cut whatever its pace. */
  LONG_READ_MAX_SECONDS: z.coerce.number().int().positive().default(1800),
  /** Requests per source address per window of readers without credentials (public record pages, public OAI-PMH); 0 turns the limit off. */
  ANONYMOUS_READ_RATE_LIMIT: z.coerce.number().int().min(0).default(600),
  /** The window of ANONYMOUS_READ_RATE_LIMIT. */
  ANONYMOUS_READ_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  /**
   * Who may open the record pages under /global (the links the registry's
   * client shows): `public` (anyone, limited per source address), `signed-in`
   * (a person who signed in with one of the service's bearer tokens holding
   * `read`, or any request with such credentials) or `off` (every /global
   * path answers 404).
   */
  RECORD_PAGES: z.enum(['public', 'signed-in', 'off']).default('signed-in'),
  /** How long a sign-in to the record pages lasts. */
  RECORD_PAGES_SESSION_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(8),
  /** Signs the record pages' session cookies; default: a key derived from the force keys' secret, which every API shares already. */
  RECORD_PAGES_SESSION_SECRET: z.string().min(16).optional(),
  /** Who may harvest /oai (OAI-PMH): anyone (`public`, limited per address as other anonymous readers), a principal with `read` (`bearer`), or nobody (`off`). */
  OAI_PMH: z.enum(['public', 'bearer', 'off']).default('bearer'),
  /** The repository identifier of OAI identifiers (oai:{id}:{entity uuid}); default PUBLIC_HOST, else localhost. Changing it renames every record for harvesters. */
  OAI_REPOSITORY_ID: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z][A-Za-z0-9-]*)*$/, 'a host-like name: letters, digits, hyphens, dots')
    .optional(),
  /** Identify's adminEmail; default admin@ the repository identifier, or admin@localhost.localdomain for an identifier without a dot (the OAI-PMH schema asks for a dot in the domain). */
  OAI_ADMIN_EMAIL: z
    .string()
    .regex(/^\S+@(\S+\.)+\S+$/, 'an e-mail address whose domain has a dot (the OAI-PMH schema asks for one)')
    .optional(),
  /** The repositoryName of OAI-PMH Identify. */
  OAI_REPOSITORY_NAME: z.string().min(1).default('Entity Records Service'),
  /** Records (or headers) per page of ListRecords and ListIdentifiers. */
  OAI_PAGE_SIZE: z.coerce.number().int().positive().max(50_000).default(1000),
  /** Open push streams (GET /api/v2/stream) per principal, across every API process (0: no limit). */
  STREAM_CONNECTIONS_PER_PRINCIPAL: z.coerce.number().int().min(0).default(8),
  /** Open push streams per client address, across every API process (0: no limit). */
  STREAM_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).default(16),
  /** A heartbeat comment on a quiet push stream every so many seconds. */
  STREAM_HEARTBEAT_SECONDS: z.coerce.number().int().positive().default(15),
  /** A push stream whose unsent bytes stay above STREAM_BUFFER_BYTES for STREAM_SLOW_CONSUMER_SECONDS is cut (it resumes with Last-Event-ID). */
  STREAM_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /** How long a push stream's unsent bytes may stay above STREAM_BUFFER_BYTES, or its last bytes unread once it ends, before it is cut. */
  STREAM_SLOW_CONSUMER_SECONDS: z.coerce.number().positive().default(30),
  /** A push stream ends after this and its client reconnects (to any API process) with Last-Event-ID. */
  STREAM_MAX_SECONDS: z.coerce.number().positive().default(3600),
  /** Activities per page of /activity-stream. A page's name and content depend on it: changing it renames every page for consumers. */
  ACTIVITY_STREAM_PAGE_SIZE: z.coerce.number().int().positive().max(10_000).default(1000),
  /** Signs OAI-PMH resumption tokens; every API process must have the same. Default: generated in DATA_DIR/secrets/oai-token-key (docs/decisions/0134). */
  OAI_TOKEN_SECRET: z.string().min(16).optional(),
  /** Former OAI_TOKEN_SECRETs, comma-separated: tokens they signed are still accepted while harvests begun under them end (rotation). */
  OAI_TOKEN_PREVIOUS_SECRETS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((secret) => secret.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().min(16))),
  /** OAI-PMH requests one anonymous address runs at once, across every API process (0: no limit). */
  OAI_ANONYMOUS_PER_ADDRESS: z.coerce.number().int().min(0).default(2),
  /** OAI-PMH requests all anonymous harvesters together run at once, across every API process (0: no limit). */
  OAI_ANONYMOUS_TOTAL: z.coerce.number().int().min(0).default(8),
  /**
   * The service's public URL as clients reach it (scheme, host, port, path), e.g. https://records.example.org/registry:
   * OAI-PMH's baseURL and schema URLs and EAC-CPF's record links are made from it. Default: from
   * X-Forwarded-Proto/-Host with TRUST_PROXY from a peer in TRUSTED_PROXIES, else from the request.
   */
  PUBLIC_URL: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value === '' ? undefined : value.replace(/\/+$/, '')))
    .refine(
      (value) => value === undefined || (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).search === ''),
      'an http(s) URL without query, e.g. https://records.example.org or https://example.org/registry',
    ),
  /** A batch's apply, queueing behind other imports and every retry included, fails for good after this (set in its workflow's input when it starts). */
  BATCH_APPLY_TIMEOUT_HOURS: z.coerce.number().positive().default(12),
};

/** The worker processes. */
const worker = {
  /** Tuning knob: bulk activities (applies of large batches) one worker runs at once; the rest wait in Temporal's task queue. */
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().positive().default(2),
  /** Tuning knob: exports one worker writes at once, in a lane of their own (polled with bulk): an export never holds an import's slot. */
  WORKER_EXPORT_ACTIVITIES: z.coerce.number().int().positive().default(1),
  /** Tuning knob: applies of small batches one worker runs at once, in slots of their own: a save never waits behind an import. */
  WORKER_INTERACTIVE_ACTIVITIES: z.coerce.number().int().positive().default(2),
  /**
   * The lanes this worker process polls: `bulk`, `interactive`, or both
   * (`bulk,interactive`, the default); a process polling bulk polls the
   * exports' lane too. `npm start` runs one process of each, so small
   * batches apply on an event loop no import keeps busy.
   */
  WORKER_LANES: z
    .string()
    .default('bulk,interactive')
    .transform((value) => [
      ...new Set(
        value
          .split(',')
          .map((lane) => lane.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.enum(['bulk', 'interactive'])).min(1, 'names at least one lane: bulk, interactive')),
  /** A prebuilt workflow bundle (`npm start` builds one for both worker processes); default: bundled at start. */
  WORKFLOW_BUNDLE: z.string().min(1).optional(),
  /** Serves the worker's own GET /metrics (and the Temporal SDK's runtime metrics) on this port (at HOST) when set. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /**
   * How long a stopping worker lets its running activities finish before it
   * cancels them (they roll back and are retried elsewhere). Size it to the
   * longest apply: about 100 s for 100,000 entities, 12 minutes for a 1 GiB
   * batch on the reference machine.
   */
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(180),
  /** How long a batch's stored body is kept after the batch ended; its result and revisions stay for good. */
  BATCH_BODY_RETENTION_DAYS: z.coerce.number().positive().default(30),
  /**
   * A batch that wrote at least this many records is followed, after its
   * commit, by ANALYZE of the tables it wrote (planner statistics for the
   * reads; autovacuum may be late or off). 0: never.
   */
  ANALYZE_AFTER_RECORDS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Temporal worker versioning (docs/deployment.md, Workers): the worker
   * declares a version of WORKER_DEPLOYMENT_NAME, and a batch or export
   * finishes on the version that started it. Off: unversioned workers, every
   * workflow moves to whichever worker polls (then workflow changes need
   * patched() branches alone).
   */
  WORKER_VERSIONING: booleanFromEnv.default(true),
  /** The Temporal worker deployment every worker of this service belongs to; one per environment sharing a namespace. */
  WORKER_DEPLOYMENT_NAME: z.string().min(1).default('entity-records'),
  /** This worker's version within the deployment; default: the content hash of its workflow bundle, the same in every process of a release. */
  WORKER_BUILD_ID: z.string().min(1).max(255).optional(),
  /**
   * When the worker makes its own version the deployment's current one (new
   * workflows start there): `if-none` only when the deployment has no current
   * version yet (a first start; later releases are made current by the
   * deploy procedure), `always` at every start (`npm start` sets it: it runs
   * every worker of its release), `never`.
   */
  WORKER_VERSION_CURRENT: z.enum(['if-none', 'always', 'never']).default('if-none'),
};

/** Measuring aids of the worker, off unless set: for benchmarks, never needed in production. */
const measuringAids = {
  /** Each step of an apply appends one JSON line of wall and CPU time to this file. */
  APPLY_TIMELINE: z.string().min(1).optional(),
  /** One line of the worker's memory to stderr every this many milliseconds. */
  WORKER_MEMORY_LOG_MS: z.coerce.number().int().positive().optional(),
};

/** The settings every deployment sets (addresses, credentials, the public name, retention): README lists these. */
export const DEPLOYMENT_SETTINGS: readonly string[] = [
  'DATABASE_URL',
  'DATABASE_READ_URLS',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'HOST',
  'PORT',
  'PUBLIC_URL',
  'PUBLIC_HOST',
  'TRUSTED_PROXIES',
  'AUTH_TOKENS_FILE',
  'API_KEYS_FILE',
  'FORCE_KEY_SECRET',
  'DATA_DIR',
  'EXPORT_DIR',
  'RECORD_PAGES',
  'OAI_PMH',
  'OAI_REPOSITORY_ID',
  'OAI_TOKEN_SECRET',
  'EXPORT_RETENTION_HOURS',
  'BATCH_BODY_RETENTION_DAYS',
  'METRICS_TOKEN',
  'LOG_LEVEL',
];

/** Every group of settings, for the generated reference (tools/settings-reference.ts). */
export const SETTING_GROUPS = { everyProcess, api, worker, measuringAids };

const configSchema = z.object({ ...everyProcess, ...api, ...worker, ...measuringAids });
/** What a worker process reads: a wrong API setting never stops a worker, and the worker loads no API code. */
const workerSchema = z.object({ ...everyProcess, ...worker, ...measuringAids });

/** The measuring aids alone, for code that runs inside an activity and is not handed the configuration. */
export function loadMeasuringAids(env: NodeJS.ProcessEnv = process.env): z.infer<z.ZodObject<typeof measuringAids>> {
  return z.object(measuringAids).parse(env);
}

/** What every process derives from its settings. */
type Derived = {
  temporalAddress: string;
  forceKeySecret: string;
  exportDir: string;
};

// API_KEYS itself is left out: its secrets live on only inside `apiKeys`, where they print as [redacted].
export type Config = Omit<z.infer<typeof configSchema>, 'API_KEYS'> &
  Derived & {
    temporalUiUrl: string;
    apiKeys: ApiKey[];
    oaiRepositoryId: string;
    oaiAdminEmail: string;
    /** https://PUBLIC_HOST, its port kept: the public origin of the record pages' forms. */
    publicOrigin: string | undefined;
  };

export type WorkerConfig = z.infer<typeof workerSchema> & Derived;

/** Every setting of every process: the API's, and the start and maintenance scripts'. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { API_KEYS, ...values } = parse(configSchema, env);
  if (values.TRUST_PROXY && values.TRUSTED_PROXIES.length === 0) {
    throw new ConfigError(
      "invalid configuration: TRUST_PROXY=true needs TRUSTED_PROXIES, the proxies whose X-Forwarded-Host and X-Forwarded-Proto are believed (no other peer's are)",
    );
  }
  if (values.PROXY_PROTOCOL && values.TRUSTED_PROXIES.length === 0) {
    throw new ConfigError(
      'invalid configuration: PROXY_PROTOCOL=true needs TRUSTED_PROXIES, the proxies whose PROXY header names the client',
    );
  }
  const derived = derive(values);
  const apiKeys = loadApiKeys({ API_KEYS, API_KEYS_FILE: values.API_KEYS_FILE });
  // A single-writer key is held to it through the seen signatures, which API_KEY_REPLAY_GUARD=false turns off.
  const singleWriters = apiKeys.filter((key) => key.singleWriter).map((key) => key.name);
  if (singleWriters.length > 0 && !values.API_KEY_REPLAY_GUARD) {
    throw new ConfigError(
      `invalid configuration: API_KEY_REPLAY_GUARD=false cannot hold single-writer keys (${singleWriters.join(', ')}) to one body per signature`,
    );
  }
  return {
    ...values,
    ...derived,
    temporalUiUrl: values.TEMPORAL_UI_URL ?? `http://${derived.temporalAddress.replace(/:\d+$/, '')}:${values.TEMPORAL_UI_PORT}`,
    apiKeys,
    ...oaiNames(values.OAI_REPOSITORY_ID ?? values.PUBLIC_HOST ?? 'localhost', values.OAI_ADMIN_EMAIL),
    // PUBLIC_HOST itself is the host name alone (what clients sign); its origin keeps the port it was given.
    publicOrigin: values.PUBLIC_HOST === undefined ? undefined : new URL(`https://${env.PUBLIC_HOST}`).origin,
  };
}

/** A worker process's settings: every process's and the worker's own, nothing of the API's. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const values = parse(workerSchema, env);
  return { ...values, ...derive(values) };
}

function parse<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv): z.infer<Schema> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

function derive(values: z.infer<z.ZodObject<typeof everyProcess>>): Derived {
  if (!values.TEMPORAL_TLS_CERT_FILE !== !values.TEMPORAL_TLS_KEY_FILE) {
    throw new ConfigError('invalid configuration: TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together (mutual TLS needs both)');
  }
  return {
    temporalAddress: values.TEMPORAL_ADDRESS ?? `127.0.0.1:${values.TEMPORAL_PORT}`,
    forceKeySecret: persistentSecret(values.FORCE_KEY_SECRET, values.DATA_DIR, 'force-key'),
    exportDir: values.EXPORT_DIR ?? `${values.DATA_DIR}/exports`,
  };
}

function oaiNames(repositoryId: string, adminEmail: string | undefined): { oaiRepositoryId: string; oaiAdminEmail: string } {
  return {
    oaiRepositoryId: repositoryId,
    oaiAdminEmail: adminEmail ?? `admin@${repositoryId.includes('.') ? repositoryId : 'localhost.localdomain'}`,
  };
}

function loadApiKeys(values: { API_KEYS?: string; API_KEYS_FILE?: string }): ApiKey[] {
  if (values.API_KEYS && values.API_KEYS_FILE) throw new ConfigError('invalid configuration: set API_KEYS or API_KEYS_FILE, not both');
  try {
    if (values.API_KEYS) return parseApiKeys(values.API_KEYS, 'API_KEYS');
    if (values.API_KEYS_FILE) return parseApiKeys(readApiKeysFile(values.API_KEYS_FILE), `API_KEYS_FILE ${values.API_KEYS_FILE}`);
    return [];
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
  }
}

function readApiKeysFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`API_KEYS_FILE ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      cause: error,
    });
  }
}

export class ConfigError extends Error {}
