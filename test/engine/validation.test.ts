import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../../domain/errors.ts';
import {
  BatchValidator,
  detectVersion,
  validateBatchXml,
  validateDocument,
  type SchemaVersion,
  type ValidateOptions,
} from '../../engine/validation/index.ts';

const V2 = 'http://cam.tacr.cz/2025';
const V1 = 'http://cam.tacr.cz/2019';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const fixture = (name: string): Promise<Uint8Array> => readFile(new URL(`../fixtures/validation/${name}`, import.meta.url));
const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

const batchV2 = (changes: string): string =>
  `<batchUpdate xmlns="${V2}">\n  <info><sender><id>u</id><name>Jana Nováková</name></sender></info>\n${changes}\n</batchUpdate>`;
const batchV1 = (changes: string): string => `<bu xmlns="${V1}">\n  <inf><usr>Jana Nováková</usr></inf>\n${changes}\n</bu>`;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the validation to fail');
}

async function schemaProblems(xml: string | Uint8Array, options?: ValidateOptions): Promise<XmlProblem[]> {
  const error = await rejection(validateBatchXml(typeof xml === 'string' ? bytes(xml) : xml, options));
  expect(error).toBeInstanceOf(SchemaViolationError);
  return (error as SchemaViolationError).problems;
}

/** Rejected as InvalidXmlError, with a position; returns the first problem. (How fast: bench/validate.ts.) */
async function invalidXml(xml: string | Uint8Array, options?: ValidateOptions): Promise<XmlProblem> {
  const error = await rejection(validateBatchXml(typeof xml === 'string' ? bytes(xml) : xml, options));
  expect(error).toBeInstanceOf(InvalidXmlError);
  const [problem] = (error as InvalidXmlError).problems;
  expect(problem?.line).toBeGreaterThanOrEqual(1);
  expect(problem?.column).toBeGreaterThanOrEqual(1);
  return problem as XmlProblem;
}

beforeAll(async () => {
  // Loads the wasm module and compiles both schemas once, before the first test.
  await validateBatchXml(bytes(batchV2('')));
});

describe('valid batches', () => {
  it('accepts a v2 batch with every change and item kind', async () => {
    expect(await validateBatchXml(await fixture('v2-all-changes.xml'))).toEqual({
      version: 'v2',
      changes: 9,
      batchUuid: '6f1c2a52-3d1e-4b7a-9c55-0a1b2c3d4e5f',
    });
  });

  it('accepts a v1 batch with every change and item kind', async () => {
    expect(await validateBatchXml(await fixture('v1-all-changes.xml'))).toEqual({
      version: 'v1',
      changes: 6,
      batchUuid: '6f1c2a52-3d1e-4b7a-9c55-0a1b2c3d4e5f',
    });
  });

  const stored = `<entity localId="e1" entityId="1001" rev="${uuid(1)}"/>`;
  const v2Changes: Record<string, string> = {
    createEntity: `<createEntity localId="n1" entityType="PERSON" entityUuid="${uuid(2)}"><parst><part type="PT_NAME"><items><string type="NM_MAIN">Dvořák</string></items></part></parst></createEntity>`,
    newPart: `<updateEntity>${stored}<newPart type="PT_BODY"><items><string type="BRIEF">Skladatel</string></items></newPart></updateEntity>`,
    newItems: `<updateEntity>${stored}<newItems type="PT_NAME" partUuid="${uuid(3)}"><string type="NM_MINOR">Antonín</string></newItems></updateEntity>`,
    updateItems: `<updateEntity>${stored}<updateItems type="PT_NAME" partUuid="${uuid(3)}"><string type="NM_MINOR" uuid="${uuid(4)}">Antonín Leopold</string></updateItems></updateEntity>`,
    deletePart: `<updateEntity>${stored}<deletePart type="PT_EVENT" partUuid="${uuid(3)}"/></updateEntity>`,
    deleteItems: `<updateEntity>${stored}<deleteItems type="PT_NAME" partUuid="${uuid(3)}"><itemRef type="NM_MINOR"/></deleteItems></updateEntity>`,
    setEntityType: `<updateEntity>${stored}<setEntityType>PERSON_INDIVIDUAL</setEntityType></updateEntity>`,
    setPrefferedName: `<updateEntity>${stored}<setPrefferedName>${uuid(3)}</setPrefferedName></updateEntity>`,
    setState: `<updateEntity>${stored}<setState><state>ERS_APPROVED</state></setState></updateEntity>`,
    addParticipant: `<updateEntity>${stored}<addParticipant><role>APPROVER</role><lastChange>2025-03-01T10:00:00Z</lastChange><user><id>p</id><name>Petr Černý</name></user></addParticipant></updateEntity>`,
    addIssue: `<updateEntity>${stored}<addIssue><uuid>${uuid(5)}</uuid><severity>ERROR</severity><message>Chybí jméno.</message></addIssue></updateEntity>`,
    removeIssue: `<updateEntity>${stored}<removeIssue>${uuid(5)}</removeIssue></updateEntity>`,
    addIssueStatus: `<updateEntity>${stored}<addIssueStatus><resolution>IR_FIX_NEEDED</resolution><user><id>p</id><name>Petr</name></user><updated>2025-03-01T10:00:00Z</updated><issueUuid>${uuid(5)}</issueUuid></addIssueStatus></updateEntity>`,
    updateByLocalRef: `<createEntity localId="n1" entityType="PERSON"/><updateEntity><entityRef>n1</entityRef><setEntityType>PERSON_GROUP</setEntityType></updateEntity>`,
    severalChanges: `<updateEntity>${stored}<setEntityType>PERSON_GROUP</setEntityType><removeIssue>${uuid(5)}</removeIssue><setState><state>ERS_INVALID</state></setState></updateEntity>`,
  };
  it.each(Object.entries(v2Changes))('accepts a minimal v2 batch with %s', async (_kind, change) => {
    expect(await validateBatchXml(bytes(batchV2(change)))).toMatchObject({ version: 'v2' });
  });

  const storedV1 = `<e lid="e1" eid="1001" rev="${uuid(1)}"/>`;
  const v1Changes: Record<string, string> = {
    ce: `<ce lid="n1" et="PERSON" euid="${uuid(2)}"><prts><p t="PT_NAME"><itms><si t="NM_MAIN">Dvořák</si></itms></p></prts></ce>`,
    nip: `<ue>${storedV1}<nip t="PT_BODY"><itms><si t="BRIEF">Skladatel</si></itms></nip></ue>`,
    nis: `<ue>${storedV1}<nis t="PT_NAME" pid="${uuid(3)}"><si t="NM_MINOR">Antonín</si></nis></ue>`,
    uis: `<ue>${storedV1}<uis t="PT_NAME" pid="${uuid(3)}"><si t="NM_MINOR" uuid="${uuid(4)}">Antonín Leopold</si></uis></ue>`,
    dp: `<ue>${storedV1}<dp t="PT_EVENT" pid="${uuid(3)}"/></ue>`,
    dis: `<ue>${storedV1}<dis t="PT_NAME" pid="${uuid(3)}"><ir t="NM_MINOR"/></dis></ue>`,
    set: `<ue>${storedV1}<set>PERSON_INDIVIDUAL</set></ue>`,
    srs: `<ue>${storedV1}<srs><rs>ERS_REPLACED</rs><er eid="1002"/></srs></ue>`,
    spfn: `<ue>${storedV1}<spfn>${uuid(3)}</spfn></ue>`,
    updateByLocalRef: `<ce lid="n1" et="PERSON"/><ue><lid>n1</lid><srs><rs>ERS_INVALID</rs></srs></ue>`,
    severalChanges: `<ue>${storedV1}<set>PERSON_GROUP</set><spfn>${uuid(3)}</spfn></ue>`,
  };
  it.each(Object.entries(v1Changes))('accepts a minimal v1 batch with %s', async (_kind, change) => {
    expect(await validateBatchXml(bytes(batchV1(change)))).toMatchObject({ version: 'v1' });
  });

  const v2Items: Record<string, string> = {
    binary: `<binary type="SCAN">iVBORw0KGgo=</binary>`,
    boolean: `<boolean type="FLAG">false</boolean>`,
    entityRef: `<entityRef type="REL"><entityRef entityUuid="${uuid(6)}"/></entityRef>`,
    localEntityRef: `<entityRef type="REL"><localEntityRef>n1</localEntityRef></entityRef>`,
    enum: `<enum type="GENDER" spec="GT_FEMALE"/>`,
    int: `<int type="ORDER">-12345678901234567890</int>`,
    link: `<link type="SRC"><url>https://example.cz/</url></link>`,
    string: `<string type="NOTE">Žluťoučký kůň &amp; &lt;úpěl&gt;</string>`,
    unitDate: `<unitDate type="BIRTH" from="-0500-01-01T00:00:00" to="-0500-12-31T23:59:59" format="Y"/>`,
  };
  it.each(Object.entries(v2Items))('accepts a v2 %s item', async (_kind, item) => {
    const change = `<createEntity localId="n1" entityType="PERSON"><parst><part type="PT_BODY"><items>${item}</items></part></parst></createEntity>`;
    expect(await validateBatchXml(bytes(batchV2(change)))).toMatchObject({ version: 'v2' });
  });

  const v1Items: Record<string, string> = {
    ci: `<ci t="SCAN">iVBORw0KGgo=</ci>`,
    bi: `<bi t="FLAG">1</bi>`,
    ai: `<ai t="REL"><er eid="7"/></ai>`,
    aiLocal: `<ai t="REL"><lid>n1</lid></ai>`,
    ei: `<ei t="GENDER" s="GT_FEMALE"/>`,
    ii: `<ii t="ORDER">42</ii>`,
    li: `<li t="SRC"><url>https://example.cz/</url><nm>Odkaz</nm></li>`,
    si: `<si t="NOTE">Žluťoučký kůň</si>`,
    di: `<di t="BIRTH" f="1900-01-01T00:00:00" to="1900-12-31T23:59:59" fmt="Y"/>`,
  };
  it.each(Object.entries(v1Items))('accepts a v1 %s item', async (_kind, item) => {
    const change = `<ce lid="n1" et="PERSON"><prts><p t="PT_BODY"><itms>${item}</itms></p></prts></ce>`;
    expect(await validateBatchXml(bytes(batchV1(change)))).toMatchObject({ version: 'v1' });
  });

  it('accepts parts as well as parst in a v2 batch', async () => {
    const change = `<createEntity localId="n1" entityType="PERSON"><parts><part type="PT_NAME"><items><string type="NM_MAIN">Dvořák</string></items></part></parts></createEntity>`;
    expect(await validateBatchXml(bytes(batchV2(change)))).toMatchObject({ version: 'v2' });
  });

  it('accepts a prefixed root, comments and processing instructions', async () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?>\n<!-- <bu> in a comment -->\n<?app hint?>\n<c:batchUpdate xmlns:c="${V2}"><c:info><c:sender><c:id>u</c:id><c:name>n</c:name></c:sender></c:info><!-- ok --></c:batchUpdate>\n<!-- after -->`;
    expect(await validateBatchXml(bytes(xml))).toMatchObject({ version: 'v2' });
  });
});

describe('schema errors', () => {
  const invalidBatch = [
    `<batchUpdate xmlns="${V2}">`,
    `  <info uuid="not-a-uuid"><sender><id>u</id><name>n</name></sender></info>`,
    `  <createEntity localId="n1" entityType=""/>`,
    `  <createEntity localId="n2" entityType="PERSON"><parst><part type="PT_FOO"/></parst></createEntity>`,
    `  <updateEntity><entityRef>n1</entityRef></updateEntity>`,
    `  <createEntity localId="n1" entityType="PERSON"><parst><part type="PT_BODY"><items><int type="Č">dvě</int></items></part></parst></createEntity>`,
    `</batchUpdate>`,
  ].join('\n');

  it('lists every schema error with line, column and message', async () => {
    const problems = await schemaProblems(invalidBatch);
    expect(problems.map(({ line, column }) => [line, column])).toEqual([
      [2, 3],
      [2, 3],
      [3, 3],
      [4, 57],
      [5, 3],
      [6, 3],
      [6, 85],
    ]);
    expect(problems[0]?.message).toMatch(/info.*uuid.*length/);
    expect(problems[2]?.message).toMatch(/createEntity.*entityType.*minLength/);
    expect(problems[3]?.message).toMatch(/part.*PT_FOO/);
    expect(problems[4]?.message).toMatch(/updateEntity.*Missing child element/);
    expect(problems[5]?.message).toMatch(/localId.*'n1'.*xs:ID/);
    expect(problems[6]?.message).toMatch(/int.*'dvě'.*Integer/);
    // Names in the document's own namespace are shown without it.
    expect(problems.some((p) => p.message.includes(V2))).toBe(false);
  });

  it('reports v1 schema errors', async () => {
    const problems = await schemaProblems(
      batchV1(`<ce lid="n1" et="PERSON"><prts><p t="PT_NAME"><itms><xi t="X"/></itms></p></prts></ce>`),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 3, column: 53 });
    expect(problems[0]?.message).toMatch(/xi.*not expected/);
  });

  it('rejects v1 names in a v2 batch', async () => {
    const problems = await schemaProblems(batchV2(`<createEntity localId="n1" entityType="PERSON"><prts/></createEntity>`));
    expect(problems[0]?.message).toMatch(/prts.*not expected/);
  });

  it('rejects an updateEntity without a change', async () => {
    const problems = await schemaProblems(batchV2(`<updateEntity><entity localId="e1" entityId="1" rev="${uuid(1)}"/></updateEntity>`));
    expect(problems[0]?.message).toMatch(/Missing child element/);
  });

  it('lists at most maxProblems errors and says that more exist', async () => {
    const changes = Array.from({ length: 30 }, (_, i) => `<createEntity localId="n${i}" entityType=""/>`).join('\n');
    const problems = await schemaProblems(batchV2(changes), { maxProblems: 10 });
    expect(problems).toHaveLength(11);
    expect(problems[10]?.message).toMatch(/More than 10 schema errors/);
  });

  it('keeps positions exact past line 65535', async () => {
    const changes = Array.from({ length: 70_000 }, (_, i) => `<createEntity localId="n${i}" entityType="P"/>`).join('\n');
    const problems = await schemaProblems(batchV2(`${changes}\n  <createEntity localId="x" entityType=""/>`));
    expect(problems).toEqual([expect.objectContaining({ line: 70_003, column: 3 })]);
  });
});

describe('slices', () => {
  // A slice size of one byte puts every top-level element in its own slice.
  const sliced = { sliceBytes: 1 };

  it('validates the fixtures the same in slices', async () => {
    expect(await validateBatchXml(await fixture('v2-all-changes.xml'), sliced)).toMatchObject({ version: 'v2' });
    expect(await validateBatchXml(await fixture('v1-all-changes.xml'), sliced)).toMatchObject({ version: 'v1' });
  });

  it('reports the same schema errors at the same positions', async () => {
    const xml = batchV2(
      [
        `<createEntity localId="n1" entityType=""/>`,
        `  <createEntity localId="n2" entityType="PERSON">\n    <parst><part type="PT_FOO"/></parst>\n  </createEntity>`,
        `<updateEntity><entityRef>n1</entityRef></updateEntity>  <createEntity localId="n3" entityType="P"><parst><part type="PT_BODY"><items><int type="I">x</int></items></part></parst></createEntity>`,
      ].join('\n'),
    );
    const whole = await schemaProblems(xml);
    expect(whole).toHaveLength(4);
    expect(await schemaProblems(xml, sliced)).toEqual(whole);
  });

  it('reports a header error once', async () => {
    const xml = `<batchUpdate xmlns="${V2}"><info uuid="x"><sender><id>u</id><name>n</name></sender></info>${'<createEntity localId="n1" entityType="P"/>'.repeat(1)}<createEntity localId="n2" entityType="P"/></batchUpdate>`;
    expect(await schemaProblems(xml, sliced)).toEqual(await schemaProblems(xml));
  });

  it('finds an ID repeated in another slice', async () => {
    const xml = batchV2(
      `<createEntity localId="n1" entityType="P"/>\n<createEntity localId="n2" entityType="P"/>\n  <updateEntity><entity localId="n1" entityId="1" rev="${uuid(1)}"/><setEntityType>X</setEntityType></updateEntity>`,
    );
    const problems = await schemaProblems(xml, sliced);
    expect(problems).toEqual([{ line: 5, column: 17, message: expect.stringMatching(/entity.*localId.*'n1'.*already used/) }]);
    expect((await schemaProblems(xml))[0]).toMatchObject({ line: 5, column: 17 });
  });

  it('finds the header ID repeated in a later slice once', async () => {
    const xml = `<batchUpdate xmlns="${V2}"><info><sender localId="u1"><id>u</id><name>n</name></sender></info><createEntity localId="n1" entityType="P"/><createEntity localId="u1" entityType="P"/></batchUpdate>`;
    expect(await schemaProblems(xml, sliced)).toHaveLength(1);
  });

  it('reports malformed XML in a later slice at its original position', async () => {
    const xml = batchV2(
      `<createEntity localId="n1" entityType="P"/>\n<createEntity localId="n2" entityType="P"/>\n<createEntity localId="n3" entityType="P">\n</createEntiti>`,
    );
    const whole = await invalidXml(xml);
    expect(whole).toMatchObject({ line: 6, message: expect.stringMatching(/mismatch/) });
    expect(await invalidXml(xml, sliced)).toEqual(whole);
  });

  it('rejects content after the root in the last slice', async () => {
    const xml = `${batchV2('<createEntity localId="n1" entityType="P"/>')}<x/>`;
    expect(await invalidXml(xml, sliced)).toEqual(await invalidXml(xml));
  });
});

describe('streamed in chunks', () => {
  /** The outcome of validating `xml` pushed `size` bytes at a time: the result, or the error's class and problems. */
  async function streamed(xml: Uint8Array, size: number, options?: ValidateOptions): Promise<unknown> {
    const validator = new BatchValidator(options);
    try {
      for (let offset = 0; offset < xml.length; offset += size) await validator.push(xml.subarray(offset, offset + size));
      return await validator.end();
    } catch (error) {
      return { error: (error as Error).constructor.name, problems: (error as InvalidXmlError).problems };
    } finally {
      validator.close();
    }
  }

  const documents: [string, string][] = [
    ['a valid batch', batchV2(Array.from({ length: 40 }, (_, i) => `<createEntity localId="n${i}" entityType="P"/>`).join('\n'))],
    [
      'schema errors',
      batchV2(
        `<createEntity localId="n1" entityType=""/>\n  <updateEntity><entityRef>n1</entityRef></updateEntity>\n<createEntity localId="n1" entityType="P"/>`,
      ),
    ],
    [
      'malformed XML late',
      batchV2(`${'<createEntity localId="a" entityType="P"/>\n'.repeat(20)}<createEntity localId="n3" entityType="P">\n</createEntiti>`),
    ],
    ['a DTD', `<?xml version="1.0"?>\n<!DOCTYPE batchUpdate>\n${batchV2('')}`],
    ['a wrong root', `<entities xmlns="${V2}"><x/></entities>`],
    ['no root', 'just text, no markup at all'],
    ['content after the root', `${batchV2('<createEntity localId="n1" entityType="P"/>')}<x/>`],
    ['a truncated document', batchV2('<createEntity localId="n1" entityType="P"/>').slice(0, -15)],
  ];

  it.each(documents)('judges %s the same in chunks of any size', async (_name, text) => {
    const xml = bytes(text);
    for (const options of [{}, { sliceBytes: 1 }, { sliceBytes: 200 }]) {
      const whole = await streamed(xml, xml.length, options);
      for (const size of [1, 3, 64, 1000]) expect(await streamed(xml, size, options)).toEqual(whole);
    }
  });

  it('validates the fixtures in chunks, in slices', async () => {
    const xml = await fixture('v2-all-changes.xml');
    expect(await streamed(xml, 7, { sliceBytes: 1 })).toEqual(await validateBatchXml(xml));
  });

  it('counts the changes as they arrive', async () => {
    const validator = new BatchValidator({ sliceBytes: 1 });
    try {
      const xml = batchV2(`${'<createEntity localId="n1" entityType="P"/>'.repeat(5)}<createEnt`);
      await validator.push(bytes(xml.slice(0, xml.indexOf('<createEnt\n'))));
      expect(validator.changesSoFar).toBe(5);
    } finally {
      validator.close();
    }
  });

  it('refuses a top-level element over maxElementBytes before it has ended', async () => {
    const validator = new BatchValidator({ maxElementBytes: 100 });
    try {
      const xml = batchV2('<createEntity localId="n1" entityType="P">');
      await validator.push(bytes(xml.slice(0, xml.lastIndexOf('\n'))));
      const error = await rejection(validator.push(bytes(' '.repeat(300))));
      expect(error).toBeInstanceOf(InvalidXmlError);
      expect((error as InvalidXmlError).problems[0]).toMatchObject({ line: 3, column: 1, message: expect.stringMatching(/larger than/) });
    } finally {
      validator.close();
    }
  });
});

describe('refused documents', () => {
  const minimal = batchV2('');

  it('rejects malformed XML', async () => {
    const problem = await invalidXml(`<batchUpdate xmlns="${V2}"><info></batchUpdate>`);
    expect(problem).toMatchObject({ line: 1, message: expect.stringMatching(/mismatch/) });
  });

  it('rejects a truncated document', async () => {
    expect((await invalidXml(minimal.slice(0, minimal.length - 20))).message).toMatch(/Premature end|EndTag|expected/i);
  });

  it('rejects an empty document', async () => {
    await invalidXml('');
  });

  it('rejects an external entity (XXE) without reading it', async () => {
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE batchUpdate [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<batchUpdate xmlns="${V2}"><info><sender><id>&xxe;</id><name>n</name></sender></info></batchUpdate>`;
    const problem = await invalidXml(xml);
    expect(problem).toMatchObject({ line: 2, column: 1, message: expect.stringMatching(/DTD/) });
    expect(problem.message).not.toMatch(/root:/);
  });

  it('rejects an entity expansion bomb (billion laughs)', async () => {
    const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol0 "lol">\n${levels}\n]>\n<batchUpdate xmlns="${V2}"><info><sender><id>&lol9;</id><name>n</name></sender></info></batchUpdate>`;
    expect((await invalidXml(xml)).message).toMatch(/DTD/);
  });

  it('rejects an undeclared entity reference', async () => {
    expect((await invalidXml(batchV2('<createEntity localId="n1" entityType="&bomb;"/>'))).message).toMatch(/Entity 'bomb' not defined/);
  });

  it('rejects 10,000 levels of nesting', async () => {
    const xml = `<batchUpdate xmlns="${V2}">${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</batchUpdate>`;
    const problem = await invalidXml(xml);
    expect(problem).toMatchObject({ line: 1, column: 45 + 3 * 255 + 1, message: expect.stringMatching(/deeper than 256/) });
  });

  it('applies a lower nesting limit', async () => {
    expect((await invalidXml(await fixture('v2-all-changes.xml'), { maxDepth: 5 })).message).toMatch(/deeper than 5/);
  });

  it('rejects a top-level element larger than maxElementBytes', async () => {
    const xml = batchV2(`<createEntity localId="n1" entityType="${'P'.repeat(200)}"/>`);
    expect(await invalidXml(xml, { maxElementBytes: 100 })).toMatchObject({
      line: 3,
      column: 1,
      message: expect.stringMatching(/larger than/),
    });
    expect(await validateBatchXml(bytes(xml), { maxElementBytes: 300 })).toMatchObject({ version: 'v2' });
  });

  it('rejects invalid UTF-8', async () => {
    const [head, tail] = minimal.split('Jana') as [string, string];
    const problem = await invalidXml(new Uint8Array([...bytes(head), 0xc3, 0x28, ...bytes(tail)]));
    expect(problem).toMatchObject({ line: 2, message: expect.stringMatching(/encoding|UTF-8/i) });
  });

  it('rejects other encodings', async () => {
    expect((await invalidXml(`<?xml version="1.0" encoding="ISO-8859-2"?>${minimal}`)).message).toMatch(/UTF-8, not ISO-8859-2/);
    const utf16 = Buffer.from(`\ufeff${minimal}`, 'utf16le');
    expect((await invalidXml(utf16)).message).toMatch(/UTF-8/);
  });

  it.each([
    ['a v2 document that is not a batch', `<entities xmlns="${V2}"/>`],
    ['the v1 root in the v2 namespace', `<bu xmlns="${V2}"><inf><usr>n</usr></inf></bu>`],
    ['the v2 root in the v1 namespace', `<batchUpdate xmlns="${V1}"/>`],
    ['a root without namespace', `<batchUpdate><info/></batchUpdate>`],
    ['an unknown namespace', `<x:bu xmlns:x="urn:other"/>`],
  ])('rejects %s', async (_case, xml) => {
    expect((await invalidXml(xml)).message).toMatch(/root element must be batchUpdate .* or bu /);
  });
});

describe('detectVersion', () => {
  it.each<[string, SchemaVersion | undefined]>([
    [`<batchUpdate xmlns="${V2}">`, 'v2'],
    [`\ufeff<?xml version="1.0"?>\n<!-- x -->\n<bu xmlns='${V1}'>`, 'v1'],
    [`<c:entities xmlns="urn:x" xmlns:c="${V2}" a=">">`, 'v2'],
    [`<bu xmlns:c="${V1}">`, undefined],
    [`<!DOCTYPE bu><bu xmlns="${V1}">`, undefined],
    [`<batchUpdate xmlns="${V2}`, undefined],
    ['', undefined],
  ])('reads %j as %s', (head, version) => {
    expect(detectVersion(head)).toBe(version);
  });
});

describe('validateDocument', () => {
  const user = `<user localId="u1"><id>archiv</id><uuid>${uuid(9)}</uuid><name>Jana Nováková</name></user>`;
  const issue = `<issue><uuid>${uuid(5)}</uuid><severity>WARNING</severity><message>Možná duplicita.</message><entityRef entityId="7"/><from>2025-03-01T10:00:00Z</from><status><resolution>IR_FIX_NEEDED</resolution><userRef>u1</userRef><updated>2025-03-02T10:00:00Z</updated></status><fromRev>${uuid(1)}</fromRev></issue>`;
  const parts = (name: string) =>
    `<${name}><part type="PT_NAME" partUuid="${uuid(3)}"><items><string type="NM_MAIN">Dvořák</string></items></part></${name}>`;
  const entity = (partsName: string) =>
    `<entity entityId="1001" entityUuid="${uuid(2)}" entityType="PERSON" state="ERS_REPLACED"><revision><rev>${uuid(1)}</rev><metadataRev>${uuid(4)}</metadataRev><prevRev>${uuid(6)}</prevRev>${user}<createdAt>2025-03-01T10:00:00Z</createdAt><participant><role>EDITOR</role><lastChange>2025-03-01T10:00:00Z</lastChange><userRef>u1</userRef></participant></revision>${parts(partsName)}<issues>${issue}</issues><replacedBy entityId="1002" entityUuid="${uuid(7)}"/></entity>`;
  const revInfo = `<revInfo entityId="1001" entityUuid="${uuid(2)}" rev="${uuid(1)}" metadataRev="${uuid(4)}"/>`;

  const v2Documents: Record<string, string> = {
    entity: entity('parst').replace('<entity ', `<entity xmlns="${V2}" `),
    'entity with parts': entity('parts').replace('<entity ', `<entity xmlns="${V2}" `),
    entities: `<entities xmlns="${V2}">${entity('parst')}</entities>`,
    'empty entities': `<entities xmlns="${V2}"/>`,
    batchChangeSuccess: `<batchChangeSuccess xmlns="${V2}" transaction="${uuid(8)}"><revision localId="n1" entityId="1001" entityUuid="${uuid(2)}" rev="${uuid(1)}" metadataRev="${uuid(4)}"/></batchChangeSuccess>`,
    batchChangeFailure: `<batchChangeFailure xmlns="${V2}"><issues localId="n1">${issue.replace('<userRef>u1</userRef>', user)}</issues><issues>${issue.replace('<userRef>u1</userRef>', '<user><id>a</id><name>b</name></user>')}</issues><forceKey>k-123</forceKey></batchChangeFailure>`,
    entityRecordRevisions: `<entityRecordRevisions xmlns="${V2}"><revision entityId="1001" entityUuid="${uuid(2)}" revisionUuid="${uuid(1)}" batchId="${uuid(8)}"><newEntity entityType="PERSON" entityUuid="${uuid(2)}">${parts('parst')}</newEntity><setState><state>ERS_NEW</state></setState></revision></entityRecordRevisions>`,
    queryResult: `<queryResult xmlns="${V2}"><header><count>1</count></header><list><entityInfo et="PERSON" entityId="1001" entityUuid="${uuid(2)}"><name>Antonín Dvořák</name><description>skladatel</description><lookup pt="PT_NAME"><value>Antonín Dvořák</value><highlightPos spos="0" epos="7"/></lookup></entityInfo></list></queryResult>`,
    updates: `<updates xmlns="${V2}">${revInfo}</updates>`,
    updatesFrom: `<updatesFrom xmlns="${V2}"><info><from>${uuid(8)}</from><to>${uuid(9)}</to><count>1</count></info><updates>${revInfo}</updates></updatesFrom>`,
  };
  it.each(Object.entries(v2Documents))('accepts a v2 %s document', async (_root, xml) => {
    await expect(validateDocument(bytes(xml), 'v2')).resolves.toBeUndefined();
  });

  const ent = `<ent eid="1001" euid="${uuid(2)}" ens="ERS_REPLACED" ent="PERSON" reid="1002" reud="${uuid(7)}"><revi><rid>${uuid(1)}</rid><usr>Jana</usr><usid eid="5"/><modt>2025-03-01T10:00:00Z</modt></revi><prts><p t="PT_NAME" pid="${uuid(3)}"><itms><si t="NM_MAIN">Dvořák</si></itms></p></prts></ent>`;
  const v1Documents: Record<string, string> = {
    ent: ent.replace('<ent ', `<ent xmlns="${V1}" `),
    ents: `<ents xmlns="${V1}">${ent}${ent}</ents>`,
    bus: `<bus xmlns="${V1}" trns="${uuid(8)}"><rev lid="n1" eid="1001" euid="${uuid(2)}" rev="${uuid(1)}"/></bus>`,
    bue: `<bue xmlns="${V1}"><em lid="n1"><et>ET_OTHER_REV</et><msg>Jiná revize.</msg></em><em><et>ET_ERROR</et><msg>Chyba.</msg></em></bue>`,
    errs: `<errs xmlns="${V1}"><rev eid="1001" euid="${uuid(2)}" rev="${uuid(1)}" bid="${uuid(8)}"><ner et="PERSON"/><sent>PERSON_GROUP</sent></rev></errs>`,
    qr: `<qr xmlns="${V1}"><ri><cnt>1</cnt></ri><list><fei et="PERSON" eid="1001"><name>Dvořák</name><dsc>skladatel</dsc><rl pt="PT_NAME"><v>Dvořák</v><hp spos="0" epos="6"/></rl></fei></list></qr>`,
    ups: `<ups xmlns="${V1}"><ri eid="1001" euid="${uuid(2)}" rev="${uuid(1)}"/></ups>`,
    upsf: `<upsf xmlns="${V1}"><inf><from>${uuid(8)}</from><to>${uuid(9)}</to><cnt>0</cnt></inf></upsf>`,
  };
  it.each(Object.entries(v1Documents))('accepts a v1 %s document', async (_root, xml) => {
    await expect(validateDocument(bytes(xml), 'v1')).resolves.toBeUndefined();
  });

  it('validates long documents in slices', async () => {
    const entities = Array.from({ length: 20 }, (_, i) => entity('parst').replaceAll('u1', `u${i}`)).join('\n');
    const xml = bytes(`<entities xmlns="${V2}">${entities}</entities>`);
    await expect(validateDocument(xml, 'v2', { sliceBytes: 1 })).resolves.toBeUndefined();
  });

  it('requires user localIds unique across a whole export', async () => {
    const xml = bytes(`<entities xmlns="${V2}">${entity('parst')}\n${entity('parst')}</entities>`);
    for (const sliceBytes of [1, undefined]) {
      const error = await rejection(validateDocument(xml, 'v2', { sliceBytes }));
      expect((error as SchemaViolationError).problems).toEqual([
        expect.objectContaining({ line: 2, message: expect.stringMatching(/'u1'/) }),
      ]);
    }
  });

  it('rejects a document of the other version', async () => {
    const error = await rejection(validateDocument(bytes(v1Documents.ups as string), 'v2'));
    expect(error).toBeInstanceOf(SchemaViolationError);
    expect((error as SchemaViolationError).problems[0]?.message).toMatch(/No matching global declaration/);
  });

  it("rejects the revisions root as the specification misspells it (the public schema's name is entityRecordRevisions)", async () => {
    const error = await rejection(validateDocument(bytes(`<entityReocrdRevisions xmlns="${V2}"/>`), 'v2'));
    expect(error).toBeInstanceOf(SchemaViolationError);
  });
});

describe('concurrency', () => {
  it('validates several documents at once', async () => {
    const v2 = await fixture('v2-all-changes.xml');
    const v1 = await fixture('v1-all-changes.xml');
    const results = await Promise.all([v2, v1, v2, v1].map((xml) => validateBatchXml(xml, { sliceBytes: 1 })));
    expect(results.map((r) => r.version)).toEqual(['v2', 'v1', 'v2', 'v1']);
  });
});
