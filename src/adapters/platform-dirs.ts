/**
 * fecr's platform directories (data and config), as env-paths lays them out for the name "fecr" (no suffix):
 * Linux $XDG_DATA_HOME/fecr or ~/.local/share/fecr and $XDG_CONFIG_HOME/fecr or ~/.config/fecr; macOS
 * ~/Library/Application Support/fecr and ~/Library/Preferences/fecr; Windows %LOCALAPPDATA%\fecr\Data and
 * %APPDATA%\fecr\Config.
 *
 * env-paths reads process.env and the home directory of the process (taken when it is loaded). The CLI hands the
 * client its environment (process.env itself, or a test's temp HOME and XDG_* dirs), so: for the process's own
 * environment the answer is env-paths' own; for another one, env-paths' rules are applied to that environment
 * (test/platform-dirs.test.ts holds the two equal).
 */
import os from 'node:os';
import path from 'node:path';
import envPaths from 'env-paths';

export type Env = Record<string, string | undefined>;

export interface PlatformDirs {
  /** Where fecr keeps its data (the default data dir: SQLite, emulator state, master key). */
  data: string;
  /** Where fecr keeps its configuration (profiles, tokens). */
  config: string;
}

const NAME = 'fecr';

export function platformDirs(env: Env, platform: NodeJS.Platform = process.platform): PlatformDirs {
  if (env === process.env && platform === process.platform) {
    const { data, config } = envPaths(NAME, { suffix: '' });
    return { data, config };
  }
  const home = env.HOME || env.USERPROFILE || os.homedir();
  if (platform === 'darwin') {
    const library = path.join(home, 'Library');
    return { data: path.join(library, 'Application Support', NAME), config: path.join(library, 'Preferences', NAME) };
  }
  if (platform === 'win32') {
    const appData = env.APPDATA || path.join(home, 'AppData', 'Roaming');
    const localAppData = env.LOCALAPPDATA || path.join(home, 'AppData', 'Local');
    return { data: path.join(localAppData, NAME, 'Data'), config: path.join(appData, NAME, 'Config') };
  }
  return {
    data: path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), NAME),
    config: path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), NAME),
  };
}
