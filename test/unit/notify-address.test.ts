import { judgeAddress } from '../../lib/notify/address';
import {
  CallbackTargetError,
  checkCallbackUrl,
  type Lookup,
  parsePortRanges,
  portRangesWithout,
  resolveCallbackTarget,
} from '../../lib/notify/target';
import { callbackLoopbackPorts } from '../../local/contract';

const refusedAs = (address: string) => {
  const verdict = judgeAddress(address);
  return verdict.allowed ? 'allowed' : verdict.reason;
};

describe('judgeAddress refuses every non-public IPv4 address', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['192.88.99.1', 'tunnel'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
  ])('%s is %s', (address, reason) => {
    expect(refusedAs(address)).toBe(reason);
  });
});

describe('judgeAddress allows public IPv4 addresses, including the neighbours of refused ranges', () => {
  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '52.95.110.1',
  ])('%s', (address) => {
    expect(refusedAs(address)).toBe('allowed');
  });
});

describe('judgeAddress refuses every non-public IPv6 address', () => {
  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'], // the EC2 metadata service over IPv6
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['ff0e::101', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'tunnel'], // Teredo
    ['2002:a00:1::1', 'tunnel'], // 6to4 of 10.0.0.1
    ['2002:808:808::1', 'tunnel'], // 6to4, even of a public address: relayed where we cannot see
    ['::a00:1', 'tunnel'], // IPv4-compatible 10.0.0.1
    ['::8.8.8.8', 'tunnel'],
    ['::ffff:0:a00:1', 'tunnel'], // IPv4-translated
    ['64:ff9b:1::a00:1', 'private'],
    ['100::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['4000::1', 'reserved'], // outside global unicast 2000::/3
    ['1fff:ffff::1', 'reserved'],
  ])('%s is %s', (address, reason) => {
    expect(refusedAs(address)).toBe(reason);
  });
});

describe('judgeAddress judges IPv6 forms that carry an IPv4 address by that address', () => {
  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['0:0:0:0:0:ffff:c0a8:101', 'private'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b::a00:1', 'private'],
    ['[::ffff:127.0.0.1]', 'loopback'],
  ])('%s is %s', (address, reason) => {
    expect(refusedAs(address)).toBe(reason);
  });

  it.each(['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8'])('%s is allowed', (address) => {
    expect(refusedAs(address)).toBe('allowed');
  });
});

describe('judgeAddress allows public IPv6 and refuses what is not an address', () => {
  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '2600::1'])('%s is allowed', (a) => {
    expect(refusedAs(a)).toBe('allowed');
  });

  it.each(['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '::g', 'example.com'])('%j is invalid', (a) => {
    expect(refusedAs(a)).toBe('invalid');
  });
});

describe('checkCallbackUrl (no network)', () => {
  const aws = { allowLoopback: false };
  const local = { allowLoopback: true, loopbackPorts: [[4000, 4000]] as const };
  const code = (fn: () => unknown) => {
    try {
      fn();
      return 'accepted';
    } catch (err) {
      return err instanceof CallbackTargetError ? err.code : String(err);
    }
  };

  it('accepts https to a host name or a public address', () => {
    expect(code(() => checkCallbackUrl('https://hooks.example.com/icecat?x=1', aws))).toBe('accepted');
    expect(code(() => checkCallbackUrl('https://8.8.8.8:8443/hook', aws))).toBe('accepted');
  });

  it('refuses http, other schemes, credentials and malformed URLs on AWS', () => {
    expect(code(() => checkCallbackUrl('http://hooks.example.com/', aws))).toBe('SchemeNotAllowed');
    expect(code(() => checkCallbackUrl('file:///etc/passwd', aws))).toBe('SchemeNotAllowed');
    expect(code(() => checkCallbackUrl('gopher://x/', aws))).toBe('SchemeNotAllowed');
    expect(code(() => checkCallbackUrl('https://user:pw@hooks.example.com/', aws))).toBe('CredentialsInUrl');
    expect(code(() => checkCallbackUrl('not a url', aws))).toBe('InvalidUrl');
    expect(code(() => checkCallbackUrl(`https://x.example/${'a'.repeat(2100)}`, aws))).toBe('InvalidUrl');
  });

  it('refuses private, link-local and loopback literals in every spelling the URL parser accepts', () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://127.0.0.1/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/', // 127.0.0.1 in hex shorthand
      'https://0251.0376.0251.0376/', // 169.254.169.254 in octal
      'https://[::1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://[fd00:ec2::254]/',
      'https://0/',
    ]) {
      expect([url, code(() => checkCallbackUrl(url, aws))]).toEqual([url, 'AddressNotAllowed']);
    }
  });

  it('allows http to 127.0.0.1 only where loopback is allowed (the local stack), and still no private address', () => {
    expect(code(() => checkCallbackUrl('http://127.0.0.1:4000/hook', local))).toBe('accepted');
    expect(code(() => checkCallbackUrl('http://[::1]:4000/hook', local))).toBe('accepted');
    expect(code(() => checkCallbackUrl('http://10.0.0.1/hook', local))).toBe('AddressNotAllowed');
    expect(code(() => checkCallbackUrl('http://169.254.169.254/', local))).toBe('AddressNotAllowed');
  });

  it('allows a loopback callback only on a port the operator lists, never another (the stack control routes)', () => {
    const stack = {
      allowLoopback: true,
      loopbackPorts: parsePortRanges(
        callbackLoopbackPorts(
          '4000,9000-9100',
          { api: 9000, s3: 9001, dynamodb: 9002, rekognition: 9003, bridge: 9004 },
          'http://127.0.0.1:9005',
        ),
      ),
    };

    expect(code(() => checkCallbackUrl('http://127.0.0.1:9050/hook', stack))).toBe('accepted');
    expect(code(() => checkCallbackUrl('http://127.0.0.1:4000/hook', stack))).toBe('accepted');
    for (const url of [
      'http://127.0.0.1:9004/pause',
      'http://127.0.0.2:9000/v1/batches',
      'http://[::1]:9001/',
      'http://127.0.0.1/',
      'http://127.0.0.1:4001/',
      'http://127.0.0.1:9005/',
    ]) {
      expect([url, code(() => checkCallbackUrl(url, stack))]).toEqual([url, 'AddressNotAllowed']);
    }
    expect(() => checkCallbackUrl('http://127.0.0.1:9004/pause', stack)).toThrow(/CALLBACK_LOOPBACK_PORTS/);
    expect(code(() => checkCallbackUrl('http://127.0.0.1:4000/hook', { allowLoopback: true }))).toBe('AddressNotAllowed');
  });

  it('reads and subtracts port lists', () => {
    expect(parsePortRanges('')).toEqual([]);
    expect(parsePortRanges(' 80, 1024-2048 ')).toEqual([
      [80, 80],
      [1024, 2048],
    ]);
    for (const bad of ['0', '70000', '2048-1024', 'http', '1-2-3']) expect([bad, parsePortRanges(bad)]).toEqual([bad, undefined]);
    expect(portRangesWithout([[1024, 65535]], [4570, 1024, 65535, 3000, 3001])).toBe('1025-2999,3002-4569,4571-65534');
    expect(portRangesWithout([[80, 80]], [80])).toBe('');
  });
});

describe('resolveCallbackTarget', () => {
  const aws = { allowLoopback: false };
  const answering =
    (...addresses: string[]): Lookup =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('pins the first resolved address when every one is public', async () => {
    const target = await resolveCallbackTarget('https://hooks.example.com/x', aws, answering('93.184.216.34', '2606:2800:220:1::1'));
    expect(target).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(target.url.hostname).toBe('hooks.example.com');
  });

  it('refuses a name resolving to a loopback port that is not allowed', async () => {
    const local = { allowLoopback: true, loopbackPorts: [[8080, 8080]] as const };
    await expect(resolveCallbackTarget('http://localhost:8080/x', local, answering('127.0.0.1'))).resolves.toMatchObject({
      address: '127.0.0.1',
    });
    await expect(resolveCallbackTarget('http://localhost:4570/pause', local, answering('127.0.0.1'))).rejects.toMatchObject({
      code: 'AddressNotAllowed',
    });
  });

  it('refuses a name resolving to the metadata service, a private address, or a mix of public and private', async () => {
    for (const lookup of [
      answering('169.254.169.254'),
      answering('10.0.0.1'),
      answering('8.8.8.8', '127.0.0.1'),
      answering('::ffff:10.1.2.3'),
    ]) {
      await expect(resolveCallbackTarget('https://rebind.example.com/', aws, lookup)).rejects.toMatchObject({ code: 'AddressNotAllowed' });
    }
  });

  it('refuses a name that does not resolve, or resolves to nothing', async () => {
    const failing: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(resolveCallbackTarget('https://nowhere.invalid/', aws, failing)).rejects.toMatchObject({ code: 'HostNotFound' });
    await expect(resolveCallbackTarget('https://empty.example/', aws, answering())).rejects.toMatchObject({ code: 'AddressNotAllowed' });
  });

  it('does not look up an IP literal', async () => {
    const lookup = jest.fn<ReturnType<Lookup>, Parameters<Lookup>>();
    await expect(resolveCallbackTarget('https://8.8.8.8/', aws, lookup)).resolves.toMatchObject({ address: '8.8.8.8' });
    expect(lookup).not.toHaveBeenCalled();
  });
});
