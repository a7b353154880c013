/**
 * Where webhooks may go. An account chooses its own webhook URL, so a hosted fecr (`fecr serve --env sandbox|production`)
 * must not become a way into the operator's network: with a `publicOnly` policy a webhook target must be a public
 * unicast address. Refused: loopback, private (RFC 1918, IPv6 unique local fc00::/7), link-local (169.254/16,
 * fe80::/10), the cloud metadata addresses (169.254.169.254, fd00:ec2::254, metadata.google.internal), unspecified
 * (0.0.0.0/8, ::), carrier-grade NAT (100.64/10), multicast, broadcast, reserved and other special-purpose ranges,
 * and the IPv6 forms that embed an IPv4 address (IPv4-mapped, IPv4-translated, NAT64, the deprecated IPv4-compatible
 * ::a.b.c.d and 6to4), judged as the IPv4 address they embed; the two deprecated forms are refused even when that is
 * public. Address classes come from ipaddr.js.
 *
 * Checked twice: when the URL is registered (literal IP, or every address the name resolves to), and at every
 * delivery on the address the socket is about to connect to (delivery/webhooks.ts: the undici connector checks literal hosts
 * with `nonPublicReason` and resolves names through `guardedLookup`), so a name that later resolves elsewhere (DNS
 * rebinding) gets no traffic either.
 *
 * `--env local`, `fecr serve --allow-private-webhooks` or FECR_ALLOW_PRIVATE_WEBHOOKS=1 allow any target, and so does
 * a context without a policy (the CLI's local mode: the user's own worker on the user's own machine).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { HaciendaEnvironment } from '../hacienda/client/endpoints.js';

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Every address of a host name (like `dns.lookup(name, {all: true})`). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface WebhookTargetPolicy {
  /** Only public unicast addresses (hosted: --env sandbox|production without --allow-private-webhooks). */
  publicOnly: boolean;
  /** How names are resolved, at registration and when connecting (default `dns.lookup` with all addresses). Tests inject one. */
  resolve?: Resolver;
}

/** The policy of a service running against `environment`: publicOnly unless local or allowed by the operator. */
export function webhookTargetPolicy(
  environment: HaciendaEnvironment,
  opts: { allowPrivate?: boolean; env?: Record<string, string | undefined> } = {},
): WebhookTargetPolicy {
  const flag = opts.env?.FECR_ALLOW_PRIVATE_WEBHOOKS?.trim().toLowerCase();
  const allowed = opts.allowPrivate === true || flag === '1' || flag === 'true' || flag === 'yes';
  return { publicOnly: environment !== 'local' && !allowed };
}

export const defaultResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Names refused without asking DNS (RFC 6761 localhost, the GCP metadata server). */
const BLOCKED_NAMES: readonly [RegExp, string][] = [
  [/^(.+\.)?localhost$/, 'a loopback name'],
  [/^metadata\.google\.internal$/, 'the cloud metadata service'],
];
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

const IPV4_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8)',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (169.254.0.0/16)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address (RFC 1918)',
};
const IPV6_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address (::)',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (fe80::/10)',
  loopback: 'a loopback address',
  uniqueLocal: 'a private address (IPv6 unique local, fc00::/7)',
};

/** Lower-case, without the brackets of an IPv6 literal or a trailing dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** Why an IP address is not a public target (e.g. "a private address (RFC 1918)"), or null when it is public. */
export function nonPublicReason(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(normalizeHost(address));
  } catch {
    return 'not a valid IP address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (METADATA_ADDRESSES.has(v6.toRFC5952String())) return 'the cloud metadata address';
    const range = v6.range();
    // IPv4 carried in IPv6: judged as the IPv4 address it embeds.
    const embedded = embeddedIPv4(v6, range);
    if (embedded) {
      const inner = nonPublicReason(embedded.v4.toString());
      if (inner !== null) return `${inner}, as IPv6 (${embedded.form} form of ${embedded.v4.toString()})`;
      // Mapped, SIIT and NAT64 forms of a public address reach that address; the deprecated tunnelling forms
      // (IPv4-compatible ::a.b.c.d, 6to4) are no target at all, whatever they embed.
      return embedded.form === 'IPv4-mapped' || embedded.form === 'IPv4-translated' || embedded.form === 'NAT64' ? null : `a deprecated ${embedded.form} IPv6 address`;
    }
    if (range === 'unicast') return null;
    return IPV6_REASONS[range] ?? `a reserved or special-purpose address (${range})`;
  }
  const v4 = ip as ipaddr.IPv4;
  if (METADATA_ADDRESSES.has(v4.toString())) return 'the cloud metadata address';
  const range = v4.range();
  if (range === 'unicast') return null;
  return IPV4_REASONS[range] ?? `a reserved address (${range})`;
}

/**
 * The IPv4 address an IPv6 address embeds, and the form: IPv4-mapped ::ffff:a.b.c.d (ipaddr.js' own test and
 * conversion), IPv4-translated ::ffff:0:a.b.c.d (RFC 6145), NAT64 64:ff9b::a.b.c.d (RFC 6052), the deprecated
 * IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1: ipaddr.js calls it unicast; `::` and `::1` are left to their own
 * ranges), 6to4 2002:aabb:ccdd::/48 (RFC 3056). Null for any other address.
 */
function embeddedIPv4(v6: ipaddr.IPv6, range: string): { v4: ipaddr.IPv4; form: string } | null {
  const p = v6.parts;
  const last32 = () => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  if (v6.isIPv4MappedAddress()) return { v4: v6.toIPv4Address(), form: 'IPv4-mapped' };
  if (range === 'rfc6145') return { v4: last32(), form: 'IPv4-translated' };
  if (range === 'rfc6052' && v6.match(NAT64)) return { v4: last32(), form: 'NAT64' };
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && p[7]! <= 1)) return { v4: last32(), form: 'IPv4-compatible' };
  if (range === '6to4') return { v4: new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]), form: '6to4' };
  return null;
}

/** Why a host name is refused without resolving it, or null. */
function blockedNameReason(name: string): string | null {
  for (const [re, why] of BLOCKED_NAMES) if (re.test(name)) return why;
  return null;
}

export const HINT = 'webhooks go only to public addresses';

/** A webhook target that is not public: refused before any connection. */
export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Registration check of a webhook URL (already parsed as http/https): throws WebhookTargetError when the policy is
 * publicOnly and the host is a non-public literal IP, a refused name, or a name any of whose addresses is not public.
 * A name that does not resolve (yet) is accepted: every delivery checks the address it connects to.
 */
export async function checkWebhookTarget(policy: WebhookTargetPolicy | undefined, url: URL): Promise<void> {
  if (!policy?.publicOnly) return;
  const host = normalizeHost(url.hostname);
  if (isIP(host)) {
    const why = nonPublicReason(host);
    if (why) throw new WebhookTargetError(`${host} is ${why}; ${HINT}`);
    return;
  }
  const named = blockedNameReason(host);
  if (named) throw new WebhookTargetError(`${host} is ${named}; ${HINT}`);
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await withTimeout((policy.resolve ?? defaultResolver)(host), 5_000);
  } catch {
    return;
  }
  for (const a of addresses) {
    const why = nonPublicReason(a.address);
    if (why) throw new WebhookTargetError(`${host} resolves to ${a.address}, ${why}; ${HINT}`);
  }
}

/**
 * A `lookup` for net/tls.connect that resolves through `resolve` and, with publicOnly, fails with
 * WebhookTargetError when any address of the name is not public, so the socket never connects to it.
 */
export function guardedLookup(policy: WebhookTargetPolicy): LookupFunction {
  const resolve = policy.resolve ?? defaultResolver;
  return ((hostname: string, options: { family?: number | string; all?: boolean }, callback: (...args: unknown[]) => void) => {
    const host = normalizeHost(hostname);
    const named = policy.publicOnly ? blockedNameReason(host) : null;
    if (named) {
      callback(new WebhookTargetError(`webhook target refused: ${host} is ${named}; ${HINT}`));
      return;
    }
    resolve(host).then(
      (found) => {
        const family = options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : Number(options?.family ?? 0);
        const list = found.filter((a) => family !== 4 && family !== 6 ? true : a.family === family);
        if (policy.publicOnly) {
          // Every address, not only the ones asked for: a name with any non-public address is refused.
          for (const a of found) {
            const why = nonPublicReason(a.address);
            if (why) {
              callback(new WebhookTargetError(`webhook target refused: ${host} resolves to ${a.address}, ${why}; ${HINT}`));
              return;
            }
          }
        }
        if (list.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host }));
          return;
        }
        if (options?.all) callback(null, list.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;
}
