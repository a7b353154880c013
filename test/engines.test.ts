// fecr's declared engines are true (issue 26 item 8): every package of the lockfile (dependencies, devDependencies,
// optional platform builds) declares an engines.node range that admits the oldest Node fecr says it runs on and the
// Node running the tests, so `npm ci` on Node 20 prints no EBADENGINE. cookie@2 (ESM only, Node >= 22, through
// fastify → light-my-request) is held at 1.1.1 by package.json's overrides; light-my-request's inject still encodes
// cookies as before. The floor is Node 20.19: undici 7 needs 20.18.1, the test toolchain (vitest 4 → vite 8,
// rolldown; mailparser → html-to-text 10) 20.19.0.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(`${root}package-lock.json`, 'utf8')) as {
  packages: Record<string, { version?: string; engines?: unknown }>;
};

/** Each locked package with an engines.node range (old packages may carry engines as an array: no node range). */
function lockedRanges(): { name: string; version: string; range: string }[] {
  return Object.entries(lock.packages)
    .filter(([path]) => path !== '')
    .flatMap(([path, p]) => {
      const node = (p.engines as { node?: unknown } | undefined)?.node;
      return typeof node === 'string' ? [{ name: path.replace(/^.*node_modules\//, ''), version: p.version ?? '?', range: node }] : [];
    });
}

describe('engines', () => {
  const lowest = semver.minVersion(pkg.engines.node)!;

  it('fecr declares Node >= 20.19 and the lockfile root says the same; this Node satisfies it', () => {
    expect(lowest.version).toBe('20.19.0');
    expect((lock.packages[''] as { engines?: { node?: string } }).engines?.node).toBe(pkg.engines.node);
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });

  it('every locked package admits fecr\'s lowest Node and the running one', () => {
    const ranges = lockedRanges();
    expect(ranges.length).toBeGreaterThan(100);
    const refused = ranges
      .filter((r) => semver.validRange(r.range) === null || !semver.satisfies(lowest, r.range) || !semver.satisfies(process.version, r.range))
      .map((r) => `${r.name}@${r.version} (node ${r.range})`);
    expect(refused).toEqual([]);
  });

  it('light-my-request (fastify\'s inject) runs on the overridden cookie 1.x and encodes cookies as cookie 2 did', async () => {
    const lmr = lock.packages['node_modules/light-my-request/node_modules/cookie'] ?? lock.packages['node_modules/cookie'];
    expect(lmr?.version).toMatch(/^1\./);
    const app = Fastify();
    app.get('/echo', async (req) => ({ cookie: req.headers.cookie }));
    try {
      const r = await app.inject({ method: 'GET', url: '/echo', cookies: { sid: 'x=y;z', a: 'b c' } });
      expect(r.json()).toEqual({ cookie: 'sid=x%3Dy%3Bz; a=b%20c' });
    } finally {
      await app.close();
    }
  });
});
