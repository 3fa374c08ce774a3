import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSettings, settingsDocument } from '../../tools/settings-reference.ts';

const source = readFileSync(new URL('../../config.ts', import.meta.url), 'utf8');

describe('the settings reference generated from config.ts', () => {
  it('documents every setting, and docs/settings.md is what config.ts says', () => {
    expect(readSettings(source).undocumented).toEqual([]);
    expect(readFileSync(new URL('../../docs/settings.md', import.meta.url), 'utf8')).toBe(settingsDocument(source));
  });

  it('finds a setting without a comment, and a changed comment changes the document', () => {
    const bare = source.replace(/ {2}\/\*\* Largest test batch[^\n]*\n/, '');
    expect(readSettings(bare).undocumented).toEqual(['TEST_BATCH_MAX_CHANGES']);
    const changed = source.replace('Largest test batch (422 TooManyChanges above).', 'Largest test batch.');
    expect(settingsDocument(changed)).not.toBe(settingsDocument(source));
  });
});
