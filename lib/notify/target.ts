// Where a callback goes: the URL checked (scheme, no credentials), its host resolved once and every address judged
// (lib/notify/address.ts); the connection then uses the address judged, never a second lookup, so a DNS answer that
// changes between check and connect (rebinding) cannot redirect it.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { IceCatError, type IceCatErrorOptions } from '../errors';
import { judgeAddress } from './address';

export interface CallbackPolicy {
  /**
   * The local stack's exception: plain http, and loopback addresses on the ports in `loopbackPorts`, are allowed. Off
   * on AWS: only https to public addresses.
   */
  allowLoopback: boolean;
  /**
   * Where loopback is allowed, the ports a loopback callback may reach (CALLBACK_LOOPBACK_PORTS: the operator's list,
   * the local stack's own ports taken out); none when absent. A callback to any other port on this machine (the
   * bridge's control routes, the API, the local S3) is refused.
   */
  loopbackPorts?: PortRanges;
}

/** Inclusive port ranges, [from, to]. */
export type PortRanges = readonly (readonly [number, number])[];

/** "8080, 9000-9099" as ranges (empty text: none); undefined when the text is not such a list of ports 1-65535. */
export function parsePortRanges(text: string): PortRanges | undefined {
  const ranges: [number, number][] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    const from = Number(m?.[1]);
    const to = m?.[2] === undefined ? from : Number(m[2]);
    if (!m || from < 1 || to > 65535 || to < from) return undefined;
    ranges.push([from, to]);
  }
  return ranges;
}

/** The ranges without the given ports, in the list's own text form ("1024-4568,4570-65535"). */
export function portRangesWithout(ranges: PortRanges, ports: readonly number[]): string {
  const out: string[] = [];
  const holes = [...new Set(ports)].sort((a, b) => a - b);
  for (const [from, to] of ranges) {
    let start = from;
    for (const hole of holes) {
      if (hole < start || hole > to) continue;
      if (hole > start) out.push(hole - 1 === start ? String(start) : `${start}-${hole - 1}`);
      start = hole + 1;
    }
    if (start <= to) out.push(start === to ? String(start) : `${start}-${to}`);
  }
  return out.join(',');
}

type CallbackRefusal = 'InvalidUrl' | 'SchemeNotAllowed' | 'CredentialsInUrl' | 'HostNotFound' | 'AddressNotAllowed';

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

/** The port a URL connects to: its own, else its scheme's. */
const portOf = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443);

const portAllowed = (port: number, ranges: PortRanges | undefined): boolean =>
  (ranges ?? []).some(([from, to]) => port >= from && port <= to);

type Verdict = 'allowed' | 'public-only' | 'loopback-port';

function permitted(address: string, port: number, policy: CallbackPolicy): Verdict {
  const verdict = judgeAddress(address);
  if (verdict.allowed) return 'allowed';
  if (!policy.allowLoopback || verdict.reason !== 'loopback') return 'public-only';
  return portAllowed(port, policy.loopbackPorts) ? 'allowed' : 'loopback-port';
}

function refusal(verdict: Exclude<Verdict, 'allowed'>, host: string, port: number, resolved: boolean): CallbackTargetError {
  if (verdict === 'loopback-port') {
    return new CallbackTargetError(
      `callbackUrl may reach this machine (${host}) only on a port the operator allows in CALLBACK_LOOPBACK_PORTS, ` +
        `never one of the local stack's own: port ${port} is not allowed`,
      { code: 'AddressNotAllowed' },
    );
  }
  return new CallbackTargetError(
    resolved ? `callbackUrl host ${host} resolves to an address that is not public` : 'callbackUrl must point at a public address',
    { code: 'AddressNotAllowed' },
  );
}

/**
 * The checks that need no network, for POST /v1/batches: a URL (at most 2048 characters), https (http only where
 * loopback is allowed), no user or password, and when the host is an IP literal, an allowed one (a loopback one only
 * on an allowed port).
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
  const verdict = isIP(host) ? permitted(host, portOf(url), policy) : 'allowed';
  if (verdict !== 'allowed') throw refusal(verdict, host, portOf(url), false);
  return url;
}

/** Checks the URL, resolves its host, and refuses it when any address it resolves to is not allowed. */
export async function resolveCallbackTarget(raw: string, policy: CallbackPolicy, lookup: Lookup = systemLookup): Promise<CallbackTarget> {
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
  const verdicts = addresses.map((a) => permitted(a.address, portOf(url), policy));
  const refused = verdicts.find((v) => v !== 'allowed');
  const chosen = addresses[0];
  if (refused || !chosen) throw refusal(refused ?? 'public-only', host, portOf(url), true);
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
