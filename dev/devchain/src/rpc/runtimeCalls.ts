import type { GenericExtrinsic } from '@polkadot/types';
import { compactAddLength, u8aConcat, u8aToHex } from '@polkadot/util';
import type { Block } from '../chain/blockBuilder.js';
import type { Chain } from '../chain/chain.js';
import { feeOf, paysFromBalance, type Hex } from '../chain/extrinsic.js';
import type { AccountHex } from '../runtime/context.js';
import { RpcError } from './errors.js';
import type { Codec } from '@polkadot/types/types';
import { bigintOf } from '../runtime/codecs.js';
import { innerCalls, weightToFee } from '../pallets/frequencyTxPayment.js';
import { stableWeight } from '../pallets/capacityStableWeights.js';
import type { Call } from '@polkadot/types/interfaces';
import { callRuntimeApi, type RuntimeApiMethod } from './runtimeApis.js';

const WEIGHT = { refTime: 100_000_000, proofSize: 0 };

/**
 * state_call: the runtime APIs a client calls, answered from the devchain with the real API's encodings.
 */
export function runtimeCall(
  chain: Chain,
  apis: Record<string, RuntimeApiMethod>,
  method: string,
  data: Uint8Array,
  block: Block,
): Hex {
  // The runtime whose code the block's state holds.
  const runtime = chain.runtimeAt(block.number);
  const { registry, built } = runtime;
  const encode = (type: string, value: unknown) => u8aToHex(registry.createType(type, value).toU8a()) as Hex;
  switch (method) {
    case 'Core_version':
      return u8aToHex(runtime.version().toU8a()) as Hex;
    case 'Metadata_metadata':
      return u8aToHex(compactAddLength(built.v14)) as Hex;
    case 'Metadata_metadata_versions':
      return encode('Vec<u32>', [14, 15]);
    case 'Metadata_metadata_at_version': {
      const version = registry.createType('u32', data).toNumber();
      const bytes = version === 15 ? built.v15 : version === 14 ? built.v14 : undefined;
      // Option<OpaqueMetadata>: OpaqueMetadata is length-prefixed bytes.
      return u8aToHex(bytes ? u8aConcat([1], compactAddLength(bytes)) : new Uint8Array([0])) as Hex;
    }
    case 'AccountNonceApi_account_nonce': {
      const account = registry.createType('AccountId32', data).toHex() as AccountHex;
      return encode('u32', chain.accountNonce(account, block));
    }
    case 'TransactionPaymentApi_query_weight_to_fee': {
      const weight = registry.createType('SpWeightsWeightV2Weight', data) as unknown as { refTime: Codec };
      return encode('u128', weightToFee(bigintOf(weight.refTime)));
    }
    case 'TransactionPaymentApi_query_info':
    case 'TransactionPaymentApi_query_fee_details': {
      const extrinsic = registry.createType('Extrinsic', data) as unknown as GenericExtrinsic;
      const tip = extrinsic.isSigned ? extrinsic.tip.toBigInt() : 0n;
      const free = !paysFromBalance(chain.runtime, extrinsic);
      const fee = free ? 0n : feeOf(chain.facts, extrinsic.encodedLength, 0n);
      if (method === 'TransactionPaymentApi_query_info') {
        // A Capacity-eligible call weighs its stable weight (a stand-in for its benchmarked weight); others a
        // flat stand-in.
        const calls =
          chain.runtime.payment(extrinsic.method) === 'capacity'
            ? innerCalls(extrinsic.method as never)
            : [extrinsic.method as unknown as Call];
        const stable = calls.map((call) => stableWeight(call, chain.runtime.palletName(call.callIndex)));
        const weight = stable.every((w) => w !== undefined)
          ? { refTime: stable.reduce((sum, w) => (sum as bigint) + (w as bigint), 0n), proofSize: 0 }
          : WEIGHT;
        return encode('RuntimeDispatchInfo', { weight, class: 'Normal', partialFee: fee });
      }
      const base = free ? 0n : chain.facts.baseFee;
      return encode('FeeDetails', {
        inclusionFee: free ? null : { baseFee: base, lenFee: fee - base, adjustedWeightFee: 0 },
        tip,
      });
    }
    default: {
      const answer = callRuntimeApi(chain, apis, method, data, block);
      if (answer !== undefined) return answer;
      throw new RpcError(-32000, `Client error: Execution failed: Other: Exported method ${method} is not found`);
    }
  }
}
