// API keys: items of the same table, so the store alone knows their attribute names. A key is stored only as its
// hash (lib/auth/api-keys.ts hashes it) under the APIKEY# partition, which no batch partition ({clientId}#{batchId})
// can take, with no index attribute, so it appears in no index. This module reads them; registrations.ts writes
// keys and client registrations, so a function that only authenticates bundles no write.
import { GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../table/access';
import { API_KEY_ITEM_PREFIX } from '../table/schema';

const KEY_SORT = '#KEY' as const;

/** A key item as stored. */
export interface ApiKeyItem {
  batch_id: string;
  img_fprint: typeof KEY_SORT;
  owner_id: string;
  registered_ts: number;
}

export type StoreTable = TableRef;

export const apiKeyItemKey = (keyHash: string): Pick<ApiKeyItem, 'batch_id' | 'img_fprint'> => ({
  batch_id: API_KEY_ITEM_PREFIX + keyHash,
  img_fprint: KEY_SORT,
});

/** GetItem of the key item of a key hash, reading only its owner. */
export function getApiKeyRequest(tableName: string, keyHash: string): GetCommandInput {
  return { TableName: tableName, Key: apiKeyItemKey(keyHash), ProjectionExpression: 'owner_id' };
}

/** The client a key hash belongs to, or undefined when no such key is stored. */
export async function apiKeyOwner(table: StoreTable, keyHash: string): Promise<string | undefined> {
  const out = await table.ddb.send(new GetCommand(getApiKeyRequest(table.tableName, keyHash)));
  const owner = (out.Item as Partial<ApiKeyItem> | undefined)?.owner_id;
  return typeof owner === 'string' ? owner : undefined;
}

/** The owners of API keys, by their hashes (lib/auth/api-keys.ts ApiKeyOwners). */
export class ApiKeyStore {
  constructor(private readonly table: TableRef) {}

  ownerOf(keyHash: string): Promise<string | undefined> {
    return apiKeyOwner(this.table, keyHash);
  }
}
