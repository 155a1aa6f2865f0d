import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GenesisFileError, parseExtraGenesis } from '../src/index.js';
import { connect, type Connected } from './support/client.js';

const ETHEREUM_USER = '0x1234567890123456789012345678901234567890';

describe('extra genesis (--genesis)', () => {
  let c: Connected;
  beforeAll(async () => {
    const genesis = await parseExtraGenesis({
      providers: [{ account: '//Ferdie', name: 'ferdie', stake: '1000000000000' }],
      users: [
        { account: '//Dave', handle: 'dave', delegations: [{ provider: 2, intents: [2, 17] }] },
        { account: ETHEREUM_USER, balance: 5_000_000_000, handle: 'ethan' },
        { account: '//Eve', delegations: [{ provider: 1, intents: ['dsnp.broadcast', 'dsnp.reaction'] }] },
      ],
    });
    c = await connect({ genesis });
  });
  afterAll(async () => c.close());

  it('registers providers with their stake, and users with delegations, handles and balances', async () => {
    expect((await c.api.query.msa.providerToRegistryEntryV2(2)).unwrap().defaultName.toUtf8()).toBe('ferdie');
    expect((await c.api.query.capacity.capacityLedger(2)).unwrap().totalCapacityIssued.toBigInt()).toBe(
      20_000_000_000n,
    );
    const dave = (await c.api.query.msa.publicKeyToMsaId(c.pair('Dave').address)).unwrap().toNumber();
    expect(dave).toBe(3);
    const delegation = (await c.api.call.msaRuntimeApi.getDelegationForMsaAndProvider(dave, 2)).unwrap();
    expect(delegation.permissions.map((p) => p.grantedId.toNumber())).toEqual([2, 17]);
    expect((await c.api.rpc.handles.getHandleForMsa(dave)).unwrap().base_handle.toString()).toBe('dave');
    const ethAccount = `${ETHEREUM_USER}${'ee'.repeat(12)}`;
    expect((await c.api.query.msa.publicKeyToMsaId(ethAccount)).unwrap().toNumber()).toBe(4);
    expect((await c.api.query.system.account(ethAccount)).data.free.toBigInt()).toBe(5_000_000_000n);
  });

  it('takes intents by name, resolved against the genesis intents', async () => {
    const eve = (await c.api.query.msa.publicKeyToMsaId(c.pair('Eve').address)).unwrap().toNumber();
    const granted = (await c.api.call.msaRuntimeApi.getDelegationForMsaAndProvider(eve, 1))
      .unwrap()
      .permissions.map((p) => p.grantedId.toNumber());
    const idOf = async (name: string) => {
      const [entry] = (await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName(name)).unwrap();
      return entry!.entityId.asIntent.toNumber();
    };
    expect(granted.sort()).toEqual([await idOf('dsnp.broadcast'), await idOf('dsnp.reaction')].sort());
    await expect(
      parseExtraGenesis({ users: [{ account: '//Eve', delegations: [{ provider: 1, intents: ['dsnp.nothing'] }] }] })
        .then((genesis) => connect({ genesis }))
        .then((other) => other.close()),
    ).rejects.toThrow('users.0: "dsnp.nothing" is not a registered intent');
  });

  it('names every problem of a bad document', async () => {
    const problems = await parseExtraGenesis({
      users: [{ account: '//Dave', delegations: [{ provider: 0 }] }],
      extra: true,
    }).then(
      () => [],
      (error: GenesisFileError) => error.problems,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('users.0.delegations.0.provider'),
        expect.stringContaining('users.0.delegations.0.intents'),
        expect.stringContaining('"extra"'),
      ]),
    );
    await expect(parseExtraGenesis({ users: [{ account: 'not an address' }] })).rejects.toThrow(
      'users.0.account: "not an address" is not a secret URI',
    );
  });

  it('the CLI refuses a genesis that breaks a runtime rule, and says which entry', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'devchain-genesis-')), 'genesis.json');
    writeFileSync(
      file,
      JSON.stringify({ users: [{ account: '//Dave', delegations: [{ provider: 1, intents: [1] }], handle: 'admin' }] }),
    );
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', 'src/cli.ts', '--port', '0', '--genesis', file],
      // A loaded machine takes tens of seconds to compile and build the genesis.
      { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', timeout: 90_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--genesis users.0: Handles.HandleIsNotAllowed');
  }, 120_000);
});
