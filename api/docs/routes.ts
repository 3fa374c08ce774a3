import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.ts';
import { problem } from '../problems.ts';
import { API_VERSIONS, servedOpenApiDocument, type ApiVersion, type OpenApiDocument } from './documents.ts';
import { DOCS_CSP, indexPage, referencePage, SCHEMA_FILES, schemasPage } from './pages.ts';

// Public (see PUBLIC_PATHS in middleware/auth.ts): the OpenAPI documents and
// the reference pages built from them. Every file the pages load is served
// from here (Swagger UI from node_modules), never from another origin.

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const OWN_ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
const SCHEMAS_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

/** The only files under /docs/assets and /docs/schemas: a name maps to one file, nothing else is reachable. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'),
  'swagger-ui.css': join(SWAGGER_UI_DIR, 'swagger-ui.css'),
  'favicon-32x32.png': join(SWAGGER_UI_DIR, 'favicon-32x32.png'),
  'favicon-16x16.png': join(SWAGGER_UI_DIR, 'favicon-16x16.png'),
  'docs.js': join(OWN_ASSETS_DIR, 'docs.js'),
  'docs.css': join(OWN_ASSETS_DIR, 'docs.css'),
};
const SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(SCHEMA_FILES.map((name) => [name, join(SCHEMAS_DIR, name)]));
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.xsd': 'application/xml',
};

export function docsRouter(deps: AppDeps): Router {
  const router = new Router();
  // Built on first request: building the app stays free of file reads.
  const documents = new Map<ApiVersion, OpenApiDocument>();
  const documentFor = (version: ApiVersion) => {
    let document = documents.get(version);
    if (!document) {
      document = servedOpenApiDocument(version, deps.config);
      documents.set(version, document);
    }
    return document;
  };

  for (const version of API_VERSIONS) {
    router.get(`/api/${version}/openapi.json`, (ctx) => {
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = documentFor(version);
    });
    router.get(`/docs/${version}`, (ctx) => html(ctx, referencePage(version)));
  }
  router.get('/docs', (ctx) => html(ctx, indexPage()));
  router.get('/docs/assets/:file', (ctx) => sendFile(ctx, ASSETS, ctx.params.file));
  // Also /docs/schemas/ (the router is not strict about a trailing slash).
  router.get('/docs/schemas', (ctx) => html(ctx, schemasPage()));
  router.get('/docs/schemas/:file', (ctx) => sendFile(ctx, SCHEMAS, ctx.params.file));
  return router;
}

function html(ctx: Context, page: string): void {
  ctx.set('Content-Security-Policy', DOCS_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

async function sendFile(ctx: Context, files: Readonly<Record<string, string>>, name: string | undefined): Promise<void> {
  const path = name !== undefined && Object.hasOwn(files, name) ? files[name] : undefined;
  if (!path) throw problem(404, 'NotFound', `no file ${ctx.path}`);
  const { size } = await stat(path);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.type = MEDIA_TYPES[extname(path)] ?? 'application/octet-stream';
  ctx.length = size;
  ctx.body = createReadStream(path);
}
