import type { ChainEvent } from '@frequency-gateway/chain';
import { readOutcome } from '../src/worker/transactionOutcome.js';

// The events of a finalized account transaction as the tracker hands them over (data as the chain's JSON), read
// without a chain: milliseconds.

const event = (section: string, method: string, ...data: unknown[]): ChainEvent => ({ section, method, data });
const hexOf = (text: string) => `0x${Buffer.from(text, 'utf8').toString('hex')}`;

test('a sign-up: the new MSA, its handle and the capacity it cost', () => {
  const outcome = readOutcome([
    event('capacity', 'CapacityWithdrawn', 1, '0x0000000000000000000000000003d090'),
    event('msa', 'MsaCreated', 7, '0xabc'),
    event('msa', 'DelegationGranted', 1, 7),
    event('handles', 'HandleClaimed', 7, hexOf('alice.42')),
    event('system', 'ExtrinsicSuccess', {}),
  ]);
  expect(outcome).toEqual({
    msaId: '7',
    handle: 'alice.42',
    newPublicKey: undefined,
    revokedProviderId: undefined,
    capacityWithdrawn: { msaId: '1', amount: '250000' },
  });
});

test.each([
  ['a delegation granted to an existing MSA', [event('msa', 'DelegationGranted', 1, 9)], { msaId: '9' }],
  ['a handle claimed', [event('handles', 'HandleClaimed', 9, hexOf('bob.7'))], { msaId: '9', handle: 'bob.7' }],
  ['a key added', [event('msa', 'PublicKeyAdded', 9, '0xkey')], { msaId: '9', newPublicKey: '0xkey' }],
  ['an MSA retired', [event('msa', 'MsaRetired', 9)], { msaId: '9' }],
  ['a delegation revoked', [event('msa', 'DelegationRevoked', 1, 9)], { msaId: '9', revokedProviderId: '1' }],
  ['an itemized page written', [event('statefulStorage', 'ItemizedPageUpdated', 9, 3)], { msaId: '9' }],
  ['a paginated page written', [event('statefulStorage', 'PaginatedPageUpdated', 9, 3)], { msaId: '9' }],
])('%s', (_what, events, expected) => {
  expect(readOutcome(events)).toMatchObject(expected);
});

test('the MSA a sign-up creates wins over the MSA ids of its other events; the first event of a kind counts', () => {
  const outcome = readOutcome([
    event('msa', 'DelegationGranted', 1, 8),
    event('msa', 'MsaCreated', 7, '0xabc'),
    event('msa', 'MsaCreated', 6, '0xdef'),
  ]);
  expect(outcome.msaId).toBe('7');
});

test('events of other kinds of transaction leave every field unset', () => {
  expect(readOutcome([event('system', 'ExtrinsicSuccess', {}), event('balances', 'Withdraw', 'x', 1)])).toEqual({
    msaId: undefined,
    handle: undefined,
    newPublicKey: undefined,
    revokedProviderId: undefined,
    capacityWithdrawn: undefined,
  });
});
