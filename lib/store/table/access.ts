// What every entity of the store is built on: the document client, the table, the store's clock, and whether the
// backend has transactions (DynamoDB, DynamoDB Local: true; dynalite: false). The parts of the store (batch/summary.ts,
// batch/counters.ts, image/, upload/, review/, redetect/) each hold one, never the facade (batch-store.ts).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface TableAccess {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  /** Epoch ms. */
  readonly now: () => number;
  readonly transactions: boolean;
}

/** The table as the wiring hands it to a store: the document client and the table's name. */
export interface TableRef {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
}
