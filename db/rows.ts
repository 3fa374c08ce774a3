/**
 * An entity's columns as a loaded row holds them: every column present, null
 * where it is null (the entity type leaves nullable and defaulted ones
 * optional, for inserts), without the ORM's symbol-keyed type hints. What
 * the repositories hand out.
 */
export type Columns<Entity> = { [Key in keyof Entity as Key extends string ? Key : never]-?: Exclude<Entity[Key], undefined> };

/** An entity the EntityManager loaded (with every column it was asked for), as its row; undefined when none was found. */
export function asRow<Row>(entity: object | null): Row | undefined {
  return (entity ?? undefined) as Row | undefined;
}
