// DynamoDB Local, the strict second DynamoDB backend (DESIGN §4): it rejects what AWS rejects and dynalite accepts
// (empty index keys, invalid projections). The jar ships inside the amplify-dynamodb-simulator npm package, which
// is large, so it is fetched on demand (`npm pack`, not a dependency) into a cache and run with Java, in memory.
//
//   tsx local/dynamodb/dynamodb-local.ts -- <command...>   runs the command with ICECAT_DYNAMODB_ENDPOINT set to a fresh
//                                                 DynamoDB Local, then stops it (npm run test:strict)

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { childEnv, javaHomeFromEnv } from '../config';
import { LOCAL_NAMES } from '../contract';
import { LocalStackError } from '../errors';
import { localDynamoClient } from './dynamodb';

/** Pinned: the package version whose jar (DynamoDB Local 1.25.1) this project was checked against. */
export const SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
/** sha256 of that DynamoDBLocal.jar (npm checks the tarball's integrity; this checks what we run). */
export const JAR_SHA256 = '454305e9bc3e6ebcca5b62569869e31563b8d7e346474e94557b2600702146c7';

export const DEFAULT_CACHE_DIR = path.join(__dirname, '..', '..', 'node_modules', '.cache', 'dynamodb-local');

export class DynamoDBLocalError extends LocalStackError {
  override name = 'DynamoDBLocalError';
  readonly code: string = 'dynamodb_local_failed';
}
export class JavaNotFoundError extends DynamoDBLocalError {
  override name = 'JavaNotFoundError';
  override readonly code: string = 'java_not_found';
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The directory holding DynamoDBLocal.jar and DynamoDBLocal_lib/, downloading the simulator package once.
 * The jar is checked against the pinned sha256.
 */
export function ensureDynamoDBLocal(cacheDir: string = DEFAULT_CACHE_DIR): string {
  const dir = path.join(cacheDir, SIMULATOR_PACKAGE.replace(/[@/]/g, '_'));
  const emulator = path.join(dir, 'emulator');
  if (existsSync(path.join(dir, '.complete'))) return emulator;

  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'ddb-local-'));
  try {
    execFileSync(npm, ['pack', SIMULATOR_PACKAGE, '--pack-destination', scratch, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new DynamoDBLocalError(`npm pack ${SIMULATOR_PACKAGE} produced no tarball`);
    execFileSync('tar', ['-xzf', path.join(scratch, tarball), '-C', dir, '--strip-components=1', 'package/emulator']);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  verifyJar(emulator);
  writeFileSync(path.join(dir, '.complete'), `${SIMULATOR_PACKAGE}\n`);
  return emulator;
}

function verifyJar(emulator: string): void {
  const jar = path.join(emulator, 'DynamoDBLocal.jar');
  if (!existsSync(jar)) throw new DynamoDBLocalError(`${SIMULATOR_PACKAGE} holds no emulator/DynamoDBLocal.jar`);
  const actual = createHash('sha256').update(readFileSync(jar)).digest('hex');
  if (actual !== JAR_SHA256) throw new DynamoDBLocalError(`DynamoDBLocal.jar sha256 ${actual} is not the pinned ${JAR_SHA256}`);
}

/** `java` from JAVA_HOME, else from PATH; fails with how to install it. */
export function findJava(env: { JAVA_HOME?: string } = javaHomeFromEnv()): string {
  const candidates = [
    ...(env.JAVA_HOME ? [path.join(env.JAVA_HOME, 'bin', process.platform === 'win32' ? 'java.exe' : 'java')] : []),
    'java',
  ];
  for (const java of candidates) {
    try {
      execFileSync(java, ['-version'], { stdio: 'ignore' });
      return java;
    } catch {
      // try the next one
    }
  }
  throw new JavaNotFoundError(
    'DynamoDB Local needs a Java runtime (11 or newer) on PATH or in JAVA_HOME, e.g. `apt-get install openjdk-17-jre-headless`',
  );
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface DynamoDBLocal {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  cacheDir?: string;
  /** Milliseconds to wait for it to answer. */
  startTimeoutMs?: number;
}

/** Starts DynamoDB Local in memory (one shared database for every access key and region) and waits until it answers. */
export async function startDynamoDBLocal(opts: StartOptions = {}): Promise<DynamoDBLocal> {
  const host = opts.host ?? LOCAL_NAMES.host;
  const java = findJava();
  const emulator = ensureDynamoDBLocal(opts.cacheDir);
  const port = opts.port || (await freePort(host));
  const proc = spawn(
    java,
    [
      `-Djava.library.path=${path.join(emulator, 'DynamoDBLocal_lib')}`,
      '-jar',
      path.join(emulator, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: emulator, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const url = `http://${host}:${port}`;
  const stop = () => stopProcess(proc, exited);
  try {
    await waitUntilAnswering(url, proc, opts.startTimeoutMs ?? 30_000);
  } catch (err) {
    await stop();
    throw new DynamoDBLocalError(`DynamoDB Local did not start: ${(err as Error).message}\n${output}`, { cause: err });
  }
  return { url, port, stop };
}

async function waitUntilAnswering(url: string, proc: ChildProcess, timeoutMs: number): Promise<void> {
  const client = localDynamoClient(url, { maxAttempts: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`java exited with code ${proc.exitCode}`);
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    client.destroy();
  }
}

async function stopProcess(proc: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

/** Runs `command` with ICECAT_DYNAMODB_ENDPOINT pointing at a fresh DynamoDB Local; resolves to its exit code. */
export async function runWithDynamoDBLocal(command: string[]): Promise<number> {
  const [program, ...args] = command;
  if (!program) throw new DynamoDBLocalError('no command given: tsx local/dynamodb/dynamodb-local.ts -- <command...>');
  const ddb = await startDynamoDBLocal();
  console.log(`[dynamodb-local] ${ddb.url} (in memory) for: ${command.join(' ')}`);
  try {
    const child = spawn(program, args, {
      stdio: 'inherit',
      env: childEnv({ ICECAT_DYNAMODB_ENDPOINT: ddb.url }),
      shell: process.platform === 'win32',
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    return code;
  } finally {
    await ddb.stop();
  }
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const command = argv[0] === '--' ? argv.slice(1) : argv;
  runWithDynamoDBLocal(command).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
