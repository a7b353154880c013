// service/local-run.ts on its own (the local backend's tests cover the sends and the waits): the local account,
// and that nothing reaches Hacienda (no emulator started) for a document without open jobs or for a bare close.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentStateFor, LOCAL_ACCOUNT, LocalRun, localAccountId } from '../src/service/local-run.js';
import { openService, type OpenedService } from '../src/service/runtime.js';
import { tempDir } from './helpers/cli.js';

const dir = tempDir('fecr-local-run-');
const dataDir = join(dir, 'data');
let opened: OpenedService;

beforeAll(async () => {
  opened = await openService({ dataDir, env: {}, environment: 'local', startLocalEmulator: false });
});

afterAll(async () => {
  await opened?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('localAccountId', () => {
  it('creates the default account once, and knows no other account it was not given', async () => {
    const id = await localAccountId(opened.ctx, LOCAL_ACCOUNT, randomBytes);
    expect(id).toBeTypeOf('number');
    expect(await localAccountId(opened.ctx, LOCAL_ACCOUNT, randomBytes)).toBe(id);
    expect(await localAccountId(opened.ctx, 'someone-else', randomBytes)).toBeNull();
    expect(await documentStateFor(opened.ctx, id!, '5'.repeat(50))).toBeNull();
  });
});

describe('LocalRun', () => {
  it('refreshes a document without open jobs at once, without starting the emulator or pointing the service at it', async () => {
    const endpoints = opened.ctx.hacienda.endpoints;
    const run = new LocalRun(opened.ctx, { dataDir });
    const t = Date.now();
    await run.refresh({ id: 123_456 }, 3_000);
    expect(Date.now() - t).toBeLessThan(1_000);
    await run.close();
    await run.close();
    expect(existsSync(join(dataDir, 'emulator.db'))).toBe(false);
    expect(opened.ctx.hacienda.endpoints).toBe(endpoints);
  });
});
