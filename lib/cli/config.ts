// The CLI's configuration, the one module of the CLI that reads the environment: taken once when `icecat` starts
// (runCli hands it to every command as CommandContext.env). Where the API is and which key to send: flags first, then
// ICECAT_API_URL / ICECAT_API_KEY, then the local stack's default URL. Never AWS credentials: the API hands out
// presigned forms for the uploads.
import { envNumber } from '../config';
import { UsageError } from './errors';

/** The environment the CLI was started with, read once by runCli (lib/cli/main.ts) into its commands' context. */
export const cliEnvironment = (): NodeJS.ProcessEnv => ({ ...process.env });

/** How long --wait sees nothing move before it says why (ICECAT_WAIT_STALL_SECONDS, 30 s). */
export const waitStallMs = (): number => envNumber('ICECAT_WAIT_STALL_SECONDS', 30, { min: 0.01, max: 86_400 }) * 1000;

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';

interface ConnectionFlags {
  apiUrl?: string;
  apiKey?: string;
}

interface Connection {
  apiUrl: string;
  apiKey: string;
}

export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Connection {
  const apiUrl = flags.apiUrl ?? (env.ICECAT_API_URL || DEFAULT_API_URL);
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new UsageError(`the API URL ${JSON.stringify(apiUrl)} is not a URL (--api-url or ICECAT_API_URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the API URL must be http or https, not ${url.protocol} (--api-url or ICECAT_API_URL)`);
  }
  const apiKey = flags.apiKey ?? env.ICECAT_API_KEY ?? '';
  if (apiKey === '') {
    throw new UsageError('no API key: set ICECAT_API_KEY or pass --api-key (`npm start` prints one for the local stack)');
  }
  return { apiUrl: url.toString().replace(/\/$/, ''), apiKey };
}
