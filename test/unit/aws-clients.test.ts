// The service's AWS clients: no logger middleware (nothing is logged, yet it filters every input and output), and
// the S3 client resolves each command's middleware once (cacheMiddleware), where no command adds its own.
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createDocumentClient, createRekognitionClient, createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';

const names = (client: { middlewareStack: { identify(): string[] } }) => client.middlewareStack.identify().map((n) => n.split(' ')[0]);

describe('AWS clients', () => {
  const saved = { ...process.env };
  beforeAll(() => {
    // A client configured as the local stack configures it (path style), with a region and credentials to sign with.
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    });
  });
  afterAll(() => {
    process.env = saved;
  });

  it('carry no logger middleware', () => {
    for (const client of [
      createS3Client(loadAwsClientSettings()),
      createDocumentClient(),
      createRekognitionClient(loadAwsClientSettings()),
    ]) {
      expect(names(client)).not.toContain('loggerMiddleware');
      expect(names(client).length).toBeGreaterThan(5); // the rest of the stack is there
    }
  });

  it('cache the S3 middleware per command class, and build each request from its own command', async () => {
    const s3 = createS3Client(loadAwsClientSettings());
    expect(s3.config.cacheMiddleware).toBe(true);
    const seen: string[] = [];
    // A client-level step sees each call's own request: a cached stack must not replay the first command's input.
    s3.middlewareStack.add(
      () => async (args) => {
        const request = args.request as { method: string; path: string };
        seen.push(`${request.method} ${request.path}`);
        throw new Error('not sent');
      },
      { step: 'finalizeRequest', name: 'capture' },
    );
    for (const command of [
      new GetObjectCommand({ Bucket: 'b', Key: 'one' }),
      new GetObjectCommand({ Bucket: 'b', Key: 'two' }),
      new PutObjectCommand({ Bucket: 'b', Key: 'three', Body: 'x' }),
    ]) {
      await expect(s3.send(command)).rejects.toThrow('not sent');
    }
    expect(seen.map((s) => s.replace(/\?.*$/, ''))).toEqual(['GET /b/one', 'GET /b/two', 'PUT /b/three']);
  });
});
