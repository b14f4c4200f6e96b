// The packaged stack on moto, ready to drive: moto started, the compiled template deployed, what it skips made and what
// it ignores applied (fill-in.ts), its event source mappings switched off (the test is their poller: moto's would
// invoke through Docker), the offline detector answering Rekognition, the recording proxy in front of both, and every
// function's artifact unzipped and started as Lambda would run it.

import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetFunctionConfigurationCommand, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { DeleteBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { detectorSettingsFromEnvironment } from '../../local/detector/from-environment';
import { type DetectorServer, startDetectorServer } from '../../local/detector/server';
import { bundleFunction } from '../../scripts/bundle';
import { extractZip } from '../../scripts/zip';
import { ensurePackaged, type Packaged, ROOT } from '../deploy/packaged';
import { ACCOUNT_ID, clientConfig, type Deployed, deployStack, REGION } from './deploy';
import {
  applyBucketProperties,
  applyFunctionEnvironments,
  applyTableProperties,
  destroyClients,
  type FillInClients,
  fillInClients,
  makeSkippedResources,
  readBucketPolicy,
} from './fill-in';
import { resolve, type StackContext, type TemplateWithConditions } from './intrinsics';
import { type FunctionConfig, type LambdaRuntime, lambdaEnvironment, startLambda } from './lambda-runtime';
import { type MotoServer, startMoto } from './moto-server';
import { type RecordingProxy, startRecordingProxy } from './recording-proxy';
import { authorize, type RoleBook, roleBook } from './role-check';

export const FUNCTIONS = ['ingest', 'route', 'api', 'batches', 'reconcile', 'expire', 'erase', 'callbacks', 'importTask'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

/**
 * The template's parameters for this deployment: an alarm address, so the SNS subscription is made too, and a source
 * bucket for imports, so the roles' grants on import sources are made and checked too.
 */
export const PARAMETERS = { AlarmEmail: 'ops@example.com', ImportSourceBuckets: 'client-photo-library' };

export interface DeployedFunction {
  config: FunctionConfig;
  arn: string;
  runtime: LambdaRuntime;
  credentials: { accessKeyId: string; secretAccessKey: string };
  dir: string;
}

export interface MotoStack {
  moto: MotoServer;
  proxy: RecordingProxy;
  packaged: Packaged;
  template: TemplateWithConditions;
  ctx: StackContext;
  deployed: Deployed;
  /** Logical ids the test made because moto's CloudFormation skipped them. */
  made: string[];
  /** Function variables the test resolved (`{{resolve:…}}`, Refs to skipped resources). */
  resolvedVariables: string[];
  /** The images bucket's policy as S3 on moto answered it once made (then deleted: see fillIn). */
  bucketPolicyAsMade: unknown;
  /** Each function's environment as moto held it right after the deployment. */
  deployedVariables: Record<string, Record<string, string>>;
  clients: FillInClients;
  book: RoleBook;
  functions: Record<FunctionName, DeployedFunction>;
  /** Whether the ingest's twin runs the deployed zip's JavaScript, byte for byte. */
  twinIsDeployedCode: boolean;
  /** Seconds each step of the start took, in order. */
  phases: [string, number][];
  /** The operator's S3 client, straight to moto (path-style). */
  s3: S3Client;
  logicalId(name: FunctionName): string;
  stop(): Promise<void>;
}

export const lambdaLogicalId = (fn: string): string => `${fn.charAt(0).toUpperCase()}${fn.slice(1)}LambdaFunction`;

/** An access key per function: the proxy knows the caller by it. */
const credentialsOf = (fn: string) => ({
  accessKeyId: `AKIA${fn.toUpperCase().padEnd(16, 'X')}`,
  secretAccessKey: `secret-of-${fn}`,
});

async function disableEventSourceMappings(clients: FillInClients): Promise<number> {
  const out = await clients.lambda.send(new ListEventSourceMappingsCommand({}));
  for (const m of out.EventSourceMappings ?? [])
    await clients.lambda.send(new UpdateEventSourceMappingCommand({ UUID: m.UUID, Enabled: false }));
  return out.EventSourceMappings?.length ?? 0;
}

/**
 * The ingest's twin for this machine's architecture (only its zip carries native binaries, arm64 ones): built once per
 * package into .build/twin/, like the package itself reused while it is newer than the deployed zip.
 */
async function ingestTwin(packaged: Packaged): Promise<string> {
  const outDir = path.join(ROOT, '.build', 'twin', process.arch);
  const zip = path.join(outDir, 'ingest.zip');
  if (existsSync(zip) && statSync(zip).mtimeMs > statSync(packaged.artifact('ingest')).mtimeMs) return zip;
  const twin = await bundleFunction({
    name: 'ingest',
    handler: 'functions/ingest/handler.handler',
    architecture: 'x86_64',
    nodeTarget: `node${(packaged.service.provider.runtime as string).replace(/^nodejs(\d+)\.x$/, '$1')}`,
    projectDir: ROOT,
    outDir,
  });
  return twin.artifact;
}

export interface Unzipped {
  dirs: Record<FunctionName, string>;
  /** Whether the ingest's twin runs the deployed zip's JavaScript, byte for byte. */
  twinIsDeployedCode: boolean;
}

/** Every function's artifact unzipped into its own folder (the ingest's twin on a machine that is not arm64). */
async function unzipAll(packaged: Packaged, work: string): Promise<Unzipped> {
  const dirs = {} as Record<FunctionName, string>;
  const twin = process.arch === 'arm64' ? undefined : await ingestTwin(packaged);
  await Promise.all(
    FUNCTIONS.map(async (fn) => {
      dirs[fn] = path.join(work, fn);
      await extractZip(fn === 'ingest' && twin ? twin : packaged.artifact(fn), dirs[fn]);
    }),
  );
  const deployed = path.join(work, 'ingest-deployed');
  await extractZip(packaged.artifact('ingest'), deployed);
  const js = (root: string) => readFileSync(path.join(root, 'functions', 'ingest', 'handler.js'));
  return { dirs, twinIsDeployedCode: js(dirs.ingest).equals(js(deployed)) };
}

async function startFunctions(
  stack: Omit<MotoStack, 'functions'>,
  dirs: Record<FunctionName, string>,
): Promise<Record<FunctionName, DeployedFunction>> {
  const functions = {} as Record<FunctionName, DeployedFunction>;
  for (const fn of FUNCTIONS) {
    const name = stack.ctx.physical[lambdaLogicalId(fn)] as string;
    const conf = await stack.clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
    const config: FunctionConfig = {
      name: fn,
      functionName: name,
      handler: conf.Handler as string,
      timeoutSeconds: conf.Timeout as number,
      memorySize: conf.MemorySize as number,
      variables: conf.Environment?.Variables ?? {},
    };
    const dir = dirs[fn];
    const credentials = credentialsOf(fn);
    const env = lambdaEnvironment(config, credentials, REGION, stack.proxy.url, dir);
    functions[fn] = {
      config,
      arn: conf.FunctionArn as string,
      runtime: startLambda(config, dir, env, conf.FunctionArn as string),
      credentials,
      dir,
    };
  }
  return functions;
}

async function readVariables(clients: FillInClients, ctx: StackContext): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const fn of FUNCTIONS) {
    const conf = await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: ctx.physical[lambdaLogicalId(fn)] }));
    out[fn] = conf.Environment?.Variables ?? {};
  }
  return out;
}

/** Makes the skipped resources and applies the ignored properties; answers what it made and resolved. */
async function fillIn(
  clients: FillInClients,
  template: TemplateWithConditions,
  ctx: StackContext,
): Promise<{ made: string[]; resolvedVariables: string[]; bucketPolicyAsMade: unknown }> {
  const made = await makeSkippedResources(clients, template, ctx);
  // Moto evaluates a bucket policy without the request's condition values, and a statement whose condition fails
  // denies: DenyInsecureTransport (Deny unless aws:SecureTransport) would refuse every object request. The policy is
  // read back as made, then taken off moto; the role check applies it, conditions included (role-check.ts).
  const bucketPolicyAsMade = await readBucketPolicy(clients.s3, ctx.physical.ImagesBucket as string);
  await clients.s3.send(new DeleteBucketPolicyCommand({ Bucket: ctx.physical.ImagesBucket }));
  const bucket = template.Resources.ImagesBucket as { Properties: Record<string, unknown> };
  await applyBucketProperties(
    clients,
    ctx.physical.ImagesBucket as string,
    resolve(template, ctx, bucket.Properties) as Record<string, unknown>,
  );
  const table = template.Resources.ImagesTable as { Properties: Record<string, unknown> };
  await applyTableProperties(
    clients,
    ctx.physical.ImagesTable as string,
    resolve(template, ctx, table.Properties) as Record<string, unknown>,
  );
  const resolvedVariables = await applyFunctionEnvironments(clients, template, ctx);
  return { made, resolvedVariables, bucketPolicyAsMade };
}

export async function startMotoStack(): Promise<MotoStack> {
  const phases: [string, number][] = [];
  let last = Date.now();
  const phase = (name: string): void => {
    phases.push([name, (Date.now() - last) / 1000]);
    last = Date.now();
  };
  const work = mkdtempSync(path.join(tmpdir(), 'icecat-moto-'));
  const packaged = await ensurePackaged([...FUNCTIONS]);
  phase('package');
  const [moto, unzipped] = await Promise.all([startMoto(), unzipAll(packaged, work)]);
  phase('moto, and the zips unzipped');
  const s3 = new S3Client({ ...clientConfig(moto.url), forcePathStyle: true });
  const clients = fillInClients(moto.url);
  // The detector loads its model while the stack deploys.
  const detectorStarting = startDetectorServer({
    host: '127.0.0.1',
    port: 0,
    s3,
    settings: detectorSettingsFromEnvironment({ workers: 1 }),
  });
  const cleanUp = async (): Promise<void> => {
    s3.destroy();
    destroyClients(clients);
    await moto.stop();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const template = packaged.template as TemplateWithConditions;
    const deployed = await deployStack(moto.url, packaged, PARAMETERS);
    phase('deploy');
    const ctx: StackContext = { region: REGION, accountId: ACCOUNT_ID, parameters: PARAMETERS, physical: { ...deployed.physical } };
    await disableEventSourceMappings(clients);
    const deployedVariables = await readVariables(clients, ctx);
    const { made, resolvedVariables, bucketPolicyAsMade } = await fillIn(clients, template, ctx);
    phase('fill in');
    const book = roleBook(template, ctx);
    const detector: DetectorServer = await detectorStarting;
    phase('detector');
    const keys = Object.fromEntries(FUNCTIONS.map((fn) => [credentialsOf(fn).accessKeyId, fn]));
    const proxy = await startRecordingProxy(
      { region: REGION, accountId: ACCOUNT_ID },
      keys,
      { default: moto.url, rekognition: detector.url },
      (fn, call) => authorize(book, ACCOUNT_ID, fn, call),
    );
    const base = {
      ...{ moto, proxy, packaged, template, ctx, deployed, made, resolvedVariables, bucketPolicyAsMade, deployedVariables },
      ...{ phases, clients, book, s3, twinIsDeployedCode: unzipped.twinIsDeployedCode, logicalId: lambdaLogicalId },
    };
    const stop = async (): Promise<void> => {
      for (const f of Object.values(functions)) f.runtime.stop();
      await proxy.close();
      await detector.close();
      await cleanUp();
    };
    const functions = await startFunctions({ ...base, stop }, unzipped.dirs);
    return { ...base, functions, stop };
  } catch (err) {
    await detectorStarting.then((d) => d.close()).catch(() => undefined);
    await cleanUp();
    throw err;
  }
}
