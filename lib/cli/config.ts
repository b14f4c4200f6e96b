// The CLI's configuration, the one module of the CLI that reads the environment: read once when `icecat` starts, at
// its edge (runCli, lib/cli/main.ts), into one CliConfig handed to every command as CommandContext.config. Where the
// API is and which key to send: flags first, then ICECAT_API_URL / ICECAT_API_KEY, then the local stack's default URL.
// Never AWS credentials: the API hands out presigned forms for the uploads.
import { envNumber, envString, pricePerImageUsd } from '../config';
import { UsageError } from './errors';

/** Everything the commands read of the environment, read once when the CLI starts. */
export interface CliConfig {
  /** ICECAT_API_URL (a --api-url flag wins). */
  apiUrl?: string;
  /** ICECAT_API_KEY (an --api-key flag wins). */
  apiKey?: string;
  /** ICECAT_BRIDGE_URL: the local stack's bridge, asked why nothing moves (lib/cli/service-status.ts). */
  bridgeUrl?: string;
  /** How long --wait sees nothing move before it says why (ICECAT_WAIT_STALL_SECONDS, 30 s). */
  waitStallMs: number;
  /** What a dry run prices a DetectLabels call at when the API names no price (ICECAT_PRICE_PER_IMAGE_USD). */
  pricePerImageUsd: number;
}

/** The CLI's configuration from the environment; a bad number fails here, naming the variable. */
export function loadCliConfig(): CliConfig {
  const apiUrl = envString('ICECAT_API_URL');
  const apiKey = envString('ICECAT_API_KEY');
  const bridgeUrl = envString('ICECAT_BRIDGE_URL');
  return {
    ...(apiUrl ? { apiUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(bridgeUrl ? { bridgeUrl } : {}),
    waitStallMs: envNumber('ICECAT_WAIT_STALL_SECONDS', 30, { min: 0.01, max: 86_400 }) * 1000,
    pricePerImageUsd: pricePerImageUsd(),
  };
}

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';

interface ConnectionFlags {
  apiUrl?: string;
  apiKey?: string;
}

interface Connection {
  apiUrl: string;
  apiKey: string;
}

export function resolveConnection(flags: ConnectionFlags, config: Pick<CliConfig, 'apiUrl' | 'apiKey'>): Connection {
  const apiUrl = flags.apiUrl ?? config.apiUrl ?? DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new UsageError(`the API URL ${JSON.stringify(apiUrl)} is not a URL (--api-url or ICECAT_API_URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the API URL must be http or https, not ${url.protocol} (--api-url or ICECAT_API_URL)`);
  }
  const apiKey = flags.apiKey ?? config.apiKey ?? '';
  if (apiKey === '') {
    throw new UsageError('no API key: set ICECAT_API_KEY or pass --api-key (`npm start` prints one for the local stack)');
  }
  return { apiUrl: url.toString().replace(/\/$/, ''), apiKey };
}
