// A real IMAP server for the mailbox tests (issue 30): Debian's dovecot (package dovecot-imapd, in .ci/run's apt
// list), started in a temp dir with a config of its own: IMAP only, on 127.0.0.1 and a free port, plain login over
// the loopback, one user from a passwd file, Maildir storage under the temp dir. As root (CI) its login processes run
// as dovenull and the mail as dovecot, the users the package creates; as anyone else, all as that user.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';

export const DOVECOT = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot'].find((p) => existsSync(p));

export interface TestImap {
  port: number;
  user: string;
  pass: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function idOf(name: string): { uid: number; gid: number } | undefined {
  const r = spawnSync('id', ['-u', name]);
  const g = spawnSync('id', ['-g', name]);
  if (r.status !== 0 || g.status !== 0) return undefined;
  return { uid: Number(r.stdout.toString().trim()), gid: Number(g.stdout.toString().trim()) };
}

/** `dir`: a folder of its own (made reachable by dovecot's users when run as root); `port`: again the one of a server stopped. */
export async function startDovecot(dir: string, opts: { port?: number } = {}, user = 'proveedores', pass = 'clave-de-prueba'): Promise<TestImap> {
  if (!DOVECOT) throw new Error('dovecot is not installed (apt-get install dovecot-imapd)');
  for (const d of ['run', 'state', 'home']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'passwd'), `${user}:{PLAIN}${pass}\n`);
  const root = process.getuid?.() === 0;
  const me = userInfo();
  const mail = root ? idOf('dovecot') : { uid: me.uid, gid: me.gid };
  if (!mail) throw new Error('running as root, dovecot needs its users dovecot and dovenull (the package creates them)');
  if (root) {
    // The mail processes run as dovecot: they must reach the home under `dir` (a temp dir is 0700).
    chmodSync(dir, 0o755);
    chownSync(join(dir, 'home'), mail.uid, mail.gid);
  }
  const group = root ? 'dovecot' : (spawnSync('id', ['-gn']).stdout.toString().trim() || String(me.gid));
  const port = opts.port ?? (await freePort());
  const conf = `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
first_valid_uid = 1
first_valid_gid = 1
default_internal_user = ${root ? 'dovecot' : me.username}
default_internal_group = ${group}
default_login_user = ${root ? 'dovenull' : me.username}
passdb {
  driver = passwd-file
  args = ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${mail.uid} gid=${mail.gid} home=${dir}/home/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
`;
  writeFileSync(join(dir, 'dovecot.conf'), conf);
  const child: ChildProcess = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Ready once the port takes connections.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = existsSync(join(dir, 'dovecot.log')) ? readFileSync(join(dir, 'dovecot.log'), 'utf8') : '';
      child.kill('SIGKILL');
      throw new Error(`dovecot did not start: ${err}\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    user,
    pass,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

