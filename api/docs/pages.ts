import { V1 } from '../../domain/xml/vocabulary-v1.ts';
import { V2 } from '../../domain/xml/vocabulary-v2.ts';
import type { ApiVersion } from './documents.ts';

// The HTML of /docs. Static text only (nothing from the request is echoed),
// and no inline script, so the pages run under a CSP that allows 'self' alone.

const VERSIONS: ReadonlyArray<{ version: ApiVersion; label: string; xsd: string; namespace: string }> = [
  { version: 'v2', label: 'v2 (current)', xsd: 'entity-records-2025.xsd', namespace: V2.namespace },
  { version: 'v1', label: 'v1 (legacy)', xsd: 'entity-records-2019.xsd', namespace: V1.namespace },
];

/** The file names served under /docs/schemas/, one per API version. */
export const SCHEMA_FILES: readonly string[] = VERSIONS.map(({ xsd }) => xsd);

/** Only our own origin; Swagger UI needs inline styles (React style attributes) and data: images. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function head(title: string, stylesheets: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
${stylesheets.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n')}
</head>`;
}

function bar(current?: ApiVersion): string {
  const links = VERSIONS.map(
    ({ version, label }) => `<a href="/docs/${version}"${version === current ? ' aria-current="page"' : ''}>${label}</a>`,
  ).join('\n    ');
  const raw = current ? `\n  <a class="docs-raw" href="/api/${current}/openapi.json">openapi.json</a>` : '';
  return `<header class="docs-bar">
  <a class="docs-home" href="/docs">Entity Records Service API</a>
  <nav aria-label="API version">
    ${links}
  </nav>${raw}
</header>`;
}

export function indexPage(): string {
  return listPage(
    'Entity Records Service API reference',
    `Reference of the REST interfaces. Every operation except these pages, the documents and
  <code>GET /health</code> needs an <code>Authorization: Bearer &lt;token&gt;</code> header, or an
  API-key signature as the registry's client sends it: <code>X-NDA-Date</code> and
  <code>Authorization: NDA-HMAC-SHA256 KeyId=&lt;keyId&gt;,Signature=&lt;sig&gt;</code>
  (each reference's <code>ndaHmac</code> scheme says how to compute it).`,
    ({ version, label, xsd }) => `<h2><a href="/docs/${version}">${label}</a></h2>
      <p>Base path <code>/api/${version}</code> ·
        <a href="/api/${version}/openapi.json">OpenAPI 3.1 document</a> ·
        <a href="/docs/schemas/${xsd}">XML schema (${xsd})</a></p>`,
  );
}

/** /docs/schemas/: the XSDs, one per interface, with the namespace each one's documents use. */
export function schemasPage(): string {
  return listPage(
    'Entity Records Service XML schemas',
    'The XML schemas every batch is validated against and every XML answer follows.',
    ({ version, label, xsd, namespace }) => `<h2><a href="/docs/schemas/${xsd}">${xsd}</a></h2>
      <p>The XML of interface ${label}, <code>/api/${version}</code>: namespace <code>${namespace}</code>.</p>`,
  );
}

/** A page of the docs' index style: a paragraph, then one list entry per interface version. */
function listPage(title: string, intro: string, entry: (version: (typeof VERSIONS)[number]) => string): string {
  const rows = VERSIONS.map(
    (version) => `    <li>
      ${entry(version)}
    </li>`,
  ).join('\n');
  return `${head(title, ['/docs/assets/docs.css'])}
<body class="docs-index">
${bar()}
<main>
  <p>${intro}</p>
  <ul class="docs-versions">
${rows}
  </ul>
</main>
</body>
</html>
`;
}

export function referencePage(version: ApiVersion): string {
  const { label } = VERSIONS.find((entry) => entry.version === version)!;
  return `${head(`Entity Records Service API ${label}`, ['/docs/assets/swagger-ui.css', '/docs/assets/docs.css'])}
<body class="docs-reference" data-spec-url="/api/${version}/openapi.json">
${bar(version)}
<main id="swagger-ui"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;
}
