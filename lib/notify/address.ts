// Which IP addresses a completion callback may reach: public unicast only. Everything the IANA special-purpose
// registries set aside (private, loopback, link-local and so the metadata service, CGNAT, documentation,
// benchmarking, multicast, reserved) is refused, and IPv6 forms that carry an IPv4 address (mapped, NAT64) are
// judged by the address they carry; forms that route to an embedded address we cannot vouch for (6to4, Teredo,
// IPv4-compatible) are refused outright.
import { isIPv4, isIPv6 } from 'node:net';

type AddressVerdict =
  | { allowed: true }
  | {
      allowed: false;
      reason:
        | 'invalid'
        | 'unspecified'
        | 'loopback'
        | 'private'
        | 'link-local'
        | 'shared'
        | 'unique-local'
        | 'multicast'
        | 'reserved'
        | 'documentation'
        | 'tunnel';
    };

type Reason = Exclude<AddressVerdict, { allowed: true }>['reason'];

interface Range {
  base: bigint;
  bits: number;
  reason: Reason;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n);
}

/** 128-bit value of an IPv6 address (any valid textual form, an IPv4 tail included; no zone). */
function ipv6ToBigInt(ip: string): bigint {
  let text = ip;
  const tail = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (tail?.[1]) {
    const v4 = ipv4ToBigInt(tail[1]);
    text = `${text.slice(0, -tail[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const v4 = (cidr: string, reason: Reason): Range => {
  const [ip = '', bits = '32'] = cidr.split('/');
  return { base: ipv4ToBigInt(ip), bits: Number(bits), reason };
};
const v6 = (cidr: string, reason: Reason): Range => {
  const [ip = '', bits = '128'] = cidr.split('/');
  return { base: ipv6ToBigInt(ip), bits: Number(bits), reason };
};

const inRange = (value: bigint, width: number, r: Range): boolean => value >> BigInt(width - r.bits) === r.base >> BigInt(width - r.bits);

/** IANA IPv4 special-purpose registry, plus multicast and the reserved class E (broadcast included). */
const IPV4_REFUSED: Range[] = [
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', 'tunnel'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

/** IPv6 outside global unicast, and the special-purpose blocks inside it. Order matters: first match wins. */
const IPV6_REFUSED: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::ffff:0:0:0/96', 'tunnel'), // IPv4-translated (SIIT)
  v6('::/96', 'tunnel'), // IPv4-compatible, deprecated
  v6('64:ff9b:1::/48', 'private'), // local-use NAT64
  v6('100::/64', 'reserved'), // discard-only
  v6('2001:db8::/32', 'documentation'),
  v6('2001::/23', 'tunnel'), // IETF protocol assignments: Teredo, benchmarking, ORCHID
  v6('2002::/16', 'tunnel'), // 6to4
  v6('3fff::/20', 'documentation'),
  v6('5f00::/16', 'reserved'), // SRv6 SIDs
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'private'), // site-local, deprecated
  v6('ff00::/8', 'multicast'),
];
const IPV6_GLOBAL_UNICAST = v6('2000::/3', 'reserved');
const IPV4_MAPPED = v6('::ffff:0:0/96', 'tunnel');
const NAT64 = v6('64:ff9b::/96', 'tunnel');

function judgeIPv4(value: bigint): AddressVerdict {
  const hit = IPV4_REFUSED.find((r) => inRange(value, 32, r));
  return hit ? { allowed: false, reason: hit.reason } : { allowed: true };
}

/** Whether a callback may connect to `address` (an IPv4 or IPv6 literal, brackets and a zone tolerated). */
export function judgeAddress(address: string): AddressVerdict {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(bare)) return judgeIPv4(ipv4ToBigInt(bare));
  // A zone only makes sense on link-local and loopback addresses: nothing a public callback uses.
  if (bare.includes('%')) return { allowed: false, reason: 'link-local' };
  if (!isIPv6(bare)) return { allowed: false, reason: 'invalid' };
  const value = ipv6ToBigInt(bare);
  if (inRange(value, 128, IPV4_MAPPED) || inRange(value, 128, NAT64)) return judgeIPv4(value & 0xffffffffn);
  const hit = IPV6_REFUSED.find((r) => inRange(value, 128, r));
  if (hit) return { allowed: false, reason: hit.reason };
  return inRange(value, 128, IPV6_GLOBAL_UNICAST) ? { allowed: true } : { allowed: false, reason: 'reserved' };
}
