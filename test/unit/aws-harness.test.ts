// The moto artifact test's own pieces (test/aws/), where a mistake would let a defect through: the route API Gateway
// matches and the path parameters it fills, and the IAM actions and ARNs each AWS request is authorized as.
import { type AwsRequest, describeRequest } from '../aws/authorizations';
import { resolve } from '../aws/intrinsics';
import { httpApiEvent, matchRoute } from '../aws/lambda-events';

const ROUTES = [
  'POST /v1/batches',
  'POST /v1/batches/{batchId}',
  'POST /v1/batches/{batchId}/uploads',
  'POST /v1/batches/{batchId}/{action}',
  'GET /v1/batches/{batchId}/images/{fprint}',
  'GET /app/{proxy+}',
  '$default',
];
const account = { region: 'us-east-1', accountId: '123456789012' };
const request = (r: Partial<AwsRequest> & Pick<AwsRequest, 'service'>): AwsRequest => ({
  method: 'POST',
  url: '/',
  headers: {},
  body: Buffer.alloc(0),
  ...r,
});
const json = (target: string, body: unknown) => ({ headers: { 'x-amz-target': target }, body: Buffer.from(JSON.stringify(body)) });

test('a {batchId} segment takes "id:close" whole, a literal segment wins over a variable, {proxy+} is greedy', () => {
  expect(matchRoute(ROUTES, 'POST', '/v1/batches/abc:close')).toEqual({
    routeKey: 'POST /v1/batches/{batchId}',
    pathParameters: { batchId: 'abc:close' },
  });
  expect(matchRoute(ROUTES, 'POST', '/v1/batches/abc/uploads').routeKey).toBe('POST /v1/batches/{batchId}/uploads');
  expect(matchRoute(ROUTES, 'POST', '/v1/batches/abc/images:batchGet').pathParameters).toEqual({
    batchId: 'abc',
    action: 'images:batchGet',
  });
  expect(matchRoute(ROUTES, 'GET', '/app/a/b.js').pathParameters).toEqual({ proxy: 'a/b.js' });
  expect(matchRoute(ROUTES, 'DELETE', '/v1/batches/abc')).toEqual({ routeKey: '$default' });
});

test('the payload 2.0 event: raw path and query, repeated keys comma-joined, lower-cased headers, the route in its context', () => {
  const event = httpApiEvent({ accountId: '1', apiId: 'api1', region: 'us-east-1' }, ROUTES, {
    method: 'POST',
    path: '/v1/batches/abc:close?a=1&a=2',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
  });
  expect([event.routeKey, event.rawPath, event.rawQueryString, event.queryStringParameters, event.headers['content-type']]).toEqual([
    'POST /v1/batches/{batchId}',
    '/v1/batches/abc:close',
    'a=1&a=2',
    { a: '1,2' },
    'application/json',
  ]);
  expect([event.requestContext.routeKey, event.requestContext.stage, event.requestContext.http.method]).toEqual([
    'POST /v1/batches/{batchId}',
    '$default',
    'POST',
  ]);
});

test('DynamoDB: a query on an index is on the index ARN; a transaction is each action on its table', () => {
  const query = describeRequest(
    account,
    request({ service: 'dynamodb', ...json('DynamoDB_20120810.Query', { TableName: 'T', IndexName: 'client-fprint' }) }),
  );
  expect(query.authorizations).toEqual([
    { action: 'dynamodb:Query', resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/T/index/client-fprint' },
  ]);
  const tx = describeRequest(
    account,
    request({
      service: 'dynamodb',
      ...json('DynamoDB_20120810.TransactWriteItems', {
        TransactItems: [{ Put: { TableName: 'T' } }, { ConditionCheck: { TableName: 'T' } }],
      }),
    }),
  );
  expect(tx.authorizations.map((a) => a.action)).toEqual(['dynamodb:PutItem', 'dynamodb:ConditionCheckItem']);
});

test('S3: CopyObject reads the source and writes the target; DeleteObjects is each DeleteObject; a listing carries s3:prefix', () => {
  const copy = describeRequest(
    account,
    request({ service: 's3', method: 'PUT', url: '/b/processed/x.png', headers: { 'x-amz-copy-source': '/b/uploads/x.png' } }),
  );
  expect(copy.authorizations.map((a) => `${a.action} ${a.resource}`)).toEqual([
    's3:GetObject arn:aws:s3:::b/uploads/x.png',
    's3:PutObject arn:aws:s3:::b/processed/x.png',
  ]);
  const del = describeRequest(
    account,
    request({ service: 's3', url: '/b?delete', body: Buffer.from('<Delete><Object><Key>a&amp;b</Key></Object></Delete>') }),
  );
  expect(del.authorizations).toEqual([{ action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a&b' }]);
  const list = describeRequest(account, request({ service: 's3', method: 'GET', url: '/b?list-type=2&prefix=uploads%2F' }));
  expect(list.authorizations).toEqual([{ action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:prefix': 'uploads/' } }]);
});

test('SQS batches are authorized as their single actions; DetectLabels on an S3Object is also the caller’s GetObject', () => {
  const send = describeRequest(
    account,
    request({ service: 'sqs', ...json('AmazonSQS.SendMessageBatch', { QueueUrl: 'http://x/123456789012/q' }) }),
  );
  expect(send.authorizations).toEqual([{ action: 'sqs:SendMessage', resource: 'arn:aws:sqs:us-east-1:123456789012:q' }]);
  const detect = describeRequest(
    account,
    request({ service: 'rekognition', ...json('RekognitionService.DetectLabels', { Image: { S3Object: { Bucket: 'b', Name: 'k' } } }) }),
  );
  expect(detect.authorizations.map((a) => a.action)).toEqual(['rekognition:DetectLabels', 's3:GetObject']);
});

test('intrinsics: Fn::Sub with an attribute, Fn::Join over Refs, Fn::If on a condition', () => {
  const template = {
    Resources: { Table: { Type: 'AWS::DynamoDB::Table', Properties: {} }, Q: { Type: 'AWS::SQS::Queue', Properties: {} } },
    Conditions: { HasMail: { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'Mail' }, ''] }] } },
  };
  const ctx = {
    region: 'us-east-1',
    accountId: '123456789012',
    parameters: { Mail: '' },
    physical: { Table: 'T', Q: 'https://sqs/123456789012/q' },
  };
  expect(resolve(template, ctx, { 'Fn::Sub': '${Table.Arn}/index/*' })).toBe('arn:aws:dynamodb:us-east-1:123456789012:table/T/index/*');
  expect(resolve(template, ctx, { 'Fn::Join': ['/', ['x', { 'Fn::GetAtt': ['Q', 'QueueName'] }]] })).toBe('x/q');
  expect(resolve(template, ctx, { 'Fn::If': ['HasMail', 'yes', 'no'] })).toBe('no');
});
