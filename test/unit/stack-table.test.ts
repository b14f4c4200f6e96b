import { readFileSync } from 'node:fs';
import { INDEX } from '../../lib/store/table/schema';
import {
  createTableInput,
  TABLE_DEFINITION_FILE,
  TableDefinitionError,
  tablePropertiesFromYaml,
} from '../../local/dynamodb/table-definition';

const definition = () => tablePropertiesFromYaml(readFileSync(TABLE_DEFINITION_FILE, 'utf8'));

describe('createTableInput from resources/table.yml', () => {
  it('creates every index the schema names, from the deployed definition', () => {
    // Act
    const input = createTableInput(definition(), 'IceCatWrangler');

    // Assert
    const names = [...(input.LocalSecondaryIndexes ?? []), ...(input.GlobalSecondaryIndexes ?? [])].map((i) => i.IndexName);
    expect(names.sort()).toEqual(Object.values(INDEX).sort());
  });

  it('uses the given table name instead of the deployment variable', () => {
    const input = createTableInput(definition(), 'IceCatWrangler');

    expect(input.TableName).toBe('IceCatWrangler');
  });

  it('leaves out TTL and point-in-time recovery, which CreateTable does not take', () => {
    const input = createTableInput(definition(), 'T') as unknown as Record<string, unknown>;

    expect(input).not.toHaveProperty('TimeToLiveSpecification');
    expect(input).not.toHaveProperty('PointInTimeRecoverySpecification');
  });

  it('keeps key schema, attribute definitions, billing mode and index projections as defined', () => {
    // Arrange
    const properties = definition() as { GlobalSecondaryIndexes: { IndexName: string; Projection: unknown }[] };

    // Act
    const input = createTableInput(properties, 'T');

    // Assert
    expect(input.KeySchema).toEqual([
      { AttributeName: 'batch_id', KeyType: 'HASH' },
      { AttributeName: 'img_fprint', KeyType: 'RANGE' },
    ]);
    expect(input.BillingMode).toBe('PAY_PER_REQUEST');
    expect(input.AttributeDefinitions).toContainEqual({ AttributeName: 'cat_ts', AttributeType: 'N' });
    const cats = input.GlobalSecondaryIndexes?.find((i) => i.IndexName === 'client-cats');
    expect(cats?.Projection).toEqual(properties.GlobalSecondaryIndexes.find((i) => i.IndexName === 'client-cats')?.Projection);
  });

  it('converts CloudFormation StreamSpecification and SSESpecification to the CreateTable shapes', () => {
    // Arrange
    const properties = {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
    };

    // Act
    const input = createTableInput(properties, 'T');

    // Assert
    expect(input.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    expect(input.SSESpecification).toEqual({ Enabled: true, SSEType: 'KMS', KMSMasterKeyId: undefined });
  });

  it('drops per-index ContributorInsightsSpecification from global indexes', () => {
    const input = createTableInput(
      {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'g', AttributeType: 'S' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'g',
            KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
            ContributorInsightsSpecification: { Enabled: true },
          },
        ],
      },
      'T',
    );

    expect(input.GlobalSecondaryIndexes?.[0]).not.toHaveProperty('ContributorInsightsSpecification');
  });

  it('refuses a property it cannot convert rather than dropping it', () => {
    const convert = () => createTableInput({ KeySchema: [], AttributeDefinitions: [], SomethingNew: true }, 'T');

    expect(convert).toThrow(TableDefinitionError);
  });

  it('refuses an unresolved serverless variable outside TableName', () => {
    const convert = () =>
      createTableInput(
        { TableName: '${self:custom.tableName}', KeySchema: [], AttributeDefinitions: [], BillingMode: '${self:custom.billing}' },
        'T',
      );

    expect(convert).toThrow(/unresolved variable/);
  });
});

describe('tablePropertiesFromYaml', () => {
  it('finds the one AWS::DynamoDB::Table among other resources', () => {
    // Arrange
    const yaml = [
      'Resources:',
      '  Queue: { Type: AWS::SQS::Queue, Properties: { QueueName: q } }',
      '  Table:',
      '    Type: AWS::DynamoDB::Table',
      '    Properties: { BillingMode: PAY_PER_REQUEST }',
    ].join('\n');

    // Act
    const properties = tablePropertiesFromYaml(yaml);

    // Assert
    expect(properties).toEqual({ BillingMode: 'PAY_PER_REQUEST' });
  });

  it('refuses a document without a table', () => {
    expect(() => tablePropertiesFromYaml('Resources: {}')).toThrow(TableDefinitionError);
  });
});
