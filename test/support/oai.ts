// Reading OAI-PMH responses in tests: the few elements the assertions need,
// and a whole harvest followed through its resumption tokens.

export interface OaiAnswer {
  status: number;
  contentType: string;
  text: string;
}

export interface HarvestedItem {
  identifier: string;
  datestamp: string;
  deleted: boolean;
  setSpec: string | undefined;
  /** The content of the metadata element; undefined when the record has none. */
  metadata: string | undefined;
}

export interface Harvest {
  firstResponseDate: string;
  items: HarvestedItem[];
  pages: number;
  /** completeListSize of the first page's token (undefined for a list in one page). */
  completeListSize: number | undefined;
  /** Every page as served, in order. */
  texts: string[];
}

export async function oaiGet(baseUrl: string, query: string, init: RequestInit = {}): Promise<OaiAnswer> {
  const response = await fetch(`${baseUrl}/oai${query === '' ? '' : `?${query}`}`, init);
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

export function errorCodes(text: string): string[] {
  return [...text.matchAll(/<error code="([^"]+)">/g)].map((match) => match[1]!);
}

export function responseDate(text: string): string {
  return /<responseDate>([^<]+)<\/responseDate>/.exec(text)![1]!;
}

/** The request element's attributes as echoed. */
export function echoedRequest(text: string): Record<string, string> {
  const attributes = /<request([^>]*)>/.exec(text)![1]!;
  return Object.fromEntries([...attributes.matchAll(/ (\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!.replace(/&amp;/g, '&')]));
}

export function items(text: string): HarvestedItem[] {
  const found: HarvestedItem[] = [];
  for (const match of text.matchAll(
    /<header( status="deleted")?><identifier>([^<]+)<\/identifier><datestamp>([^<]+)<\/datestamp>(?:<setSpec>([^<]+)<\/setSpec>)?<\/header>(?:<metadata>([\s\S]*?)<\/metadata>)?/g,
  )) {
    found.push({ identifier: match[2]!, datestamp: match[3]!, deleted: match[1] !== undefined, setSpec: match[4], metadata: match[5] });
  }
  return found;
}

/** The page's resumptionToken element; completeListSize is undefined where the list's size was left out. */
export function resumptionToken(text: string): { token: string; completeListSize: number | undefined; cursor: number } | undefined {
  const match = /<resumptionToken(?: completeListSize="(\d+)")? cursor="(\d+)">([^<]*)<\/resumptionToken>/.exec(text);
  return match
    ? { token: match[3]!, completeListSize: match[1] === undefined ? undefined : Number(match[1]), cursor: Number(match[2]) }
    : undefined;
}

/**
 * A list followed to its end. `between` runs after the first page (to commit
 * while the harvest is under way).
 */
export async function harvest(baseUrl: string, query: string, init: RequestInit = {}, between?: () => Promise<void>): Promise<Harvest> {
  const first = await oaiGet(baseUrl, query, init);
  if (first.status !== 200) throw new Error(`${query}: HTTP ${first.status} ${first.text}`);
  const verb = /verb=(\w+)/.exec(query)![1]!;
  const result: Harvest = {
    firstResponseDate: responseDate(first.text),
    items: [],
    pages: 0,
    completeListSize: resumptionToken(first.text)?.completeListSize,
    texts: [],
  };
  let page = first;
  for (;;) {
    if (errorCodes(page.text).length > 0) throw new Error(`${query}: ${page.text}`);
    result.pages += 1;
    result.texts.push(page.text);
    result.items.push(...items(page.text));
    const token = resumptionToken(page.text)?.token;
    if (token === undefined || token === '') return result;
    if (result.pages === 1 && between) await between();
    page = await oaiGet(baseUrl, `verb=${verb}&resumptionToken=${encodeURIComponent(token)}`, init);
    if (page.status !== 200) throw new Error(`${query}: HTTP ${page.status} ${page.text}`);
  }
}
