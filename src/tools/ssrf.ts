/**
 * SSRF protection for `web_fetch`: only http(s); the host is resolved and *every* address must be
 * public unicast (no loopback, private, link-local, unique-local, CGNAT, metadata, multicast,
 * reserved, IPv4-mapped/6to4/NAT64 forms that embed such an address). The connection is then
 * pinned to the checked addresses (a per-request undici Agent whose `lookup` returns exactly
 * them), so a second DNS answer cannot swap in an internal address. Redirects are followed by
 * hand, each hop checked again, at most {@link MAX_REDIRECTS}.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { decodedBody } from '../http/decompress.js';
import type { Agent } from 'undici';

/** Redirects followed at most. */
export const MAX_REDIRECTS = 5;

/** Resolve a host name to all its addresses. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo, all addresses). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/** Refused: why a URL or address may not be fetched. */
export class FetchRefused extends Error {}

/** Why `ip` is not a public address, or null when it is. */
export function addressRefusal(ip: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return `${ip} is not an IP address`;
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      const inner = addressRefusal(v6.toIPv4Address().toString());
      return inner ? `${ip} is an IPv4-mapped form of a non-public address (${inner})` : null;
    }
  }
  if (ip === '169.254.169.254' || ip.toLowerCase() === 'fd00:ec2::254') return `${ip} is a cloud metadata address`;
  const range = addr.range();
  return range === 'unicast' ? null : `${ip} is not a public address (${range})`;
}

/** Test-only exception: lets a loopback test server stand in for a public host. Never configured. */
export type AddressException = (ip: string, port: number) => boolean;

/** Options of {@link safeFetch}. */
export interface SafeFetchOptions {
  maxBytes: number;
  signal: AbortSignal;
  resolver?: Resolver;
  allowException?: AddressException;
  headers?: Record<string, string>;
}

/** A fetched response (body read up to the cap). */
export interface SafeResponse {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** True when the body was cut at `maxBytes`. */
  truncated: boolean;
  redirects: number;
}

function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** Check a URL and resolve it to the addresses the connection may use. */
export async function checkUrl(
  url: URL,
  resolver: Resolver,
  allowException?: AddressException,
): Promise<LookupAddress[]> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchRefused(`${url.protocol.replace(':', '')} URLs are not fetched; only http and https`);
  }
  // WHATWG URL parsing already turned numeric tricks (0x7f000001, 2130706433, 0177.1) into dotted form.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = portOf(url);
  const check = (ip: string) => {
    const why = addressRefusal(ip);
    if (why && !allowException?.(ip, port)) throw new FetchRefused(`refused ${url.host}: ${why}`);
  };
  if (isIP(host)) {
    check(host);
    return [{ address: host, family: isIP(host) }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolver(host);
  } catch (err) {
    throw new FetchRefused(`cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (addresses.length === 0) throw new FetchRefused(`cannot resolve ${host}: no addresses`);
  for (const a of addresses) check(a.address);
  return addresses;
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/** undici, loaded on the first fetch: it is a fifth of start-up CPU and most bots never fetch. */
let undici: Promise<typeof import('undici')> | null = null;
const loadUndici = () => {
  undici ??= import('undici');
  return undici;
};

/** An Agent whose connections can only go to `addresses` (already checked). */
function pinnedAgent(Agent: typeof import('undici').Agent, addresses: LookupAddress[]): Agent {
  const lookup = (_host: string, options: { all?: boolean }, cb: LookupCallback) => {
    if (options?.all) cb(null, addresses);
    else cb(null, (addresses[0] as LookupAddress).address, (addresses[0] as LookupAddress).family);
  };
  return new Agent({ connect: { lookup } as never, connections: 1 });
}

/** GET a URL with SSRF checks on every hop; the body is read up to `maxBytes`. */
export async function safeFetch(input: string, o: SafeFetchOptions): Promise<SafeResponse> {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new FetchRefused(`not a valid URL: ${input}`);
  }
  const resolver = o.resolver ?? systemResolver;
  for (let hop = 0; ; hop++) {
    const addresses = await checkUrl(url, resolver, o.allowException);
    const { Agent, request } = await loadUndici();
    const agent = pinnedAgent(Agent, addresses);
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal: o.signal,
        headers: {
          'user-agent': 'switchboard-web-fetch/0.1',
          accept: 'text/html,text/plain,application/json,*/*;q=0.5',
          ...o.headers,
        },
      });
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location) {
        await res.body.dump();
        if (hop >= MAX_REDIRECTS) throw new FetchRefused(`too many redirects (more than ${MAX_REDIRECTS})`);
        const next = Array.isArray(location) ? location[0] : location;
        try {
          url = new URL(next as string, url);
        } catch {
          throw new FetchRefused(`redirect to an invalid URL: ${next}`);
        }
        continue;
      }
      const ct = res.headers['content-type'];
      const contentType = (Array.isArray(ct) ? ct[0] : ct) ?? '';
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      if (isTextual(contentType)) {
        // Decompressed bytes count against the cap, so a small compressed bomb cannot blow up.
        const source = decodedBody(res.body, String(res.headers['content-encoding'] ?? ''));
        for await (const chunk of source) {
          const b = chunk as Buffer;
          if (size + b.length > o.maxBytes) {
            chunks.push(b.subarray(0, o.maxBytes - size));
            size = o.maxBytes;
            truncated = true;
            break;
          }
          chunks.push(b);
          size += b.length;
        }
      }
      // Drop whatever is left unread (a cut or non-text body) without an unhandled AbortError.
      res.body.on('error', () => {});
      res.body.destroy();
      return {
        url: url.toString(),
        status: res.statusCode,
        contentType,
        body: Buffer.concat(chunks),
        truncated,
        redirects: hop,
      };
    } finally {
      void agent.destroy();
    }
  }
}

/** Content types treated as text (others are refused without reading the body). */
export function isTextual(contentType: string): boolean {
  const ct = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (ct === '') return true; // unlabelled: sniffed later
  return (
    ct.startsWith('text/') ||
    ct === 'application/json' ||
    ct === 'application/xml' ||
    ct === 'application/xhtml+xml' ||
    ct === 'application/javascript' ||
    ct === 'application/x-javascript' ||
    ct === 'application/ecmascript' ||
    ct === 'application/rss+xml' ||
    ct === 'application/atom+xml' ||
    ct.endsWith('+json') ||
    ct.endsWith('+xml')
  );
}
