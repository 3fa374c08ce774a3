// The one data generator of benchmarks and volume tests: N new entities with
// realistic Czech names, three parts of about eight items each, and some
// references between entities. Deterministic for a given seed.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { CreateEntityCommand, Item, Part } from '../../domain/model.ts';
import { writeBatch } from '../../domain/xml/index.ts';

const FIRST_NAMES = [
  'Jan',
  'Petr',
  'Josef',
  'Pavel',
  'Jiří',
  'Martin',
  'Tomáš',
  'Jaroslav',
  'Miroslav',
  'Zdeněk',
  'Marie',
  'Jana',
  'Eva',
  'Hana',
  'Anna',
  'Lenka',
  'Kateřina',
  'Věra',
  'Lucie',
  'Alena',
  'Božena',
  'Ludmila',
  'Václav',
  'Karel',
  'František',
];
const SURNAMES = [
  'Novák',
  'Svoboda',
  'Novotný',
  'Dvořák',
  'Černý',
  'Procházka',
  'Kučera',
  'Veselý',
  'Horák',
  'Němec',
  'Marek',
  'Pospíšil',
  'Pokorný',
  'Hájek',
  'Král',
  'Jelínek',
  'Růžička',
  'Beneš',
  'Fiala',
  'Sedláček',
  'Doležal',
  'Zeman',
  'Kolář',
  'Navrátil',
  'Čermák',
  'Šťastný',
  'Říha',
  'Vaněk',
  'Urban',
  'Kříž',
];
const PLACES = [
  'Praha',
  'Brno',
  'Ostrava',
  'Plzeň',
  'Liberec',
  'Olomouc',
  'České Budějovice',
  'Hradec Králové',
  'Ústí nad Labem',
  'Pardubice',
  'Zlín',
  'Jihlava',
  'Kutná Hora',
  'Tábor',
  'Třebíč',
  'Kroměříž',
];
const OCCUPATIONS = [
  'učitel',
  'lékař',
  'kovář',
  'malíř',
  'spisovatel',
  'hudební skladatel',
  'architekt',
  'kněz',
  'advokát',
  'úředník',
  'statkář',
  'inženýr',
  'archivář',
  'sochař',
  'historik',
];

/** mulberry32: small, fast and good enough to make the same data for the same seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed whose stream begins `skip` draws after the stream of `seed`
 * (mulberry32 advances its state by a constant): generators seeded with
 * streamSeed(seed, k * drawsPerChunk) for k = 0, 1, 2, ... draw disjoint
 * stretches of one stream, so chunks generated apart share no UUIDs.
 */
export function streamSeed(seed: number, skip: number): number {
  const low = skip % 2 ** 16;
  const high = Math.floor(skip / 2 ** 16) % 2 ** 16;
  return (seed + Math.imul(0x6d2b79f5, low) + Math.imul(Math.imul(0x6d2b79f5, high), 2 ** 16)) >>> 0;
}

/** Draws of `seededRandom` that generateCreates makes per entity, at most (a bound for streamSeed). */
export const DRAWS_PER_ENTITY = 160;

/** UUID v4 shaped from the generator, so that runs are repeatable (the schema accepts v1 and v4 only). */
function seededUuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + Math.floor(random() * 4)).toString(16);
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** How a record's names are drawn, each from one number of the generator's stream. */
export interface NameDraw {
  given(random: () => number): string;
  surname(random: () => number): string;
}

export interface GeneratorOptions {
  seed?: number;
  /** Names drawn other than evenly from the short lists above (bench/lib/zipf-names.ts). */
  names?: NameDraw;
  /** Entity type of every generated record. */
  entityType?: string;
  /** Prefix of localIds, so that several batches of one run stay distinct. */
  localIdPrefix?: string;
}

export function* generateCreates(count: number, options: GeneratorOptions = {}): Generator<CreateEntityCommand> {
  const random = seededRandom(options.seed ?? 1);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const prefix = options.localIdPrefix ?? 'e';
  for (let index = 0; index < count; index += 1) {
    const first = options.names ? options.names.given(random) : pick(FIRST_NAMES);
    const surname = options.names ? options.names.surname(random) : pick(SURNAMES);
    const born = 1800 + Math.floor(random() * 180);
    const died = born + 30 + Math.floor(random() * 60);
    const place = pick(PLACES);
    const occupation = pick(OCCUPATIONS);
    const nameItems: Item[] = [
      { kind: 'string', type: 'NM_MAIN', value: surname },
      { kind: 'string', type: 'NM_MINOR', value: first },
      { kind: 'string', type: 'NM_DEGREE_PRE', value: random() < 0.2 ? 'PhDr.' : 'Ing.' },
      { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
      // The life dates and a serial keep every preferred name unique, so no batch stops on PreferredNameExists.
      { kind: 'string', type: 'NM_SUP_GEN', value: `${born}–${died}, ${prefix}${index}` },
      { kind: 'enum', type: 'NM_LANG', spec: 'LNG_ces' },
      { kind: 'string', type: 'NOTE', value: `${first} ${surname}, ${occupation}` },
      { kind: 'boolean', type: 'NM_USED_FROM_BIRTH', value: random() < 0.9 },
    ];
    const bodyItems: Item[] = [
      { kind: 'string', type: 'BRIEF_DESC', value: `${occupation}, ${place}` },
      { kind: 'string', type: 'HISTORY', value: `Narozen(a) v obci ${place}, působil(a) jako ${occupation}.` },
      { kind: 'int', type: 'SOURCE_COUNT', value: String(1 + Math.floor(random() * 20)) },
      { kind: 'link', type: 'SOURCE_LINK', url: `https://example.org/osoby/${index}`, name: `${first} ${surname}` },
      { kind: 'enum', type: 'GENDER', spec: random() < 0.5 ? 'GT_MALE' : 'GT_FEMALE' },
      { kind: 'string', type: 'SOURCE_INFO', value: `Matrika ${place} ${born}` },
      { kind: 'boolean', type: 'VERIFIED', value: random() < 0.5 },
      { kind: 'string', type: 'NOTE', value: `Záznam ${index + 1}` },
    ];
    const eventItems: Item[] = [
      {
        kind: 'unitDate',
        type: 'CRE_DATE',
        from: `${born}-01-01`,
        to: `${born}-12-31`,
        format: 'Y',
        fromEstimate: false,
        toEstimate: false,
      },
      { kind: 'enum', type: 'CRE_CLASS', spec: 'CRC_BIRTH' },
      { kind: 'string', type: 'PLACE_NAME', value: place },
      { kind: 'unitDate', type: 'EXT_DATE', from: `${died}-01-01`, to: `${died}-12-31`, format: 'Y' },
      { kind: 'string', type: 'NOTE', value: `${place}, ${born}` },
      { kind: 'int', type: 'AGE', value: String(died - born) },
      { kind: 'boolean', type: 'ESTIMATED', value: false },
      // Every tenth record points at an earlier record of the same batch.
      index > 0 && index % 10 === 0
        ? { kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_RELATED', target: { kind: 'local', localId: `${prefix}${index - 1}` } }
        : { kind: 'string', type: 'REL_NOTE', value: 'bez vztahu' },
    ];
    const parts: Part[] = [
      { partUuid: seededUuid(random), type: 'PT_NAME', items: nameItems },
      { partUuid: seededUuid(random), type: 'PT_BODY', items: bodyItems },
      { partUuid: seededUuid(random), type: 'PT_CRE', items: eventItems },
    ];
    yield {
      kind: 'create',
      localId: `${prefix}${index}`,
      entityType: options.entityType ?? 'PERSON',
      entityUuid: seededUuid(random),
      parts,
    };
  }
}

/** Writes a v2 batch of `count` creates to `path`, streamed; returns its size in bytes. */
export async function writeGeneratedBatch(
  path: string,
  count: number,
  options: GeneratorOptions & { batchUuid?: string } = {},
): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  const header = { version: 'v2' as const, batchUuid: options.batchUuid, sender: { id: 'bench', name: 'Benchmark' } };
  for await (const chunk of writeBatch(header, generateCreates(count, options), 'v2')) {
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
  return bytes;
}
