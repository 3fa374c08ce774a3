import { html, type Html } from './html.ts';

// The frame of every record page: one stylesheet of our own, no script, the
// person's session (if any) with its sign-out button, and the landmarks a
// screen reader navigates by.

const STYLESHEET_PATH = '/global/assets/pages.css';

export interface PageFrame {
  title: string;
  main: Html;
  /** The principal a signed-in person is shown as, and whether their session can be ended here (a cookie, not a header). */
  viewer?: { name: string; session: boolean };
  /** The page's own address when it can be reached by several (a record by number and by UUID). */
  canonical?: string;
}

export function layout(frame: PageFrame): string {
  const { viewer } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Entity records</title>
${frame.canonical && html`<link rel="canonical" href="${frame.canonical}">`}
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<header class="site">
  <a class="home" href="/global">Entity records</a>
  ${
    viewer &&
    html`<div class="viewer">
    <span>Signed in as ${viewer.name}</span>
    ${viewer.session && html`<form method="post" action="/global/sign-out"><button type="submit">Sign out</button></form>`}
  </div>`
  }
</header>
<main>
${frame.main}
</main>
<footer class="site">
  <p>Records of this registry as they are stored; every record is also served in XML by the <a href="/docs">API</a>.</p>
</footer>
</body>
</html>
`.text;
}
