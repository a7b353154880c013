// Helpers of the end-to-end tests that drive `fecr serve` as a child process: a local webhook receiver that
// verifies Standard Webhooks signatures, JSON POSTs, condition polling with deadlines and a PNG ink counter.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateSync } from 'node:zlib';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';

export interface ReceivedWebhook {
  /** folioId of the payload (the clave), when the body parsed. */
  clave: string | undefined;
  payload: any;
  headers: Record<string, string>;
  verified: boolean;
  error?: string;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  /** The account's `whsec_…` secret; set it once the account exists (before any document is submitted). */
  secret: string | undefined;
  received: ReceivedWebhook[];
  /** Claves of the verified deliveries. */
  claves(): Set<string>;
  close(): Promise<void>;
}

function flatHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** An HTTP server on 127.0.0.1:0 that checks each delivery's signature: 204 when it verifies, 400 otherwise. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const state: { secret: string | undefined } = { secret: undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = flatHeaders(req.headers);
      const r: ReceivedWebhook = { clave: undefined, payload: undefined, headers, verified: false, at: Date.now() };
      try {
        r.payload = JSON.parse(body);
        r.clave = typeof r.payload?.folioId === 'string' ? r.payload.folioId : undefined;
      } catch {
        r.error = 'body is not JSON';
      }
      try {
        if (!state.secret) throw new Error('no secret set yet');
        new Webhook(state.secret).verify(body, headers);
        r.verified = true;
      } catch (e) {
        r.error = e instanceof Error ? e.message : String(e);
      }
      received.push(r);
      res.statusCode = r.verified ? 204 : 400;
      res.end();
    });
  });
  // Connections the service keeps alive must not hold close() up.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/fecr`,
    get secret() {
      return state.secret;
    },
    set secret(s: string | undefined) {
      state.secret = s;
    },
    received,
    claves: () => new Set(received.filter((r) => r.verified && r.clave).map((r) => r.clave!)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface JsonResponse {
  status: number;
  body: any;
  text: string;
}

export async function postJson(url: string, body: unknown, token?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), headersTimeout: 30_000, bodyTimeout: 30_000 });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, body: parsed, text };
}

export async function getJson(url: string): Promise<JsonResponse> {
  const res = await request(url, { method: 'GET', headersTimeout: 30_000, bodyTimeout: 30_000 });
  const text = await res.body.text();
  return { status: res.statusCode, body: JSON.parse(text), text };
}

/** Polls `cond` every `intervalMs` until it holds; throws `label` (plus `describe()`) after `timeoutMs`. */
export async function waitUntil(
  cond: () => boolean | Promise<boolean>,
  opts: { timeoutMs: number; label: string; intervalMs?: number; describe?: () => string },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.label}${opts.describe ? `: ${opts.describe()}` : ''}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/** Runs `fn` over `items` with at most `limit` at a time; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/**
 * Decodes an 8-bit non-interlaced PNG (as pdftoppm writes) and counts "ink": pixels whose darkest channel is
 * below 200. Throws on a PNG it cannot read.
 */
export function pngInk(png: Buffer): { width: number; height: number; dark: number } {
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG');
  let off = 8;
  let width = 0;
  let height = 0;
  let colorType = -1;
  const idat: Buffer[] = [];
  while (off + 8 <= png.length) {
    const len = png.readUInt32BE(off);
    const type = png.toString('latin1', off + 4, off + 8);
    const data = png.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error('only 8-bit non-interlaced PNGs are supported');
      colorType = data[9]!;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const bpp = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colorType];
  if (!bpp) throw new Error(`unsupported PNG colour type ${colorType}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const prev = Buffer.alloc(stride);
  const cur = Buffer.alloc(stride);
  let dark = 0;
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      let v = line[i]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 0xff;
    }
    const colour = Math.min(3, bpp === 2 ? 1 : bpp);
    for (let x = 0; x < width; x++) {
      const px = cur.subarray(x * bpp, x * bpp + colour);
      if (Math.min(...px) < 200) dark++;
    }
    cur.copy(prev);
  }
  return { width, height, dark };
}
