// The known-fingerprint items (schema.ts KnownItem): written with each classified record, read by key by
// POST /v1/fingerprints:known (access pattern 5b by key), so that asking about 1,000 fingerprints costs ten
// BatchGetItem calls, not a thousand index Queries.
import type { BatchGetCommandInput, PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ModelVersion } from '../../domain/detection';
import { BATCH_GET_MAX_KEYS } from '../table/query';
import { type KnownItem, knownItemKey, purgeAt } from '../table/schema';

/** The item naming `batchId` as the latest batch where the client's pixels `fprint` were classified (a `success` record). */
export function knownItemRequest(
  tableName: string,
  r: { clientId: string; batchId: string; fprint: string; expiresAt: number },
  model?: ModelVersion,
): PutCommandInput {
  const item: KnownItem = {
    ...knownItemKey(r.clientId, r.fprint),
    known_in: r.batchId,
    ...(model ? { rek_model: model } : {}),
    ttl: r.expiresAt,
    purge_at: purgeAt(r.expiresAt),
  };
  return { TableName: tableName, Item: item };
}

/** BatchGetItem requests of the known items of these fingerprints, at most BATCH_GET_MAX_KEYS keys each. */
export function knownItemsRequests(tableName: string, clientId: string, fprints: readonly string[]): BatchGetCommandInput[] {
  const requests: BatchGetCommandInput[] = [];
  for (let i = 0; i < fprints.length; i += BATCH_GET_MAX_KEYS) {
    const keys = fprints.slice(i, i + BATCH_GET_MAX_KEYS).map((f) => knownItemKey(clientId, f));
    requests.push({
      RequestItems: {
        [tableName]: {
          Keys: keys,
          ProjectionExpression: 'img_fprint, known_in, rek_model, #ttl',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
        },
      },
    });
  }
  return requests;
}
