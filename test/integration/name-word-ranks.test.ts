// Migration20261129000300NameWordRanks: every name word carries its entity's
// type and the fewest trigrams of the entity's names holding it, both when
// the migration rebuilds the table from names stored before it and as names
// and types change after it (triggers, which loaders running as replicas
// keep too); down() gives the old table back. A database of its own,
// migrated step by step.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, openOrm, type Orm } from '../../db/orm.ts';
import { dropScratchDatabase, scratchDatabaseUrl } from '../support/scratch-database.ts';

const BEFORE = 'Migration20261129000200EntityEacCpf';
const MIGRATION = 'Migration20261129000300NameWordRanks';

interface WordRow {
  word: string;
  entity_id: string;
  preferred: boolean;
  entity_type: string;
  trigrams: number;
}

describe('name words with their entity type and trigram count', () => {
  const url = scratchDatabaseUrl(`name_word_ranks_${randomBytes(3).toString('hex')}`);
  let orm: Orm;
  let client: pg.Client;

  beforeAll(async () => {
    await ensureDatabase(url);
    orm = await openOrm(url);
    await orm.migrator.up({ to: BEFORE });
    client = new pg.Client({ connectionString: withDatabaseUser(url) });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await orm?.close();
    await dropScratchDatabase(url);
  });

  const insertEntity = (id: number, entityType: string) =>
    client.query(
      `insert into entity (id, uuid, entity_type, state, rev, metadata_rev, last_seq, record) values ($1, $2, $3, 'ERS_NEW', $4, $4, 0, '{}')`,
      [id, randomUUID(), entityType, randomUUID()],
    );
  const insertNames = (entityId: number, names: Array<[string, boolean]>) =>
    client.query(
      `insert into search_value (entity_id, part_uuid, part_type, preferred, kind, item_type, value, value_norm)
       select $1, gen_random_uuid(), 'PT_NAME', n.preferred, 'name', null, n.value, n.value from unnest($2::text[], $3::boolean[]) n(value, preferred)`,
      [entityId, names.map(([value]) => value), names.map(([, preferred]) => preferred)],
    );
  const words = async (entityId: number, word?: string): Promise<WordRow[]> =>
    (
      await client.query<WordRow>(
        `select word, entity_id::text, preferred, entity_type, trigrams from name_word
          where entity_id = $1 and ($2::text is null or word = $2) order by word, preferred`,
        [entityId, word ?? null],
      )
    ).rows;
  /** pg_trgm's distinct trigrams of a text: what similarity() divides by. */
  const trigrams = async (text: string) =>
    (await client.query<{ n: number }>('select array_length(show_trgm($1), 1) as n', [text])).rows[0]!.n;

  it('rebuilds the words of names stored before it, then keeps them as names and types change', async () => {
    await insertEntity(1, 'PERSON');
    await insertNames(1, [
      ['novak, jan (1900-1950)', true],
      ['jan novak', false],
      ['novak, jan nepomuk', false],
    ]);
    await insertEntity(2, 'FAMILY');
    await insertNames(2, [['svoboda', true]]);

    await orm.migrator.up({ to: MIGRATION });
    // The preferred name alone holds `jan` among preferred names; of the others, `jan novak` has the fewer trigrams.
    expect(await words(1, 'jan')).toEqual([
      { word: 'jan', entity_id: '1', preferred: false, entity_type: 'PERSON', trigrams: await trigrams('jan novak') },
      { word: 'jan', entity_id: '1', preferred: true, entity_type: 'PERSON', trigrams: await trigrams('novak, jan (1900-1950)') },
    ]);
    expect((await words(2)).map((row) => [row.word, row.entity_type])).toEqual([['svoboda', 'FAMILY']]);

    // A name added by a statement of its own, shorter than the others: the smaller count wins.
    await insertNames(1, [['jan', false]]);
    expect((await words(1, 'jan')).find((row) => !row.preferred)?.trigrams).toBe(await trigrams('jan'));
    // A name removed: the entity's words are rebuilt from the names it keeps.
    await client.query(`delete from search_value where entity_id = 1 and value_norm in ('jan', 'jan novak')`);
    expect((await words(1, 'jan')).find((row) => !row.preferred)?.trigrams).toBe(await trigrams('novak, jan nepomuk'));
    expect(await words(1, 'nepomuk')).toHaveLength(1);

    // A type changed: every word of the entity follows, also for a loader writing as a replica.
    await client.query(`update entity set entity_type = 'CORPORATION' where id = 1`);
    expect(new Set((await words(1)).map((row) => row.entity_type))).toEqual(new Set(['CORPORATION']));
    await client.query('set session_replication_role = replica');
    try {
      await client.query(`update entity set entity_type = 'EVENT' where id = 1`);
      await insertEntity(3, 'PERSON');
      await insertNames(3, [['dvorak, eva', true]]);
    } finally {
      await client.query('set session_replication_role = origin');
    }
    expect(new Set((await words(1)).map((row) => row.entity_type))).toEqual(new Set(['EVENT']));
    expect((await words(3)).map((row) => [row.word, row.entity_type, row.trigrams])).toEqual([
      ['dvorak', 'PERSON', await trigrams('dvorak, eva')],
      ['eva', 'PERSON', await trigrams('dvorak, eva')],
    ]);

    // down() gives the table its old columns back, and its triggers still keep it.
    await orm.migrator.down({ to: BEFORE });
    const { rows: columns } = await client.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name = 'name_word' order by ordinal_position`,
    );
    expect(columns.map((column) => column.column_name)).toEqual(['word', 'entity_id', 'preferred']);
    await insertNames(2, [['svobodova', false]]);
    expect((await client.query('select count(*)::int as n from name_word where entity_id = 2')).rows[0].n).toBe(2);
    await orm.migrator.up({ to: MIGRATION });
    expect((await words(2)).map((row) => [row.word, row.preferred, row.entity_type])).toEqual([
      ['svoboda', true, 'FAMILY'],
      ['svobodova', false, 'FAMILY'],
    ]);
  });
});
