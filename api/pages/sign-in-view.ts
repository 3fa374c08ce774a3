import { html, type Html } from './html.ts';

// The sign-in form: one of the service's bearer tokens (one that may read),
// and where to go back to. The token travels in the POST body only.

export function signInMain(options: { next: string; message?: string }): Html {
  return html`<h1>Sign in</h1>
<p class="lead">The records of this registry are shown to people who hold one of its access tokens with the <code>read</code> permission. The token is checked here and kept by no page; your browser keeps a sign-in cookie until you sign out or it expires.</p>
${options.message && html`<p class="notice" role="alert">${options.message}</p>`}
<form class="sign-in" method="post" action="/global/sign-in">
  <input type="hidden" name="next" value="${options.next}">
  <div class="field"><label for="token">Access token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required maxlength="1024"></div>
  <div class="field"><button type="submit">Sign in</button></div>
</form>`;
}

export function errorMain(title: string, message: string, links: Html | undefined): Html {
  return html`<h1>${title}</h1>
<p class="lead">${message}</p>
${links ?? html`<p><a href="/global">Search the records</a></p>`}`;
}
