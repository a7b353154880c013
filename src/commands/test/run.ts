/**
 * `fecr test PATH…`: the cases read (client/test-runner/collect.ts), the profile chosen (a throwaway local one by
 * default, client/test-runner/throwaway.ts; `--profile P` / FECR_PROFILE otherwise), the test issuers made, the run
 * (client/test-runner/run.ts), then one line per document on stdout, a summary on stderr, `--junit FILE`, and under
 * GitHub Actions an `::error` annotation per failure (client/test-runner/report.ts).
 *
 * Exit: 0 every expectation holds, 3 one does not (EXIT.rejected), 1 the files cannot be read or the profile used,
 * 130 after Ctrl-C.
 */
import { writeFile } from 'node:fs/promises';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { printFindings } from '../../cli/findings.js';
import { encodingFlag, resolvePath, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Backend } from '../../client/backend.js';
import type { TestCase } from '../../client/test-runner/collect.js';
import { codesText } from '../../client/test-runner/report.js';
import type { CaseResult, TestSummary } from '../../client/test-runner/run.js';
import { withBackend } from '../backend.js';

export interface TestFlags {
  junit?: string;
  faults?: string;
  keep?: boolean;
  concurrency?: string;
  timeout?: string;
  encoding?: string;
  json?: boolean;
}

export async function run(ctx: Ctx, paths: string[], opts: TestFlags, profileFlag: string | undefined): Promise<void> {
  const concurrency = intFlag('--concurrency', opts.concurrency, 8, 1, 256);
  const timeoutMs = intFlag('--timeout', opts.timeout, 120, 1, 86_400) * 1000;
  const onProfile = profileFlag !== undefined || Boolean(ctx.io.env.FECR_PROFILE);
  if (onProfile && opts.faults) throw new UsageError('--faults is for the throwaway profile; for a profile of your own: fecr config set emulatorFaults=FILE');
  if (onProfile && opts.keep) throw new UsageError('--keep keeps the throwaway profile; --profile runs on a profile that stays anyway');

  const cases = await readCases(ctx, paths, opts);
  const { issuersOf, ensureTestIssuers } = await import('../../client/test-runner/issuers.js');
  const needs = issuersOf(cases);
  const marks = markSet(ctx.io.env);
  const results: CaseResult[] = [];
  const onResult = (r: CaseResult) => {
    results.push(r);
    if (!opts.json) writeLine(ctx.io.stdout, resultLine(r, marks));
  };
  const go = async (b: Backend, register: boolean, where: string): Promise<TestSummary> => {
    const { registered, missing } = await ensureTestIssuers(b, needs, ctx.now(), register);
    if (missing.length) {
      throw new UserError(`${where}: issuer${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not registered: register ${missing.length > 1 ? 'them' : 'it'} with fecr emisor register${profileFlag ? ` --profile ${profileFlag}` : ''}`);
    }
    if (registered.length) info(ctx, `test issuer${registered.length > 1 ? 's' : ''} ${registered.join(', ')}: registered with a generated test certificate`);
    const { runTests } = await import('../../client/test-runner/run.js');
    const stop = new AbortController();
    // Ctrl-C, or a CI job cancelled (SIGTERM): the documents in flight finish, the report is written, the throwaway
    // data dir removed.
    const onSignal = () => {
      if (!stop.signal.aborted) info(ctx, '\ninterrupted: finishing the documents in flight…');
      stop.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      return await runTests(cases, { backend: b, concurrency, timeoutMs, onResult, signal: stop.signal });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  };

  let summary: TestSummary;
  if (onProfile) {
    const { activeProfile } = await import('../../client/select.js');
    const active = await activeProfile(ctx, profileFlag);
    const emulated = active.profile.mode === 'local' && active.profile.env === 'local';
    info(ctx, `fecr test: ${cases.length} document${cases.length === 1 ? '' : 's'} on profile "${active.name}"`);
    summary = await withBackend(ctx, (b) => go(b, emulated, `profile "${active.name}"`), { profile: active.name, bulk: true });
  } else {
    const { openThrowaway } = await import('../../client/test-runner/throwaway.js');
    let t: import('../../client/test-runner/throwaway.js').Throwaway | undefined;
    // Opened by withBackend's factory: a fault file it cannot use is said as any refusal (headline and findings).
    const open = async () => {
      t = await openThrowaway(ctx, opts.faults ? { faults: opts.faults } : {});
      info(ctx, `fecr test: ${cases.length} document${cases.length === 1 ? '' : 's'} on a throwaway local profile (data dir ${t.dataDir}, Hacienda: the embedded emulator${opts.faults ? `, faults from ${opts.faults}` : ''})`);
      return t.backend;
    };
    try {
      summary = await withBackend({ ...ctx, backend: open }, (b) => go(b, true, 'throwaway profile'));
    } finally {
      if (t) {
        await t.dispose(Boolean(opts.keep));
        if (opts.keep) info(ctx, `kept the throwaway profile's data dir: ${t.dataDir} (e.g. FECR_DATA_DIR=${t.dataDir} fecr documents list)`);
      }
    }
  }
  const interrupted = summary.total < cases.length;

  if (opts.junit) {
    const { junitXml } = await import('../../client/test-runner/report.js');
    try {
      await writeFile(resolvePath(ctx.io, opts.junit), junitXml(summary, { timestamp: ctx.now() }));
    } catch (e) {
      throw new UserError(`${opts.junit}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  if (ctx.io.env.GITHUB_ACTIONS === 'true') {
    const { githubAnnotation } = await import('../../client/test-runner/report.js');
    for (const r of summary.results) if (r.problems.length) writeLine(ctx.io.stdout, githubAnnotation(r));
  }
  if (opts.json) printJson(ctx, jsonOf(summary));
  info(ctx, summaryLine(summary, cases.length) + (opts.junit ? `; JUnit report: ${opts.junit}` : ''));
  if (interrupted) throw new SilentExit(EXIT.interrupted);
  if (summary.failed > 0) {
    info(ctx, `error: ${summary.failed} expectation${summary.failed === 1 ? '' : 's'} did not hold: ${summary.results.filter((r) => r.problems.length).map((r) => safeText(r.case.where)).join(', ')}`);
    throw new SilentExit(EXIT.rejected);
  }
}

async function readCases(ctx: Ctx, paths: string[], opts: TestFlags): Promise<TestCase[]> {
  const { bodyFiles, collectCases, TestInputError } = await import('../../client/test-runner/collect.js');
  try {
    const files = await bodyFiles(paths, ctx.io.cwd);
    const encoding = encodingFlag(opts.encoding);
    return await collectCases(files, ctx.io.cwd, encoding ? { encoding } : {});
  } catch (e) {
    if (!(e instanceof TestInputError)) throw e;
    if (e.findings.length === 0) throw new UserError(e.message);
    printFindings(ctx, e.message, e.findings);
    throw new SilentExit(EXIT.error);
  }
}

/** ✓/✗, or `ok`/`FAIL` when the locale says the terminal is not UTF-8 (LC_ALL, LC_CTYPE or LANG set without UTF-8). */
function markSet(env: Record<string, string | undefined>): { pass: string; fail: string } {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  return locale && !/utf-?8/i.test(locale) ? { pass: 'ok  ', fail: 'FAIL' } : { pass: '✓', fail: '✗' };
}

/** `✓ facturas/01.json  5062…  aceptado aviso -407`; a failure adds `: why`. Through the sanitiser: file names and findings come from outside. */
export function resultLine(r: CaseResult, marks: { pass: string; fail: string }): string {
  const o = r.outcome;
  const codes = codesText(r);
  const label = r.case.expect.nombre ? `${r.case.where} (${r.case.expect.nombre})` : r.case.where;
  const head = `${r.problems.length ? marks.fail : marks.pass} ${label}  ${o.clave ?? '-'}  ${o.estado}${codes ? ` ${codes}` : ''}`;
  return safeText(r.problems.length ? `${head}: ${r.problems.join('; ')}` : head);
}

function summaryLine(s: TestSummary, total: number): string {
  const left = total - s.total;
  return `${s.total} document${s.total === 1 ? '' : 's'}: ${s.passed} passed, ${s.failed} failed${left ? `, ${left} not run` : ''} (${s.seconds.toFixed(1)} s)`;
}

function jsonOf(s: TestSummary) {
  return {
    total: s.total,
    passed: s.passed,
    failed: s.failed,
    seconds: Number(s.seconds.toFixed(3)),
    results: s.results.map((r) => ({
      name: r.case.name,
      where: r.case.where,
      file: r.case.file,
      line: r.case.line,
      expect: r.case.expect,
      estado: r.outcome.estado,
      ...(r.outcome.clave ? { clave: r.outcome.clave } : {}),
      errores: r.outcome.errores,
      findings: r.outcome.findings,
      ok: r.problems.length === 0,
      problems: r.problems,
      seconds: Number(r.seconds.toFixed(3)),
    })),
  };
}

function intFlag(flag: string, value: string | undefined, dflt: number, min: number, max: number): number {
  if (value === undefined) return dflt;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return n;
}
