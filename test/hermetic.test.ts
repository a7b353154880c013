// The suite does not read the developer's fecr setup (issue 26 item 7): with XDG_CONFIG_HOME, XDG_DATA_HOME,
// FECR_PROFILE, FECR_DATA_DIR, FECR_TOKEN, FECR_DATABASE_URL … pointing at a poisoned fecr config, a CLI spawned by a
// test acts on its own temp HOME. The scrub is test/helpers/hermetic-env.ts (vitest's setupFiles entry, and the base
// of the spawn helpers' child environment).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import { tempDir } from './helpers/cli.js';
import { childEnv, isScrubbed, TEST_KNOBS } from './helpers/hermetic-env.js';
import { spawnFecr } from './helpers/spawn.js';

const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const HERMETIC = new URL('./helpers/hermetic-env.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');
const POISON_BASE = 'POISON';

/** A developer's fecr setup that no test may read: a remote default profile, a data dir that cannot open, … */
function poisonedDeveloperEnv(): Record<string, string> {
  const dev = tempDir('fecr-devxdg-');
  const remote = { mode: 'remote', authUrl: 'http://127.0.0.1:9', baseUrl: 'http://127.0.0.1:9', base: POISON_BASE };
  mkdirSync(join(dev, 'config', 'fecr'), { recursive: true });
  writeFileSync(join(dev, 'config', 'fecr', 'config.json'), JSON.stringify({ profiles: { default: remote, nope: remote } }));
  mkdirSync(join(dev, 'data', 'fecr'), { recursive: true });
  writeFileSync(join(dev, 'data', 'fecr', 'fecr.db'), 'not a database');
  writeFileSync(join(dev, 'not-a-dir'), '');
  for (const d of ['state', 'cache', 'runtime']) mkdirSync(join(dev, d));
  return {
    XDG_CONFIG_HOME: join(dev, 'config'),
    XDG_DATA_HOME: join(dev, 'data'),
    XDG_STATE_HOME: join(dev, 'state'),
    XDG_CACHE_HOME: join(dev, 'cache'),
    XDG_RUNTIME_DIR: join(dev, 'runtime'),
    FECR_PROFILE: 'nope',
    FECR_DATA_DIR: join(dev, 'not-a-dir', 'data'),
    FECR_TOKEN: 'poisoned-token',
    FECR_DATABASE_URL: 'postgres://nobody@127.0.0.1:9/poison',
    FECR_MASTER_KEY: 'cG9pc29u',
  };
}

function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

interface ConfigList {
  current: string;
  file: string;
  profiles: Record<string, { mode: string; base?: string }>;
}

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

describe('the test environment drops the developer\'s XDG_* and FECR_* variables', () => {
  it('is vitest\'s setupFiles entry: this worker has none of them, only the suite\'s own knobs', () => {
    expect(config.test?.setupFiles).toContain('test/helpers/hermetic-env.ts');
    expect(Object.keys(process.env).filter(isScrubbed)).toEqual([]);
    for (const k of TEST_KNOBS) expect(isScrubbed(k)).toBe(false);
    expect(['XDG_CONFIG_HOME', 'XDG_RUNTIME_DIR', 'FECR_PROFILE', 'FECR_DATA_DIR', 'FECR_NO_KEYCHAIN'].filter(isScrubbed)).toHaveLength(5);
  });

  it('the poison is real: a CLI handed those variables reads the developer\'s profile and data dir', () => {
    const poison = poisonedDeveloperEnv();
    const home = tempDir('fecr-hermetic-home-');
    const env = { ...process.env, ...poison, HOME: home };
    const list = spawnSync(process.execPath, ['--import', TSX, ENTRY, 'config', 'list', '--json'], { env, encoding: 'utf8', timeout: 30_000 });
    expect(list.status, list.stderr).toBe(0);
    const seen = JSON.parse(list.stdout) as ConfigList;
    expect(seen.file).toBe(join(poison.XDG_CONFIG_HOME!, 'fecr', 'config.json'));
    expect(seen.current).toBe('nope');
    expect(seen.profiles.nope).toMatchObject({ mode: 'remote', base: POISON_BASE });
  });

  it('a process that loads the setup file first (as every test worker does) does not read them', () => {
    const poison = poisonedDeveloperEnv();
    const home = tempDir('fecr-hermetic-home-');
    const env = { ...process.env, ...poison, HOME: home };
    const run = (...args: string[]) => spawnSync(process.execPath, ['--import', TSX, '--import', HERMETIC, ENTRY, ...args], { env, encoding: 'utf8', timeout: 30_000 });
    const list = run('config', 'list', '--json');
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ current: 'default', file: join(home, '.config', 'fecr', 'config.json'), profiles: { default: { mode: 'local', env: 'local', account: 'local' } } });
    // A local verb opens the data dir of the temp HOME, not FECR_DATA_DIR's nor XDG_DATA_HOME's.
    const before = listing(join(poison.XDG_DATA_HOME!, '..'));
    const docs = run('documents', 'list', '--json');
    expect(docs.status, docs.stderr).toBe(0);
    expect(JSON.parse(docs.stdout)).toEqual([]);
    expect(existsSync(join(home, '.local', 'share', 'fecr', 'fecr.db'))).toBe(true);
    expect(listing(join(poison.XDG_DATA_HOME!, '..'))).toEqual(before);
  });

  it('the spawn helpers build the child\'s environment without them, even when set in this process after start-up', async () => {
    const poison = poisonedDeveloperEnv();
    Object.assign(process.env, poison);
    expect(Object.keys(childEnv()).filter(isScrubbed)).toEqual([]);
    expect(childEnv({ FECR_PROFILE: 'mine', HOME: '/h' })).toMatchObject({ FECR_PROFILE: 'mine', HOME: '/h' });
    const home = tempDir('fecr-hermetic-home-');
    // spawnFecr resolves on the child's first JSON line: `config list --json` prints one and exits.
    const spawned = await spawnFecr<ConfigList>(['config', 'list', '--json'], { env: { HOME: home } });
    await spawned.stop();
    expect(spawned.ready.file).toBe(join(home, '.config', 'fecr', 'config.json'));
    expect(spawned.ready.current).toBe('default');
    expect(spawned.ready.profiles.default!.mode).toBe('local');
    // No HOME given: a fresh temp one, never the developer's.
    const bare = await spawnFecr<ConfigList>(['config', 'list', '--json']);
    await bare.stop();
    expect(bare.ready.file.startsWith(join(home, '..'))).toBe(true);
    expect(bare.ready.file).toMatch(/fecr-spawn-home-[^/]+\/\.config\/fecr\/config\.json$/);
  });
});
