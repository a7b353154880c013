// fecr's platform directories: env-paths' own answer for the process's environment, and env-paths' rules applied
// to an injected one (a temp HOME, XDG_* dirs), which must agree with env-paths wherever both can be asked.
import os from 'node:os';
import { join } from 'node:path';
import envPaths from 'env-paths';
import { afterEach, describe, expect, it } from 'vitest';
import { platformDirs } from '../src/adapters/platform-dirs.js';
import { configDir } from '../src/client/profiles.js';
import { demoDataDir } from '../src/commands/demo/run.js';
import { resolveDataDir } from '../src/service/runtime.js';

const saved = { XDG_DATA_HOME: process.env.XDG_DATA_HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const fromEnvPaths = () => {
  const { data, config } = envPaths('fecr', { suffix: '' });
  return { data, config };
};

describe('platform directories', () => {
  it('for the process environment they are env-paths\' own; a copy of that environment gives the same', () => {
    delete process.env.XDG_DATA_HOME;
    delete process.env.XDG_CONFIG_HOME;
    expect(platformDirs(process.env)).toEqual(fromEnvPaths());
    expect(platformDirs({ ...process.env, HOME: os.homedir() })).toEqual(fromEnvPaths());
    process.env.XDG_DATA_HOME = '/srv/xdg-data';
    process.env.XDG_CONFIG_HOME = '/srv/xdg-config';
    expect(platformDirs({ ...process.env, HOME: os.homedir() })).toEqual(fromEnvPaths());
    expect(fromEnvPaths()).toEqual({ data: '/srv/xdg-data/fecr', config: '/srv/xdg-config/fecr' });
  });

  it('follow an injected HOME and XDG dirs, not the process\'s (Linux)', () => {
    const home = '/tmp/fake-home';
    expect(platformDirs({ HOME: home }, 'linux')).toEqual({ data: join(home, '.local/share/fecr'), config: join(home, '.config/fecr') });
    expect(platformDirs({ HOME: home, XDG_DATA_HOME: '/x/data', XDG_CONFIG_HOME: '/x/config' }, 'linux')).toEqual({ data: '/x/data/fecr', config: '/x/config/fecr' });
  });

  it('lay out macOS and Windows as env-paths does', () => {
    expect(platformDirs({ HOME: '/Users/ana', XDG_DATA_HOME: '/ignored' }, 'darwin')).toEqual({
      data: '/Users/ana/Library/Application Support/fecr',
      config: '/Users/ana/Library/Preferences/fecr',
    });
    const win = platformDirs({ USERPROFILE: '/u/ana', APPDATA: '/u/ana/roaming' }, 'win32');
    expect(win).toEqual({ data: join('/u/ana', 'AppData', 'Local', 'fecr', 'Data'), config: join('/u/ana/roaming', 'fecr', 'Config') });
  });

  it('the data dir, the demo data dir and the config dir use them', () => {
    const env = { HOME: '/tmp/fake-home' };
    expect(resolveDataDir(env)).toBe('/tmp/fake-home/.local/share/fecr');
    expect(resolveDataDir({ ...env, FECR_DATA_DIR: '/d' })).toBe('/d');
    expect(demoDataDir(env)).toBe('/tmp/fake-home/.local/share/fecr/demo');
    expect(configDir(env)).toBe('/tmp/fake-home/.config/fecr');
    expect(configDir({ ...env, XDG_CONFIG_HOME: '/x/config' })).toBe('/x/config/fecr');
  });
});
