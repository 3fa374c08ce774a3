// Small factories for batch documents, built from the domain model and
// written by the project's own serializer.
import { randomUUID } from 'node:crypto';
import type {
  ChangeCommand,
  CreateEntityCommand,
  Part,
  RecordChange,
  UpdateEntityCommand,
  UserInfo,
  XmlVersion,
} from '../../domain/model.ts';
import { serializeBatch } from '../../domain/xml/index.ts';

export const SENDER: UserInfo = { id: 'u-1', name: 'Jana Nováková' };

export function namePart(name: string, extra: Partial<Part> = {}): Part {
  return { partUuid: randomUUID(), type: 'PT_NAME', items: [{ kind: 'string', type: 'NM_MAIN', value: name }], ...extra };
}

export function create(
  localId: string,
  name: string,
  options: { entityType?: string; entityUuid?: string; parts?: Part[] } = {},
): CreateEntityCommand {
  return {
    kind: 'create',
    localId,
    entityType: options.entityType ?? 'PERSON',
    ...(options.entityUuid ? { entityUuid: options.entityUuid } : {}),
    parts: options.parts ?? [namePart(name)],
  };
}

export function update(localId: string, entityId: number, rev: string, changes: RecordChange[]): UpdateEntityCommand {
  return { kind: 'update', entity: { kind: 'stored', localId, entityId, rev }, changes };
}

export function batchXml(commands: ChangeCommand[], options: { uuid?: string; version?: XmlVersion } = {}): string {
  return serializeBatch(
    { version: options.version ?? 'v2', batchUuid: options.uuid ?? randomUUID(), sender: SENDER },
    commands,
    options.version ?? 'v2',
  );
}
