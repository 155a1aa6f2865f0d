import { connect, eventNames, moduleError, submit, type Connected } from './support/client.js';

const AVRO = JSON.stringify({ type: 'record', name: 'Note', fields: [{ name: 'text', type: 'string' }] });
const PARQUET_COLUMN = { name: 'text', column_type: 'STRING', compression: 'SNAPPY', bloom_filter: false };

/** Schemas pallet rules Frequency's own suite checks: model validity, intent groups, versions by name. */
describe('Schemas: models, intent groups and versions', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const createIntent = async (name: string) => {
    const outcome = await submit(c.api.tx.schemas.createIntent(name, 'OnChain', []), c.alice);
    const event = outcome.result.events.find(({ event }) => event.method === 'IntentCreated')!.event;
    return (event.data as unknown as { intentId: { toNumber(): number } }).intentId.toNumber();
  };
  const createSchema = (intentId: number, model: unknown, modelType: 'AvroBinary' | 'Parquet') =>
    submit(c.api.tx.schemas.createSchemaV4(intentId, JSON.stringify(model), modelType), c.alice);

  it('refuses an Avro model that is JSON but not an object, and a Parquet column with an unknown field', async () => {
    const intentId = await createIntent('test.models');
    expect(moduleError(c.api, await createSchema(intentId, [1000, 3], 'AvroBinary'))).toBe('schemas.InvalidSchema');
    const unknownField = [{ ...PARQUET_COLUMN, unknown_field: true }];
    expect(moduleError(c.api, await createSchema(intentId, unknownField, 'Parquet'))).toBe('schemas.InvalidSchema');
    const badType = [{ ...PARQUET_COLUMN, column_type: { INTEGER: { bit_width: 300, sign: true } } }];
    expect(moduleError(c.api, await createSchema(intentId, badType, 'Parquet'))).toBe('schemas.InvalidSchema');
    const integer = [{ ...PARQUET_COLUMN, column_type: { INTEGER: { bit_width: 32, sign: true } }, optional: true }];
    expect(eventNames(await createSchema(intentId, integer, 'Parquet'))).toContain('schemas.SchemaCreated');
    expect(eventNames(await createSchema(intentId, JSON.parse(AVRO), 'AvroBinary'))).toContain('schemas.SchemaCreated');
  });

  it('numbers the schemas of a name as versions from 1 (get_schema_versions_by_name)', async () => {
    const intentId = await createIntent('test.versions');
    await createSchema(intentId, JSON.parse(AVRO), 'AvroBinary');
    await createSchema(intentId, JSON.parse(AVRO), 'AvroBinary');
    const versions = (await c.api.call.schemasRuntimeApi.getSchemaVersionsByName('test.versions')).unwrap();
    const maximum = (await c.api.query.schemas.currentSchemaIdentifierMaximum()).toNumber();
    expect(versions.map((v) => [v.schemaName.toUtf8(), v.schemaVersion.toNumber(), v.schemaId.toNumber()])).toEqual([
      ['test.versions', 1, maximum - 1],
      ['test.versions', 2, maximum],
    ]);
    expect((await c.api.call.schemasRuntimeApi.getSchemaVersionsByName('test.nothing')).isNone).toBe(true);
  });

  it('creates, names, reads and updates intent groups, refusing unknown intents and groups', async () => {
    const created = await submit(c.api.tx.schemas.createIntentGroup('test.group', [1, 2]), c.alice);
    expect(eventNames(created)).toContain('schemas.IntentGroupCreated');
    const groupId = (await c.api.query.schemas.currentIntentGroupIdentifierMaximum()).toNumber();
    expect(groupId).toBe(16001);
    const group = (await c.api.call.schemasRuntimeApi.getIntentGroupById(groupId)).unwrap();
    expect(group.intentIds.map((id) => id.toNumber())).toEqual([1, 2]);
    const named = (await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName('test.group')).unwrap();
    expect(named[0]?.entityId.toJSON()).toEqual({ intentGroup: groupId });

    expect(moduleError(c.api, await submit(c.api.tx.schemas.createIntentGroup('test.group', [1]), c.alice))).toBe(
      'schemas.NameAlreadyExists',
    );
    expect(moduleError(c.api, await submit(c.api.tx.schemas.createIntentGroup('test.other', [60000]), c.alice))).toBe(
      'schemas.InvalidIntentId',
    );
    expect(eventNames(await submit(c.api.tx.schemas.updateIntentGroup(groupId, [3, 4, 5]), c.alice))).toContain(
      'schemas.IntentGroupUpdated',
    );
    const updated = (await c.api.call.schemasRuntimeApi.getIntentGroupById(groupId)).unwrap();
    expect(updated.intentIds.map((id) => id.toNumber())).toEqual([3, 4, 5]);
    expect(moduleError(c.api, await submit(c.api.tx.schemas.updateIntentGroup(999, [1]), c.alice))).toBe(
      'schemas.InvalidIntentGroupId',
    );
    const viaSudo = await submit(
      c.api.tx.sudo.sudo(c.api.tx.schemas.createIntentGroupViaGovernance(c.bob.address, 'test.governed', [1])),
      c.alice,
    );
    expect(eventNames(viaSudo)).toContain('schemas.IntentGroupCreated');
    // Versions list intents only, never groups.
    expect((await c.api.call.schemasRuntimeApi.getSchemaVersionsByName('test.group')).unwrap()).toHaveLength(0);
  });
});
