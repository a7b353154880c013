/**
 * `fecr doctor`'s checks of a data dir's issuers and of the Hacienda they send to, as data (the CLI renders them):
 *
 *  - each issuer's certificate: it opens with its PIN, holds the key, is of the issuer's identificación, is valid
 *    now (a warning under 30 days left);
 *  - sandbox/production: the issuer's record and .p12 belong to that environment (ambiente 1|2, a fecr test
 *    certificate or one of the other environment is refused), its credentials (no placeholder password; one IdP
 *    password grant, unless Hacienda refused them already: every failed login counts towards its lock-out), the
 *    reception API's reachability (DNS, TLS, HTTP status in words: hacienda/client/describe.ts) and the issuer's
 *    activity code among its active activities at `/fe/ae`.
 *
 * Env local: the embedded emulator needs no check; a Hacienda of the profile's own (`haciendaUrl`: an external
 * `fecr hacienda serve`, or a dead URL) is reached as the real one is, its reception API and its IdP's token endpoint
 * (one GET each without credentials), then one grant per issuer, and fails naming the cause (issue 36: doctor said
 * "every check holds" with Hacienda unreachable).
 *
 * Network checks ask once, without retries, with short timeouts (PROBE_MS for the reachability GETs); no document
 * is sent.
 */
import { actividadRegistrada } from '../core/catalog/actividades.js';
import type { CertificateInfo } from '../core/sign/cert.js';
import { daysUntilExpiry, endsSoon, expiryDay, RENEW_ADVICE } from '../core/sign/cert-expiry.js';
import { certificateEnvironment, type CertificateEnvironment } from '../core/sign/cert-environment.js';
import { describeP12, SigningError } from '../core/sign/p12.js';
import type { IssuerRecord } from '../core/input/schema.js';
import { describeFailure, HttpClient, probe, PublicQueryClient, TokenManager, type ProbeResult } from '../hacienda/index.js';
import type { Issuer } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { decodeClaveHacienda } from '../core/clave-hacienda.js';
import { openIssuerRecord } from './issuers.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface DoctorCheck {
  /** What was checked: `config`, `data dir`, `certificate 3101123456`, `reception`, … */
  check: string;
  status: CheckStatus;
  /** What was found, one line. */
  message: string;
  /** What to do, one line (fail and warn). */
  fix?: string;
}

export { CERT_WARN_DAYS } from '../core/sign/cert-expiry.js';

/** The password `fecr init` writes into issuer.json until the user puts theirs (base64 of it, as the spec's claveHacienda). */
export const PLACEHOLDER_PASSWORD = 'REPLACE: your Hacienda password';

const UPDATE = 'then run fecr emisor update ISSUER.json';
const AMBIENTE: Record<'sandbox' | 'production', number> = { production: 1, sandbox: 2 };

export interface DoctorOptions {
  /** Said with a failed reachability check (e.g. the profile's haciendaUrl and how to change it). */
  endpointHint?: string;
  /** Network timeouts, ms (default 10 000; the reachability GETs: PROBE_MS). */
  timeoutMs?: number;
  /** Env local: Hacienda is the profile's own URL (`haciendaUrl`), not the embedded emulator: reach it. */
  externalHacienda?: boolean;
}

/** How long a reachability GET (reception, IdP) may take: short, so doctor never hangs on a dead Hacienda. */
export const PROBE_MS = 5_000;

/** Every check of the account's issuers and of its Hacienda (none but certificates in env local). */
export async function doctorChecks(ctx: ServiceContext, accountId: number | null, opts: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const rows = accountId === null ? [] : await ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', accountId).orderBy('identificacion').execute();
  const env = ctx.hacienda.environment;
  const checks: DoctorCheck[] = [];
  if (rows.length === 0) {
    checks.push({
      check: 'issuers',
      status: 'fail',
      message: 'no issuer is registered',
      fix: 'fecr init --p12 FILE --pin-stdin writes issuer.json; then fecr emisor register issuer.json',
    });
  }
  const issuers = rows.map((row) => ({ row, record: openIssuerRecord(ctx, row) }));
  const certificates = issuers.map(({ record }) => certificateCheck(record, new Date(ctx.now())));
  for (const c of certificates) checks.push(c.check);
  if (env === 'local' && !opts.externalHacienda) {
    checks.push({ check: 'hacienda', status: 'ok', message: 'env local: the embedded Hacienda emulator (no credentials or network to check)' });
    return checks;
  }
  if (env === 'local') {
    // An emulator at the profile's URL: what a send needs of it, its reception and its IdP, then one grant per issuer
    // (a strict emulator knows its users: a refusal is its 401; fecr init's placeholder is fine with a lenient one).
    const reach = await Promise.all([receptionCheck(ctx, opts), idpCheck(ctx, opts)]);
    checks.push(...reach);
    const reachable = reach.every((c) => c.status === 'ok');
    const http = new HttpClient({ connectTimeoutMs: PROBE_MS, headersTimeoutMs: PROBE_MS, bodyTimeoutMs: PROBE_MS, connections: 1 });
    try {
      for (const { row, record } of issuers) {
        checks.push(reachable ? await credentialsCheck(ctx, http, row, record, { placeholderOk: true }) : skipped(`credentials ${record.identificacion}`, 'Hacienda is not reachable'));
      }
    } finally {
      await http.close();
    }
    return checks;
  }
  const timeout = opts.timeoutMs ?? 10_000;
  const http = new HttpClient({ connectTimeoutMs: timeout, headersTimeoutMs: timeout, bodyTimeoutMs: timeout, connections: 2 });
  try {
    const reception = await receptionCheck(ctx, opts);
    checks.push(reception);
    const reachable = reception.status === 'ok';
    for (const [i, { row, record }] of issuers.entries()) {
      checks.push(ambienteCheck(record, env, certificates[i]!.environment));
      checks.push(reachable ? await credentialsCheck(ctx, http, row, record) : skipped(`credentials ${record.identificacion}`, 'Hacienda is not reachable'));
      checks.push(reachable ? await activityCheck(ctx, http, record) : skipped(`activity ${record.identificacion}`, 'Hacienda is not reachable'));
    }
  } finally {
    await http.close();
  }
  return checks;
}

function skipped(check: string, why: string): DoctorCheck {
  return { check, status: 'skip', message: `not checked: ${why}` };
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The issuer's .p12: opens with the PIN, has the key, is the issuer's, valid now and for 30 days more; and, when it
 * opens, which Hacienda its CA issues for.
 */
export function certificateCheck(record: IssuerRecord, now: Date): { check: DoctorCheck; environment?: CertificateEnvironment } {
  const result = certificateLine(record, now);
  return result.cert ? { check: result.check, environment: certificateEnvironment(result.cert) } : { check: result.check };
}

function certificateLine(record: IssuerRecord, now: Date): { check: DoctorCheck; cert?: CertificateInfo } {
  const id = record.identificacion;
  const check = `certificate ${id}`;
  const replace = `put the issuer's .p12 and its PIN in ISSUER.json (fecr emisor update ISSUER.json --p12 FILE --pin-stdin)`;
  let described;
  try {
    described = describeP12(Buffer.from(record.certificadoHacienda.replace(/\s+/g, ''), 'base64'), record.pinCertificado, now);
  } catch (e) {
    const code = e instanceof SigningError ? e.code : undefined;
    if (code === 'WRONG_PIN') return { check: { check, status: 'fail', message: 'wrong PIN: the .p12 does not open with pinCertificado', fix: `put its PIN in pinCertificado, ${UPDATE} (or fecr emisor update ISSUER.json --p12 FILE --pin-stdin)` } };
    return { check: { check, status: 'fail', message: `the .p12 cannot be read (${e instanceof Error ? e.message : String(e)})`, fix: replace } };
  }
  const c = described.certificate;
  if (!described.hasPrivateKey) return { check: { check, status: 'fail', message: 'the .p12 holds no private key, so it cannot sign', fix: `export the .p12 with its key; ${replace}` } };
  if (c.identificacion !== id) {
    return { check: { check, status: 'fail', message: `the certificate is of ${c.identificacion ?? 'no identificación'}, not of ${id} (${c.subject})`, fix: replace }, cert: c };
  }
  const until = expiryDay(c.notAfter);
  if (described.validity === 'expired') return { check: { check, status: 'fail', message: `the certificate expired on ${until}`, fix: `get a new llave criptográfica from Hacienda; ${replace}` }, cert: c };
  if (described.validity === 'not-yet-valid') return { check: { check, status: 'fail', message: `the certificate is valid only from ${isoDay(c.notBefore)}`, fix: `wait until then, or ${replace}` }, cert: c };
  const days = daysUntilExpiry(c.notAfter, now);
  const message = `${c.subject}, identificación ${c.identificacion}, valid until ${until} (${days} day${days === 1 ? '' : 's'} left)`;
  if (endsSoon(c.notAfter, now)) {
    return { check: { check, status: 'warn', message, fix: `renew it before ${until}: ${RENEW_ADVICE}` }, cert: c };
  }
  return { check: { check, status: 'ok', message }, cert: c };
}

/** The record's ambiente and the .p12's issuing CA against the profile's Hacienda. */
export function ambienteCheck(record: IssuerRecord, env: 'sandbox' | 'production', issuedFor: CertificateEnvironment | undefined): DoctorCheck {
  const id = record.identificacion;
  const check = `ambiente ${id}`;
  const want = AMBIENTE[env];
  const other = env === 'sandbox' ? 'production' : 'sandbox';
  if (Number(record.ambiente) !== want) {
    return { check, status: 'fail', message: `ambiente is ${record.ambiente} (${other}) on a ${env} profile`, fix: `set "ambiente": ${want} in ISSUER.json, ${UPDATE}` };
  }
  if (issuedFor === undefined) return { check, status: 'skip', message: 'not checked: the .p12 does not open (see its certificate line)' };
  const llave = `put the llave criptográfica Hacienda issued for ${env} (ATV / TRIBU-CR) in ISSUER.json, ${UPDATE} --p12 FILE --pin-stdin`;
  if (issuedFor === 'fecr-test') {
    return { check, status: 'fail', message: `the .p12 is a fecr test certificate (fecr certs create-test): Hacienda's ${env} refuses its signature`, fix: llave };
  }
  if (issuedFor !== 'unknown' && issuedFor !== env) return { check, status: 'fail', message: `the .p12 is a llave criptográfica of ${issuedFor}, not of ${env}`, fix: llave };
  if (env === 'production' && /@stag\./i.test(record.usuarioHacienda)) {
    return { check, status: 'fail', message: `usuarioHacienda ${record.usuarioHacienda} is a sandbox (stag) user`, fix: `put the production user and password in ISSUER.json, ${UPDATE}` };
  }
  return { check, status: 'ok', message: `ambiente ${want} (${env})${issuedFor === env ? `, a llave criptográfica of ${env}` : ''}` };
}

/**
 * Whether Hacienda's reception API answers: one GET without a token (any status below 500 proves DNS, TCP and TLS;
 * a 5xx or a transport failure is said in words). `fecr doctor` and the contingency setting (service/contingency.ts).
 */
export function probeReception(ctx: ServiceContext, opts: { http?: HttpClient; timeoutMs?: number }): Promise<ProbeResult> {
  return probe(`${ctx.hacienda.endpoints.receptionBaseUrl}/comprobantes?offset=0&limit=1`, opts);
}

/** Whether the IdP's token endpoint answers one GET without credentials (any status below 500), as probeReception. */
export function probeIdp(ctx: ServiceContext, opts: { http?: HttpClient; timeoutMs?: number }): Promise<ProbeResult> {
  return probe(ctx.hacienda.endpoints.tokenUrl, opts);
}

/** The reception API answers (any status below 500 without a token proves DNS, TCP and TLS). */
async function receptionCheck(ctx: ServiceContext, opts: DoctorOptions): Promise<DoctorCheck> {
  const r = await probeReception(ctx, { timeoutMs: PROBE_MS });
  const where = ctx.hacienda.endpoints.receptionBaseUrl;
  if (r.ok) return { check: 'reception', status: 'ok', message: `${where} answers (HTTP ${r.status} without a token)` };
  return {
    check: 'reception',
    status: 'fail',
    message: `${where} cannot be reached: ${r.cause}`,
    fix: opts.endpointHint ?? "check this machine's network, DNS and proxy (Hacienda's API is reached over HTTPS)",
  };
}

/** The IdP's token endpoint answers one GET without credentials (env local's external emulator; elsewhere the grant). */
async function idpCheck(ctx: ServiceContext, opts: DoctorOptions): Promise<DoctorCheck> {
  const where = ctx.hacienda.endpoints.tokenUrl;
  const r = await probeIdp(ctx, { timeoutMs: PROBE_MS });
  if (r.ok) return { check: 'idp', status: 'ok', message: `${where} answers (HTTP ${r.status} without credentials)` };
  return { check: 'idp', status: 'fail', message: `${where} cannot be reached: ${r.cause}`, fix: opts.endpointHint ?? "check this machine's network, DNS and proxy, and the IdP URL" };
}

/**
 * One IdP password grant with the issuer's credentials (not when they are the placeholder, unless `placeholderOk`: an
 * emulator in env local, or were refused already).
 */
async function credentialsCheck(ctx: ServiceContext, http: HttpClient, row: Issuer, record: IssuerRecord, o: { placeholderOk?: boolean } = {}): Promise<DoctorCheck> {
  const check = `credentials ${record.identificacion}`;
  const password = decodeClaveHacienda(record.claveHacienda);
  const fix = `put the issuer's Hacienda user and password (ATV, ${ctx.hacienda.environment}) in usuarioHacienda and claveHacienda (base64) of ISSUER.json, ${UPDATE}`;
  if (!o.placeholderOk && (password.startsWith('REPLACE:') || password === PLACEHOLDER_PASSWORD)) {
    return { check, status: 'fail', message: 'claveHacienda is the placeholder fecr init wrote, not a password', fix };
  }
  if (row.hacienda_refused_at !== null) {
    const when = isoDay(new Date(Number(row.hacienda_refused_at)));
    const detail = row.hacienda_refused_detail ? ` (${row.hacienda_refused_detail})` : '';
    return { check, status: 'fail', message: `Hacienda refused these credentials on ${when}${detail}; not asked again (each failed login counts towards a lock-out)`, fix };
  }
  const tokens = new TokenManager({ endpoints: ctx.hacienda.endpoints, http, now: ctx.now, retry: { maxAttempts: 1 } });
  try {
    await tokens.getAccessToken({ username: record.usuarioHacienda, password });
    return { check, status: 'ok', message: `Hacienda's IdP granted a token to ${record.usuarioHacienda}` };
  } catch (e) {
    const refused = (e as { code?: string }).code === 'HACIENDA_BAD_CREDENTIALS';
    return { check, status: 'fail', message: refused ? describeFailure(e) : `Hacienda's IdP cannot be reached: ${describeFailure(e)}`, fix: refused ? fix : "check this machine's network, DNS and proxy, and the IdP URL" };
  } finally {
    await tokens.close();
  }
}

/** The issuer's codigoActividad among its active activities in Hacienda's registry (/fe/ae). */
async function activityCheck(ctx: ServiceContext, http: HttpClient, record: IssuerRecord): Promise<DoctorCheck> {
  const id = record.identificacion;
  const check = `activity ${id}`;
  const code = String(record.codigoActividad);
  const client = new PublicQueryClient({ baseUrl: ctx.hacienda.endpoints.queryBaseUrl, http, now: ctx.now, retry: { maxAttempts: 1 } });
  let taxpayer;
  try {
    taxpayer = await client.getTaxpayer(id);
  } catch (e) {
    return { check, status: 'fail', message: `Hacienda's registry (/fe/ae) cannot be asked: ${describeFailure(e)}`, fix: "check this machine's network, DNS and proxy" };
  } finally {
    await client.close();
  }
  if (!taxpayer) return { check, status: 'fail', message: `Hacienda's registry (/fe/ae) does not know ${id}`, fix: `check identificacion in ISSUER.json (fecr contribuyente ${id}), ${UPDATE}` };
  const active = taxpayer.actividades.filter((a) => a.estado === 'A');
  if (actividadRegistrada(code, active)) return { check, status: 'ok', message: `${code} is one of ${id}'s active activities at Hacienda (/fe/ae)` };
  const list = active.map((a) => a.codigo).join(', ') || 'none';
  return { check, status: 'fail', message: `codigoActividad ${code} is not among ${id}'s active activities at Hacienda (${list})`, fix: `set one of them as codigoActividad in ISSUER.json, ${UPDATE}` };
}
