import { ENTITY_STATES, type EntityState, type QueryResult } from '../../domain/model.ts';
import { html, type Html } from './html.ts';
import { STATE_LABELS } from './labels.ts';
import { recordPath } from './links.ts';
import { pager } from './pager.ts';

// The registry's front door: a name search within entity types and states,
// its results a page at a time. A search the service refuses (too broad, too
// slow) is shown as a message beside the form.

export interface SearchForm {
  name: string;
  types: string[];
  states: EntityState[];
}

export type SearchOutcome = { result: QueryResult } | { refusal: string };

export interface SearchView {
  form: SearchForm;
  /** The types to choose from: those records have now, and any asked for. */
  types: string[];
  outcome: SearchOutcome;
  page: number;
  pageSize: number;
}

function searchHref(form: SearchForm, page: number): string {
  const query = new URLSearchParams();
  if (form.name !== '') query.set('name', form.name);
  for (const type of form.types) query.append('type', type);
  for (const state of form.states) query.append('state', state);
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text === '' ? '/global' : `/global?${text}`;
}

export function searchMain(view: SearchView): Html {
  const { form, outcome } = view;
  return html`<h1>Entity records</h1>
<p class="lead">Search the registry's records by name, type and state. Case and accents do not matter.</p>
<form class="search" method="get" action="/global" role="search">
  <div class="field"><label for="name">Name contains</label>
  <input id="name" name="name" type="search" maxlength="200" value="${form.name}"></div>
  <div class="field"><label for="type">Type</label>
  <select id="type" name="type"><option value="">Any type</option>${view.types.map(
    (type) => html`<option value="${type}"${form.types.includes(type) && html` selected`}>${type}</option>`,
  )}</select></div>
  <div class="field"><label for="state">State</label>
  <select id="state" name="state"><option value="">Any state</option>${ENTITY_STATES.map(
    (state) => html`<option value="${state}"${form.states.includes(state) && html` selected`}>${STATE_LABELS[state]}</option>`,
  )}</select></div>
  <div class="field"><button type="submit">Search</button></div>
</form>
<section aria-labelledby="results">
<h2 id="results">Results</h2>
${'refusal' in outcome ? html`<p class="notice" role="alert">${outcome.refusal}</p>` : results(view, outcome.result)}
</section>`;
}

function results(view: SearchView, result: QueryResult): Html {
  const { page, pageSize } = view;
  if (result.entities.length === 0) {
    return html`<p>${result.count === 0 ? 'No record matches.' : `No records on page ${page}: the search has ${result.count}.`}</p>
${pager({ page, pageSize, total: result.count, href: (target) => searchHref(view.form, target), label: 'Result pages' })}`;
  }
  const first = (page - 1) * pageSize + 1;
  return html`<p>${result.count === 1 ? '1 record' : `${result.count} records`}; ${first}–${first + result.entities.length - 1} shown.</p>
<ol class="results" start="${first}">${result.entities.map(
    (entity) => html`<li><a href="${recordPath({ entityId: entity.entityId })}">${entity.name || `Record ${entity.entityId}`}</a>
  <span class="meta">${entity.entityType} · ${entity.entityId}</span>${entity.description && html`<br><span class="text">${entity.description}</span>`}</li>`,
  )}</ol>
${pager({ page, pageSize, total: result.count, href: (target) => searchHref(view.form, target), label: 'Result pages' })}`;
}
