// The project's lint rules: typescript-eslint's recommended set and the
// layer rules (what each folder may import). Run with `npm run lint` from the
// project root; this folder only carries the linter and the TypeScript it
// parses with (see package.json).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { fileURLToPath } from 'node:url';

/** The project root: every pattern below is relative to it. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const INFRASTRUCTURE = ['koa', '@koa/*', 'koa-*', '@mikro-orm/*', '@temporalio/*', 'pg', 'pg-*', 'pino', 'prom-client'];
/** db/ is the data-access layer: the only code that talks to PostgreSQL (migrations, scripts, bench and tests aside). */
const DATABASE_DRIVERS = {
  group: ['pg', 'pg-*', '@mikro-orm/*'],
  message: 'only db/ talks to PostgreSQL: use a repository of Db (db/index.ts)',
};
/** The service's own code runs in production, where scripts, tests, benchmarks and tools are development aids. */
const DEVELOPMENT_CODE = {
  regex: '(^|/)(scripts|test|bench|tools)/',
  message: 'production code imports nothing from scripts/, test/, bench/ or tools/ (shared helpers live in platform/)',
};
const HTTP_IN_USE_CASES = [
  { regex: '(^|/)api/', message: 'only api/ knows HTTP; services throw typed errors' },
  { group: ['koa', '@koa/*'], message: 'only api/ knows HTTP' },
];

export default tseslint.config(
  {
    basePath: ROOT,
    ignores: ['node_modules/**', 'tools/lint/node_modules/**', '.data/**', '.venv/**', 'walkthrough/**', 'api/docs/assets/**', '**/*.js'],
  },
  {
    basePath: ROOT,
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Workflow code is replayed deterministically: the workflow SDK, shared Temporal names and types only.
    basePath: ROOT,
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!@temporalio/workflow$|@temporalio/interceptors-opentelemetry/lib/workflow/index\\.js$|\\.\\./temporal/(names|contracts|search-attributes)\\.ts$|\\./).*',
              message:
                'workflows import only @temporalio/workflow, the workflow side of the OpenTelemetry interceptors, each other and the workflow-safe contracts (temporal/names.ts, contracts.ts, search-attributes.ts), types included',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain holds the rules; the machinery that runs them at scale lives in engine/, which the rules never need.
    basePath: ROOT,
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: INFRASTRUCTURE, message: 'domain/ stays free of infrastructure' },
            DEVELOPMENT_CODE,
            {
              regex:
                '^\\.\\./\\.\\./(api|services|activities|workflows|db|worker|temporal|cli|engine)/|^\\.\\./(api|services|activities|workflows|db|worker|temporal|cli|engine)/',
              message: 'domain/ imports nothing from the engine or the layers above it',
            },
          ],
        },
      ],
    },
  },
  {
    // The engine (memory machinery: survey, planner, columns, sliced validation) is pure like the domain and may use it; nothing above.
    basePath: ROOT,
    files: ['engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: INFRASTRUCTURE, message: 'engine/ stays free of infrastructure' },
            DEVELOPMENT_CODE,
            {
              regex:
                '^\\.\\./\\.\\./(api|services|activities|workflows|db|worker|temporal|cli)/|^\\.\\./(api|services|activities|workflows|db|worker|temporal|cli)/',
              message: 'engine/ imports only the domain and itself',
            },
          ],
        },
      ],
    },
  },
  {
    // Use cases know no HTTP: they throw typed errors (services/errors.ts) that api/ maps.
    basePath: ROOT,
    // Not workflows/: their own rule above is stricter, and a second
    // no-restricted-imports for the same files would replace it (flat config).
    files: ['services/**/*.ts', 'activities/**/*.ts', 'temporal/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...HTTP_IN_USE_CASES, DATABASE_DRIVERS, DEVELOPMENT_CODE] }] },
  },
  {
    basePath: ROOT,
    files: ['db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...HTTP_IN_USE_CASES, DEVELOPMENT_CODE] }] },
  },
  {
    // The API parses, authorises, calls a use case and maps its errors: it
    // never reaches the data-access layer itself, not even for a type.
    basePath: ROOT,
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            DATABASE_DRIVERS,
            DEVELOPMENT_CODE,
            {
              regex: '(^|/)db/',
              message: 'api/ calls services, which hold the repositories; the entry point opens the database through services/deps.ts',
            },
          ],
        },
      ],
    },
  },
  {
    // Process entry points and the rest of the service: drivers only through db/.
    basePath: ROOT,
    files: ['cli/**/*.ts', 'metrics/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [DATABASE_DRIVERS, DEVELOPMENT_CODE] }] },
  },
  {
    // What a worker loads (its entry point, the configuration, the shared helpers) holds no API code: the parsing
    // of settings the API and config.ts share (addresses, API keys, host names) lives in settings/.
    basePath: ROOT,
    files: ['worker/**/*.ts', 'platform/**/*.ts', 'settings/**/*.ts', '*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            DATABASE_DRIVERS,
            DEVELOPMENT_CODE,
            { regex: '(^|/)api/', message: 'the worker and config.ts load no API code; what both need to parse lives in settings/' },
          ],
        },
      ],
    },
  },
  {
    // temporal/*.ts is what workflow code shares with the rest: each other only
    // (Temporal's client code lives in temporal/client/). After the services
    // rule, so that for these files this one is the rule (flat config).
    basePath: ROOT,
    files: ['temporal/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./).*',
              message: 'temporal/*.ts is workflow-safe: it imports only its neighbours; client code goes in temporal/client/',
            },
          ],
        },
      ],
    },
  },
);
