/**
 * `fecr doctor`: a profile checked end to end, as a list of checks (service/doctor.ts's shape), each with what was
 * found and what to do. Here: the config file and the profile; for a local profile its data dir (readable, writable,
 * modes, the master key) and then, on the service opened there, the issuers and their Hacienda (service/doctor.ts);
 * for a remote profile the session, the service's reachability and its issuers. Nothing is written but what opening
 * the service writes (a data dir that does not exist yet is not created).
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ClientContext as Ctx } from './context.js';
import { ClientError } from './errors.js';
import type { DoctorCheck } from '../service/doctor.js';
import { ageText } from '../core/contingency.js';
import { formatCr, parseIsoDateTime } from '../core/dates.js';
import type { ContingencyOwed } from './contingency.js';
import type { ActiveProfile, HaciendaEnv, LocalProfile, RemoteProfile } from './profiles.js';

export type { CheckStatus, DoctorCheck } from '../service/doctor.js';

export interface DoctorReport {
  profile: string;
  mode: 'local' | 'remote';
  /** Local profiles: which Hacienda. */
  env?: HaciendaEnv;
  /** True when no check failed (warnings allowed). */
  ok: boolean;
  checks: DoctorCheck[];
}

const modeText = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');
const openToOthers = (file: string) => process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0;

export async function runDoctor(ctx: Ctx): Promise<DoctorReport> {
  const [{ openProfiles, profileChoice, flagFor }] = await Promise.all([import('./profiles.js')]);
  const { name, from } = profileChoice(ctx.io.env, ctx.profile);
  const checks: DoctorCheck[] = [];
  const done = (mode: 'local' | 'remote', env?: HaciendaEnv): DoctorReport => ({
    profile: name,
    mode,
    ...(env ? { env } : {}),
    ok: !checks.some((c) => c.status === 'fail'),
    checks,
  });
  let store;
  try {
    store = await openProfiles(ctx.io.env);
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    checks.push({ check: 'config', status: 'fail', message: e.message, fix: 'fix the file, or remove it to start again (fecr config set writes a new one)' });
    return done('local');
  }
  // An unknown profile name is the usage error every verb gives (with the closest name).
  store.requireExisting(name, from);
  let active: ActiveProfile;
  try {
    active = { name, profile: store.resolve(name), configDir: store.dir };
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    checks.push({ check: 'config', status: 'fail', message: e.message, fix: `fecr config set KEY VALUE${flagFor(name)}` });
    return done('local');
  }
  checks.push(configCheck(store.file, active));
  if (active.profile.mode === 'remote') {
    await remoteChecks(ctx, active as ActiveProfile & { profile: RemoteProfile }, checks);
    return done('remote');
  }
  await localChecks(ctx, active as ActiveProfile & { profile: LocalProfile }, checks);
  return done('local', active.profile.env);
}

function configCheck(file: string, active: ActiveProfile): DoctorCheck {
  const p = active.profile;
  const what = p.mode === 'local' ? `local, env ${p.env}${p.haciendaUrl ? `, Hacienda at ${p.haciendaUrl}` : ''}` : `remote, ${p.baseUrl}`;
  if (!existsSync(file)) return { check: 'config', status: 'ok', message: `profile "${active.name}" (${what}); no config file yet (${file}: fecr config set writes it)` };
  if (openToOthers(file)) {
    return { check: 'config', status: 'warn', message: `${file} is mode ${modeText(statSync(file).mode)}: other users may read it`, fix: `chmod 600 ${file}` };
  }
  return { check: 'config', status: 'ok', message: `profile "${active.name}" (${what}) in ${file}` };
}

/** The data dir's state before anything opens it: readable and writable by this user, closed to others, its keys. */
function dataDirCheck(dir: string, env: Record<string, string | undefined>): DoctorCheck {
  const check = 'data dir';
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    return { check, status: 'fail', message: `${dir} is not readable and writable by this user (${code})`, fix: `give it to this user: chown -R "$USER" ${dir}; chmod 700 ${dir}` };
  }
  const open = [dir, path.join(dir, 'fecr.db'), path.join(dir, 'master.key')].filter((f) => existsSync(f) && openToOthers(f));
  if (open.length > 0) {
    const f = open[0]!;
    return { check, status: 'warn', message: `${f} is mode ${modeText(statSync(f).mode)}: other users may read the documents and keys`, fix: `chmod ${f === dir ? '700' : '600'} ${f}` };
  }
  const key = env.FECR_MASTER_KEY ? 'FECR_MASTER_KEY' : existsSync(path.join(dir, 'master.key')) ? `${path.join(dir, 'master.key')} (mode 0600)` : 'the OS keychain';
  return { check, status: 'ok', message: `${dir} (mode 0700, readable and writable); master key from ${key}` };
}

async function localChecks(ctx: Ctx, active: ActiveProfile & { profile: LocalProfile }, checks: DoctorCheck[]): Promise<void> {
  const profile = active.profile;
  const [{ openService, resolveDataDir }, { haciendaEndpointsOf }, { flagFor }] = await Promise.all([
    import('../service/runtime.js'),
    import('./select.js'),
    import('./profiles.js'),
  ]);
  const dir = profile.dataDir ? path.resolve(ctx.io.cwd, profile.dataDir) : resolveDataDir(ctx.io.env);
  if (!existsSync(dir)) {
    checks.push({ check: 'data dir', status: 'ok', message: `${dir} does not exist yet (made, mode 0700, by the first command that needs it)` });
    checks.push({ check: 'issuers', status: 'fail', message: 'no issuer is registered', fix: `fecr init --p12 FILE --pin-stdin writes issuer.json; then fecr emisor register issuer.json${flagFor(active.name)}` });
    return;
  }
  const dirCheck = dataDirCheck(dir, ctx.io.env);
  checks.push(dirCheck);
  if (dirCheck.status === 'fail') return;
  const endpoints = await haciendaEndpointsOf(profile);
  const { default: pino } = await import('pino');
  let opened;
  try {
    opened = await openService({
      dataDir: dir,
      env: ctx.io.env,
      environment: profile.env,
      ...(endpoints ? { endpoints } : {}),
      startLocalEmulator: false,
      logger: pino({ level: 'silent' }),
      now: () => ctx.now().getTime(),
      mail: false,
    });
  } catch (e) {
    checks.push({ check: 'database', status: 'fail', message: `${dir}: cannot open the service (${(e as Error).message})`, fix: 'fecr --debug doctor says more; a full disk or a damaged fecr.db is the usual cause' });
    return;
  }
  try {
    const { findAccount } = await import('../service/accounts.js');
    const base = profile.account ?? 'local';
    const account = await findAccount(opened.ctx, base);
    if (!account && profile.account) {
      checks.push({ check: 'account', status: 'fail', message: `no account ${base} in ${dir}`, fix: `fecr accounts create ${base}, or fecr config unset account${flagFor(active.name)}` });
      return;
    }
    const { doctorChecks } = await import('../service/doctor.js');
    const own = profile.env === 'local' ? 'the embedded emulator' : "Hacienda's own";
    const hint = profile.haciendaUrl
      ? `the profile's haciendaUrl is ${profile.haciendaUrl}: correct it (fecr config set haciendaUrl URL${flagFor(active.name)}) or unset it for ${own} (fecr config unset haciendaUrl${flagFor(active.name)})`
      : undefined;
    checks.push(...(await doctorChecks(opened.ctx, account?.id ?? null, { ...(hint ? { endpointHint: hint } : {}), externalHacienda: profile.haciendaUrl !== undefined })));
    if (account) {
      const { contingencyOwed } = await import('../service/contingency.js');
      const owed = owedCheck(await contingencyOwed(opened.ctx, account.id), ctx.now().getTime(), flagFor(active.name));
      if (owed) checks.push(owed);
    }
  } finally {
    await opened.close();
  }
}

async function remoteChecks(ctx: Ctx, active: ActiveProfile & { profile: RemoteProfile }, checks: DoctorCheck[]): Promise<void> {
  const [{ openSession, openBackend }, { flagFor }, { probe }] = await Promise.all([import('./select.js'), import('./profiles.js'), import('../hacienda/client/describe.js')]);
  const reach = await probe(active.profile.baseUrl);
  if (!reach.ok) {
    checks.push({ check: 'service', status: 'fail', message: `${active.profile.baseUrl} cannot be reached: ${reach.cause}`, fix: `check that the service runs there, and the profile's baseUrl (fecr config set baseUrl URL${flagFor(active.name)})` });
    return;
  }
  checks.push({ check: 'service', status: 'ok', message: `${active.profile.baseUrl} answers (HTTP ${reach.status})` });
  const session = await openSession(ctx, active, { optional: true, allowExpired: true });
  if (!session) return void checks.push({ check: 'session', status: 'fail', message: 'not logged in', fix: `fecr login${flagFor(active.name)}` });
  if (session.secondsLeft !== null && session.secondsLeft <= 0) return void checks.push({ check: 'session', status: 'fail', message: 'the session expired', fix: `fecr login${flagFor(active.name)}` });
  checks.push({ check: 'session', status: 'ok', message: `logged in${session.claims.sub ? ` as ${session.claims.sub}` : ''} (token from ${session.source})` });
  const backend = await openBackend(ctx, active.name);
  try {
    const issuers = await backend.listIssuers();
    checks.push(
      issuers.length === 0
        ? { check: 'issuers', status: 'fail', message: 'no issuer is registered on the service', fix: `fecr emisor register issuer.json${flagFor(active.name)}` }
        : { check: 'issuers', status: 'ok', message: `${issuers.map((i) => i.identificacion).join(', ')} registered on the service (their certificates and Hacienda credentials are the service's: fecr doctor on its host)` },
    );
    // A service without the contingency routes says nothing here (its issuers answered).
    const owed = backend.contingency ? await backend.contingency().owed().then((o) => owedCheck(o, ctx.now().getTime(), flagFor(active.name)), () => undefined) : undefined;
    if (owed) checks.push(owed);
  } catch (e) {
    checks.push({ check: 'issuers', status: 'fail', message: `the service refused the request: ${(e as Error).message}`, fix: `fecr login${flagFor(active.name)}` });
  } finally {
    await backend.close();
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * What the account owes Hacienda (issue 36), as a warning: documents it has not received yet (whatever the
 * contingencia setting), contingency documents not accepted, provisional comprobantes not replaced; the oldest's age.
 * Nothing owed: no line (an ok line would say nothing a later check does not).
 */
export function owedCheck(owed: ContingencyOwed, nowMs: number, profileFlag: string): DoctorCheck | undefined {
  const unsent = owed.documentos.filter((d) => d.estado === 'pendiente' || d.estado === 'credenciales_invalidas').length;
  const parts = [
    unsent ? `${plural(unsent, 'document', 'documents')} not received by Hacienda yet` : '',
    owed.documentos.length - unsent ? `${plural(owed.documentos.length - unsent, 'contingency document', 'contingency documents')} not accepted` : '',
    owed.provisionales.length ? `${plural(owed.provisionales.length, 'provisional comprobante', 'provisional comprobantes')} not replaced by an accepted document` : '',
  ].filter((p) => p !== '');
  if (parts.length === 0) return undefined;
  const since = [...owed.documentos.map((d) => Date.parse(d.createdAt)), ...owed.provisionales.map((p) => parseIsoDateTime(p.fechaEmision)?.getTime() ?? Date.parse(p.recordedAt))];
  const oldest = Math.min(...since);
  return {
    check: 'owed',
    status: 'warn',
    message: `${parts.join(', ')}; the oldest since ${formatCr(new Date(oldest))} (${ageText(nowMs - oldest)} ago)`,
    fix: [
      owed.documentos.length ? `fecr contingency send${profileFlag} sends the documents once Hacienda answers` : '',
      owed.provisionales.length ? `fecr contingency replace ID BODY.json${profileFlag} replaces each provisional comprobante` : '',
    ]
      .filter((f) => f !== '')
      .concat(`fecr contingency status${profileFlag} lists them`)
      .join('; '),
  };
}
