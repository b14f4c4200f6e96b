// The client's own: its limits and today's use of them, and which fingerprints it already has answers for.
import { knownFingerprintsBodySchema, knownFingerprintsSchema, usageSchema } from '../schemas/clients';
import { noQuerySchema } from '../schemas/common';
import { noParams, type Route, route } from './route';

/** Fingerprints of POST /v1/fingerprints:known one rate-limit token pays for (a call of 1,000 costs 200 tokens). */
const KNOWN_FINGERPRINTS_PER_TOKEN = 5;

const getUsageRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/usage',
  operationId: 'getUsage',
  summary: "The client's limits (requests per second, images per UTC day) and today's use of them",
  description:
    'API requests beyond the rate answer 429 rate_limited with Retry-After (a token bucket per client: the rate, bursts ' +
    "of twice it). Uploads beyond the day's images quota are kept under failed/ as fail records with code " +
    'QuotaExceeded, never classified; they count as rejected here.',
  authenticated: true,
  params: noParams,
  query: noQuerySchema,
  status: 200,
  response: usageSchema,
  errors: [400, 401, 429, 500],
  run: ({ service, clientId }) => service.usage(clientId),
});

const knownFingerprintsRoute = route({
  function: 'api',
  method: 'POST',
  path: '/v1/fingerprints:known',
  operationId: 'knownFingerprints',
  summary: 'Which of these fingerprints the client already has answers for: what an upload would not pay for',
  description:
    "For estimates before an upload (icecat upload --dry-run): each fingerprint is looked up by key among the caller's " +
    "own known-fingerprint items (access pattern 5b), so another client's images never answer; a batch being erased " +
    'or expired answers nothing. A known fingerprint is reused by the ingest, not sent to DetectLabels. The call ' +
    `costs one rate-limit token per ${KNOWN_FINGERPRINTS_PER_TOKEN} fingerprints asked (rounded up).`,
  accessPatterns: ['5b'],
  authenticated: true,
  params: noParams,
  query: noQuerySchema,
  body: knownFingerprintsBodySchema,
  status: 200,
  response: knownFingerprintsSchema,
  errors: [400, 401, 413, 429, 500],
  rateCost: (body) => Math.ceil(body.fprints.length / KNOWN_FINGERPRINTS_PER_TOKEN),
  run: ({ service, clientId, body }) => service.knownFingerprints(clientId, body.fprints),
});

export const clientRoutes: Route[] = [getUsageRoute, knownFingerprintsRoute];
