// The local table's definition: the CreateTable input the local DynamoDB (dynamodb.ts) creates its table with, converted
// from resources/table.yml, the same CloudFormation definition serverless.yml deploys.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CreateTableCommandInput, GlobalSecondaryIndex, LocalSecondaryIndex } from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { LOCAL_NAMES } from '../contract';
import { LocalStackError } from '../errors';

export const TABLE_DEFINITION_FILE = path.join(__dirname, '..', '..', 'resources', 'table.yml');

export class TableDefinitionError extends LocalStackError {
  override name = 'TableDefinitionError';
  readonly code = 'invalid_table_definition';
}

/** CloudFormation `AWS::DynamoDB::Table` Properties, as much of them as CreateTable has a meaning for. */
export type CfnTableProperties = Record<string, unknown>;

// Deployment-only settings: the stack sets the name itself; TTL and PITR are separate APIs (and dynalite has neither).
const DEPLOY_ONLY = new Set([
  'TableName',
  'TimeToLiveSpecification',
  'PointInTimeRecoverySpecification',
  'ContributorInsightsSpecification',
  'KinesisStreamSpecification',
  'ResourcePolicy',
  'ImportSourceSpecification',
  'WarmThroughput',
]);
// Same shape in CloudFormation and in CreateTable.
const PASS_THROUGH = new Set([
  'AttributeDefinitions',
  'KeySchema',
  'BillingMode',
  'ProvisionedThroughput',
  'OnDemandThroughput',
  'TableClass',
  'DeletionProtectionEnabled',
  'Tags',
]);

/**
 * CreateTable input for `tableName` from the table's CloudFormation Properties. Pure: the conversion the
 * local stack relies on to build the very indexes serverless.yml deploys. Unknown properties are refused
 * rather than dropped, so a new setting cannot silently go missing locally.
 */
export function createTableInput(properties: CfnTableProperties, tableName: string): CreateTableCommandInput {
  assertResolved(properties, 'Properties');
  const input: Record<string, unknown> = { TableName: tableName };
  for (const [name, value] of Object.entries(properties)) {
    if (DEPLOY_ONLY.has(name)) continue;
    if (PASS_THROUGH.has(name)) input[name] = value;
    else if (name === 'LocalSecondaryIndexes') input[name] = (value as LocalSecondaryIndex[]).map(localIndex);
    else if (name === 'GlobalSecondaryIndexes') input[name] = (value as Record<string, unknown>[]).map(globalIndex);
    else if (name === 'StreamSpecification') {
      input[name] = { StreamEnabled: true, StreamViewType: (value as { StreamViewType: string }).StreamViewType };
    } else if (name === 'SSESpecification') {
      const sse = value as { SSEEnabled?: boolean; SSEType?: string; KMSMasterKeyId?: string };
      input[name] = { Enabled: sse.SSEEnabled, SSEType: sse.SSEType, KMSMasterKeyId: sse.KMSMasterKeyId };
    } else {
      throw new TableDefinitionError(`table property ${name} has no CreateTable conversion`);
    }
  }
  if (!input.KeySchema || !input.AttributeDefinitions) {
    throw new TableDefinitionError('table definition needs KeySchema and AttributeDefinitions');
  }
  return input as unknown as CreateTableCommandInput;
}

function localIndex(index: LocalSecondaryIndex): LocalSecondaryIndex {
  return { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection };
}

function globalIndex(index: Record<string, unknown>): GlobalSecondaryIndex {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(index)) {
    // Per-index contributor insights is a CloudFormation-only setting.
    if (name !== 'ContributorInsightsSpecification') out[name] = value;
  }
  return out as unknown as GlobalSecondaryIndex;
}

function assertResolved(value: unknown, where: string): void {
  if (typeof value === 'string' && value.includes('${')) {
    throw new TableDefinitionError(`${where} holds an unresolved variable "${value}": the local table needs literals`);
  }
  if (Array.isArray(value)) value.forEach((v, i) => assertResolved(v, `${where}[${i}]`));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'TableName') assertResolved(v, `${where}.${k}`);
  }
}

/** The Properties of the one AWS::DynamoDB::Table in a CloudFormation resources document. */
export function tablePropertiesFromYaml(text: string): CfnTableProperties {
  const doc = parse(text) as { Resources?: Record<string, { Type?: string; Properties?: CfnTableProperties }> };
  const tables = Object.entries(doc?.Resources ?? {}).filter(([, r]) => r?.Type === 'AWS::DynamoDB::Table');
  if (tables.length !== 1 || !tables[0]?.[1].Properties) {
    throw new TableDefinitionError(`expected exactly one AWS::DynamoDB::Table with Properties, found ${tables.length}`);
  }
  return tables[0][1].Properties;
}

export async function loadTableInput(
  tableName: string = LOCAL_NAMES.table,
  file: string = TABLE_DEFINITION_FILE,
): Promise<CreateTableCommandInput> {
  return createTableInput(tablePropertiesFromYaml(await readFile(file, 'utf8')), tableName);
}
