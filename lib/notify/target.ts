// Where a callback goes: the URL checked (scheme, no credentials), its host resolved once and every address judged
// (lib/notify/address.ts); the connection then uses the address judged, never a second lookup, so a DNS answer that
// changes between check and connect (rebinding) cannot redirect it.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { judgeAddress } from './address';
import { IceCatError, type IceCatErrorOptions } from '../errors';

export interface CallbackPolicy {
  /**
   * The local stack's exception: plain http, and loopback addresses, are allowed. Off on AWS: only https to
   * public addresses.
   */
  allowLoopback: boolean;
}

export type CallbackRefusal =
  | 'InvalidUrl'
  | 'SchemeNotAllowed'
  | 'CredentialsInUrl'
  | 'HostNotFound'
  | 'AddressNotAllowed';

export class CallbackTargetError extends IceCatError {
  override name = 'CallbackTargetError';
  readonly code: CallbackRefusal;
  constructor(message: string, options: IceCatErrorOptions & { code: CallbackRefusal }) {
    super(message, options);
    this.code = options.code;
  }
}

export interface CallbackTarget {
  url: URL;
  /** The address the request connects to. */
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

const systemLookup: Lookup = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

function permitted(address: string, policy: CallbackPolicy): boolean {
  const verdict = judgeAddress(address);
  return verdict.allowed || (policy.allowLoopback && verdict.reason === 'loopback');
}

/**
 * The checks that need no network, for POST /v1/batches: a URL (at most 2048 characters), https (http only where
 * loopback is allowed), no user or password, and when the host is an IP literal, an allowed one.
 */
export function checkCallbackUrl(raw: string, policy: CallbackPolicy): URL {
  let url: URL;
  try {
    if (raw.length > 2048) throw new Error('longer than 2048 characters');
    url = new URL(raw);
  } catch (cause) {
    throw new CallbackTargetError('callbackUrl is not a valid absolute URL', { code: 'InvalidUrl', cause });
  }
  const schemes = policy.allowLoopback ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new CallbackTargetError(`callbackUrl must use ${policy.allowLoopback ? 'http or https' : 'https'}`, { code: 'SchemeNotAllowed' });
  }
  if (url.username || url.password) {
    throw new CallbackTargetError('callbackUrl must not carry a user name or password', { code: 'CredentialsInUrl' });
  }
  const host = hostOf(url);
  if (isIP(host) && !permitted(host, policy)) {
    throw new CallbackTargetError('callbackUrl must point at a public address', { code: 'AddressNotAllowed' });
  }
  return url;
}

/** Checks the URL, resolves its host, and refuses it when any address it resolves to is not allowed. */
export async function resolveCallbackTarget(
  raw: string,
  policy: CallbackPolicy,
  lookup: Lookup = systemLookup,
): Promise<CallbackTarget> {
  const url = checkCallbackUrl(raw, policy);
  const host = hostOf(url);
  let addresses: LookupAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host);
    } catch (cause) {
      throw new CallbackTargetError(`callbackUrl host ${host} does not resolve`, { code: 'HostNotFound', cause });
    }
  }
  // One refused address refuses the host: a name that answers both a public and a private address is an attack.
  const refused = addresses.find((a) => !permitted(a.address, policy));
  const chosen = addresses[0];
  if (refused || !chosen) {
    throw new CallbackTargetError(`callbackUrl host ${host} resolves to an address that is not public`, { code: 'AddressNotAllowed' });
  }
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
