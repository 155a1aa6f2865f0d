import { devKeyring, startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { KeyringPair } from '@polkadot/keyring/types';
import { builtRuntime } from '../src/build.js';
import { startRealChain, type RealChain } from '../src/realChain.js';

type Call = (api: ApiPromise) => SubmittableExtrinsic<'promise'>;

/** What a transaction did, as a client reads it: each event with its data, in order. */
async function outcome(api: ApiPromise, signer: KeyringPair, call: Call): Promise<string[]> {
  return new Promise((done, fail) => {
    call(api)
      .signAndSend(signer, { nonce: -1 }, ({ status, events }) => {
        // polkadot-js may report only Finalized when both statuses arrive together (the devchain's instant seal).
        if (status.isInBlock || status.isFinalized)
          done(events.map(({ event }) => `${event.section}.${event.method} ${JSON.stringify(event.data.toJSON())}`));
      })
      .catch(fail);
  });
}

/** dsnp.broadcast's schema in both genesis states, and a CIDv1 the runtime accepts. */
const BROADCAST_SCHEMA = 17;
const CID = 'bafkreidgvpkjawlxz6sffxzwgooowe5yt7i6wsyg236mfoks77nywkptdq';

/** Events with the dispatch weight left out: the devchain reports a stand-in weight (docs/devchain.md, "How it differs"). */
const weightMasked = (events: string[]) =>
  events.map((event) => event.replace(/^(system\.ExtrinsicSuccess \[\{"weight":)\{[^}]*\}/, '$1"weight"'));

/** And the token fee's amounts: the devchain charges a stand-in token fee for calls not paid with Capacity. */
const tokenFeeMasked = (events: string[]) =>
  weightMasked(events).map((event) =>
    event
      .replace(/^(balances\.Withdraw \["[^"]+"),\d+\]$/, '$1,"fee"]')
      .replace(/^(transactionPayment\.TransactionFeePaid \["[^"]+"),\d+,/, '$1,"fee",'),
  );

describe('the devchain against the real runtime, transaction by transaction', () => {
  let real: RealChain;
  let devchain: Devchain;
  let realApi: ApiPromise;
  let devApi: ApiPromise;
  let bob: KeyringPair;

  beforeAll(async () => {
    const built = builtRuntime();
    [real, devchain] = await Promise.all([
      startRealChain({ wasm: built.wasm, codeHash: built.codeHash }),
      startDevchain({}),
    ]);
    [realApi, devApi] = await Promise.all(
      [real.url, devchain.url].map((url) => ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true })),
    );
    bob = (await devKeyring(42)).getPairs()[1] as KeyringPair;
  }, 600_000);

  afterAll(async () => {
    await Promise.all([realApi?.disconnect(), devApi?.disconnect()]);
    await Promise.all([real?.close(), devchain?.close()]);
  });

  it('gives the dev provider the same Capacity for the same stake', async () => {
    const [expected, actual] = await Promise.all(
      [realApi, devApi].map(async (api) => (await api.query.capacity.capacityLedger(1)).toJSON()),
    );
    expect(actual).toEqual(expected);
  });

  it('answers a new MSA with the same events, but for the stand-in token fee and weight', async () => {
    const [expected, actual] = await Promise.all(
      [realApi, devApi].map(async (api) => tokenFeeMasked(await outcome(api, bob, (chain) => chain.tx.msa.create()))),
    );
    expect(actual).toEqual(expected);
  });

  it("answers a provider's IPFS message paid with Capacity with the same events and Capacity fee, but for the stand-in weight", async () => {
    const alice = (await devKeyring(42)).getPairs()[0] as KeyringPair;
    const [expected, actual] = await Promise.all(
      [realApi, devApi].map(async (api) =>
        weightMasked(
          await outcome(api, alice, (chain) =>
            chain.tx.frequencyTxPayment.payWithCapacity(chain.tx.messages.addIpfsMessage(BROADCAST_SCHEMA, CID, 1_234)),
          ),
        ),
      ),
    );
    expect(actual).toEqual(expected);
  });
});
