// Registering API keys and clients: a key's hash under its own partition (credentials.ts), a client as one registry
// item (CLIENT#{clientId}, #CLIENT) whose existence lets the ingest take the client's uploads. Each request is built by
// a pure function (unit-tested without a network) and sent by another.
import { GetCommand, PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableAccess } from '../table/access';
import { conditionFailed } from '../table/condition';
import { clientKey } from '../table/schema';
import { WriteExpression } from '../table/update-expression';
import { type ApiKeyItem, apiKeyItemKey, type StoreTable } from './keys';

/** PutItem that stores a key hash for a client. An existing hash is replaced only by the same owner's registration. */
export function putApiKeyRequest(tableName: string, clientId: string, keyHash: string, nowMs: number): PutCommandInput {
  const item: ApiKeyItem = { ...apiKeyItemKey(keyHash), owner_id: clientId, registered_ts: nowMs };
  const w = new WriteExpression({ partition: 'batch_id', owner: 'owner_id' });
  // A re-registration of the same key for the same client (the demo key at every start) is allowed.
  return {
    TableName: tableName,
    Item: item,
    ...w.when(w.or(w.notExists('partition'), w.is('owner', '=', ':owner', clientId))).condition(),
  };
}

/** PutItem of a client's registry item; registering again keeps the first registration time. */
export function putClientRequest(tableName: string, clientId: string, nowMs: number): PutCommandInput {
  const w = new WriteExpression({ partition: 'batch_id' });
  return { TableName: tableName, Item: { ...clientKey(clientId), registered_ts: nowMs }, ...w.when(w.notExists('partition')).condition() };
}

/** Stores a key hash for a client: false, writing nothing, when the hash already belongs to another client. */
export async function storeApiKey(table: StoreTable, clientId: string, keyHash: string, nowMs: number): Promise<boolean> {
  try {
    await table.ddb.send(new PutCommand(putApiKeyRequest(table.tableName, clientId, keyHash, nowMs)));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/** Writes the client's registry item unless it exists. */
export async function storeClient(table: StoreTable, clientId: string, nowMs: number): Promise<void> {
  try {
    await table.ddb.send(new PutCommand(putClientRequest(table.tableName, clientId, nowMs)));
  } catch (err) {
    if (!conditionFailed(err)) throw err;
  }
}

/** Whether a client is registered (client:create), as the ingest asks before taking an upload; kept briefly. */
export class RegisteredClients {
  private readonly known = new Map<string, { known: boolean; until: number }>();

  constructor(
    private readonly access: Pick<TableAccess, 'ddb' | 'table' | 'now'>,
    /** How long a client lookup is trusted (ms). */
    private readonly cacheMs = 60_000,
  ) {}

  /** Answers are kept briefly per container; an unknown client may be registered any moment, so for a shorter while. */
  async isRegistered(clientId: string): Promise<boolean> {
    const now = this.access.now();
    const cached = this.known.get(clientId);
    if (cached && cached.until > now) return cached.known;
    const out = await this.access.ddb.send(
      new GetCommand({ TableName: this.access.table, Key: clientKey(clientId), ProjectionExpression: 'batch_id' }),
    );
    const known = out.Item !== undefined;
    if (this.known.size >= 10_000) this.known.clear();
    this.known.set(clientId, { known, until: now + (known ? this.cacheMs : 5_000) });
    return known;
  }
}

/** Clients and their keys as registering writes them (lib/auth/register.ts ClientRegistry). */
export class Registrations {
  constructor(private readonly table: StoreTable) {}

  storeApiKey(clientId: string, keyHash: string, nowMs: number): Promise<boolean> {
    return storeApiKey(this.table, clientId, keyHash, nowMs);
  }

  storeClient(clientId: string, nowMs: number): Promise<void> {
    return storeClient(this.table, clientId, nowMs);
  }
}
