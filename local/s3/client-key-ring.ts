// Each client's own S3 key pair on the local stack, as a client's IAM role is on AWS (docs/deployment.md): kept in the
// data dir (s3-keys.json, mode 0600) beside the stack's other secrets, made by `npm run client:s3-keys -- <clientId>`
// (and client:create), and read by the local S3, which checks SigV4 signatures with them and then lets a client's key do
// only what the client's policy allows (scope.ts). The operator's key (S3RVER/S3RVER) stays apart, with full access.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertClientId } from '../../lib/auth/api-keys';

export interface ClientS3Key {
  clientId: string;
  accessKeyId: string;
  secretAccessKey: string;
}

type KeyFile = Record<string, { clientId: string; secretAccessKey: string }>;

export const clientS3KeysFile = (dataDir: string): string => path.join(dataDir, 's3-keys.json');

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** An access key id shaped as AWS's (20 upper-case characters, "AKIA" first). */
const newAccessKeyId = (): string => `AKIA${[...randomBytes(16)].map((b) => BASE32[b % 32]).join('')}`;
/** A 40-character secret, as AWS's are. */
const newSecret = (): string => randomBytes(30).toString('base64');

function readKeyFile(file: string): KeyFile {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as KeyFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

/** The client's key pair in the data dir: the one it has, or a new one (written to a temporary file, then renamed). */
export function issueClientS3Key(dataDir: string, clientId: string): ClientS3Key {
  assertClientId(clientId);
  const file = clientS3KeysFile(dataDir);
  const keys = readKeyFile(file);
  const held = Object.entries(keys).find(([, k]) => k.clientId === clientId);
  if (held) return { clientId, accessKeyId: held[0], secretAccessKey: held[1].secretAccessKey };
  const key = { clientId, accessKeyId: newAccessKeyId(), secretAccessKey: newSecret() };
  keys[key.accessKeyId] = { clientId, secretAccessKey: key.secretAccessKey };
  const temporary = `${file}.${randomBytes(3).toString('hex')}`;
  writeFileSync(temporary, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  return key;
}

/** The clients' keys as the local S3 reads them: the file read again whenever it changed (another process writes it). */
export class ClientS3KeyRing {
  private keys: KeyFile = {};
  private version = '';

  constructor(private readonly file: string) {}

  /** The client and secret of an access key, or undefined when no client holds it. */
  lookup(accessKeyId: string): { clientId: string; secretAccessKey: string } | undefined {
    this.refresh();
    return Object.hasOwn(this.keys, accessKeyId) ? this.keys[accessKeyId] : undefined;
  }

  private refresh(): void {
    let version: string;
    try {
      const stat = statSync(this.file);
      version = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      version = 'none';
    }
    if (version === this.version) return;
    this.keys = version === 'none' ? {} : readKeyFile(this.file);
    this.version = version;
  }
}
