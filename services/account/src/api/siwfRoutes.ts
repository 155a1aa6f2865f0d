import { defineRoute, type Intake, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { transactionJobName, type TransactionJob } from '../jobs.js';
import { ACCOUNT_QUEUES } from '../queues.js';
import { CREDENTIAL_TYPES, credentialDetails, type SiwfService } from './siwf.js';

/** A query parameter given once or repeated: always a list. */
const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]), z.array(item));

const redirectQuery = z.object({
  callbackUrl: z
    .url({ error: 'must be an absolute URL' })
    .refine((url) => !url.includes('?') && !url.includes('#'), 'must have no query string and no fragment')
    .meta({ description: 'Where the user returns after signing in', example: 'http://localhost:3000/login/callback' }),
  permissions: list(
    z
      .string()
      .regex(
        /^[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\.[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9](@v\d+)?$/,
        'must be an intent name such as dsnp.broadcast (a version suffix such as @v2 is accepted and ignored)',
      ),
  ).meta({
    description: 'Intents the user is asked to delegate to the provider, by name',
    example: ['dsnp.broadcast', 'dsnp.reply@v2'],
  }),
  credentials: list(z.enum(CREDENTIAL_TYPES)).meta({
    description: 'Credentials to ask for; email and phone become one request for either',
    example: ['VerifiedGraphKeyCredential', 'VerifiedEmailAddressCredential'],
  }),
});

const redirectResponse = z
  .object({
    signedRequest: z.string().meta({ description: 'The base64url encoded JSON signed request' }),
    redirectUrl: z.string().meta({ description: 'Where to send the user to sign in' }),
    frequencyRpcUrl: z.string().meta({ description: 'The Frequency node the sign-in page connects to' }),
  })
  .meta({ id: 'WalletV2RedirectResponseDto' });

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** The SIWF response in a callback: base64url of its JSON, the object itself, or null (then the code is exchanged). */
const authorizationPayload = z
  .union(
    [
      z.string().min(1).regex(BASE64URL, 'a string must be base64url of the JSON SIWF response'),
      z.record(z.string(), z.unknown()),
      z.null(),
    ],
    {
      error: 'must be the SIWF response: a base64url string of its JSON, the JSON object itself, or null',
    },
  )
  .optional()
  .meta({
    description:
      'The signed SIWF response: base64url (unpadded) of its JSON, or the JSON object itself; null (the logged login shape) or absent: the response is fetched with authorizationCode',
    // A union of three JSON types: exactly one matches, whatever the generator would write for a union.
    type: ['string', 'object', 'null'],
    oneOf: [
      { type: 'string', pattern: BASE64URL.source, description: 'base64url of the JSON SIWF response' },
      {
        type: 'object',
        additionalProperties: true,
        description: 'The SIWF response (userPublicKey, payloads, credentials)',
      },
      { type: 'null', description: 'No payload: exchange authorizationCode for it' },
    ],
  });

const loginRequest = z
  .object({
    authorizationCode: z.string().min(1).max(512).optional().meta({
      description:
        'The code the sign-in service returned; exchanged for the signed response when authorizationPayload is null or absent',
    }),
    authorizationPayload,
  })
  .refine((body) => body.authorizationCode !== undefined || (body.authorizationPayload ?? undefined) !== undefined, {
    message: 'give an authorizationCode, or an authorizationPayload that is not null',
    path: ['authorizationCode'],
  })
  .meta({ id: 'WalletV2LoginRequestDto' });

const loginResponse = z
  .object({
    controlKey: z.string().meta({ description: "The user's account, SS58 (Ethereum keys in their unified form)" }),
    msaId: z.string().optional().meta({ description: "The user's MSA id when the account already exists" }),
    email: z.string().optional(),
    phoneNumber: z.string().optional(),
    graphKey: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "The graph key credential's subject (holds the private key: keep it safe)" }),
    recoverySecret: z.string().optional(),
    rawCredentials: z.array(z.record(z.string(), z.unknown())).optional(),
    signUpReferenceId: z
      .string()
      .optional()
      .meta({ description: 'The sign-up request, when one was queued: follow it at /v1/requests/{referenceId}' }),
    signUpStatus: z.string().optional().meta({ description: 'The state of that request' }),
  })
  .meta({ id: 'WalletV2LoginResponseDto' });

export interface SiwfRouteOptions {
  siwf: SiwfService;
  intake: Intake;
  providerId: string;
}

/** GET and POST /v2/accounts/siwf, and POST /v2/accounts/swif (the same, under a second spelling). */
export function siwfRoutes({ siwf, intake, providerId }: SiwfRouteOptions): Route[] {
  const post = (path: string, hidden: boolean) =>
    defineRoute({
      method: 'post',
      path,
      operationId: hidden
        ? 'AccountsControllerV2_postSignInWithFrequencyAlias_v2'
        : 'AccountsControllerV2_postSignInWithFrequency_v2',
      summary: 'Sign a user in, or up, with their Sign In With Frequency response',
      description:
        'The response comes as `authorizationPayload` (base64url of its JSON, or the object itself) or, when that is null or absent, from the SIWF service for `authorizationCode`. Every signature of the response is checked, and its login message is accepted once (a replay answers 401; the same sign-up posted again answers as the first time, with the same signUpReferenceId). A registered user gets their details and nothing is written on chain; a new user (or one delegating anew) also gets a sign-up request, queued durably before the answer, whose transaction creates the account, delegation and handle. Its outcome arrives by webhook (`SIWF_SIGNUP`) and at /v1/requests/{signUpReferenceId}.',
      tags: ['accounts'],
      hidden,
      body: loginRequest,
      responses: {
        200: { description: 'The user, and the sign-up request if one was queued', schema: loginResponse },
        400: { description: 'The response or a payload in it is invalid (named in the message)' },
        401: {
          description: 'The login message was used before: each is accepted once (a repeated sign-up is not refused)',
        },
        403: { description: 'A sign-up needs the provider key and the gateway is read-only' },
        503: { description: 'The chain, the SIWF service or Redis is not reachable' },
      },
      handler: async ({ body }, { log }) => {
        const signIn = await siwf.verify(body);
        let signUp: { signUpReferenceId: string; signUpStatus: string } | undefined;
        if (signIn.calls.length > 0) {
          const accepted = await intake.accept<TransactionJob>({
            kind: 'SIWF_SIGNUP',
            identity: signIn.identity,
            queue: ACCOUNT_QUEUES.transactionPublish,
            jobName: transactionJobName,
            job: (referenceId) => ({
              type: 'SIWF_SIGNUP',
              referenceId,
              providerId,
              accountId: signIn.accountId,
              calls: signIn.calls,
            }),
            details: { accountId: signIn.controlKey },
          });
          signUp = { signUpReferenceId: accepted.referenceId, signUpStatus: accepted.state };
          log.info(
            {
              referenceId: accepted.referenceId,
              calls: signIn.calls.map((call) => `${call.pallet}.${call.extrinsicName}`),
            },
            accepted.fresh ? 'sign-up queued' : 'sign-up seen before',
          );
        }
        return {
          status: 200,
          body: {
            controlKey: signIn.controlKey,
            ...(signIn.msaId === undefined ? {} : { msaId: signIn.msaId.toString() }),
            ...credentialDetails(signIn.credentials),
            ...(signIn.credentials.length > 0 ? { rawCredentials: signIn.credentials } : {}),
            ...signUp,
          },
        };
      },
    });

  return [
    defineRoute({
      method: 'get',
      path: '/v2/accounts/siwf',
      operationId: 'AccountsControllerV2_getRedirectUrl_v2',
      summary: 'A signed request and the URL that starts a Sign In With Frequency sign-in',
      tags: ['accounts'],
      query: redirectQuery,
      responses: {
        200: { description: 'The signed request and redirect URL', schema: redirectResponse },
        400: { description: 'A bad callbackUrl, an unknown permission or credential' },
        403: { description: 'The gateway has no provider key to sign with (read-only)' },
        503: { description: 'The chain is not reachable, or no SIWF service is configured for it' },
      },
      handler: async ({ query }) => ({
        status: 200,
        body: await siwf.redirect(query.callbackUrl, query.permissions, query.credentials),
      }),
    }),
    post('/v2/accounts/siwf', false),
    post('/v2/accounts/swif', true),
  ];
}
