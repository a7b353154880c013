/**
 * The run of `fecr test`: the cases (./collect.ts) sent through the batch runner (../batch/runner.ts: bounded
 * concurrency, numbering of bodies without numeroReferencia in order, each verdict awaited), each outcome judged
 * against its expectation (./expectations.ts). Results are handed over in the cases' order as soon as every earlier
 * one is known, so the lines of a run read the same whatever finishes first.
 */
import type { Backend, DocumentStatus } from '../backend.js';
import type { BatchResult } from '../batch/runner.js';
import type { TestCase } from './collect.js';
import { judge, type Outcome } from './expectations.js';

export interface CaseResult {
  case: TestCase;
  outcome: Outcome;
  /** Why the expectation does not hold (empty: it holds). */
  problems: string[];
  /** Seconds from the submission to the verdict (0 for a body refused before it was sent). */
  seconds: number;
}

export interface TestSummary {
  total: number;
  passed: number;
  failed: number;
  seconds: number;
  results: CaseResult[];
}

export interface RunTestsOptions {
  backend: Backend;
  concurrency: number;
  timeoutMs: number;
  /** Each result, in the cases' order. */
  onResult?: (r: CaseResult) => void;
  /** Stops taking new cases (Ctrl-C): the ones in flight finish. */
  signal?: AbortSignal;
}

export async function runTests(cases: readonly TestCase[], o: RunTestsOptions): Promise<TestSummary> {
  const started = performance.now();
  const { BatchRunner } = await import('../batch/runner.js');
  const timed = timing(o.backend);
  const bySeq = new Map(cases.map((c) => [c.seq, c]));
  const results: (CaseResult | undefined)[] = new Array(cases.length);
  let next = 0;
  const onResult = (r: BatchResult) => {
    const c = bySeq.get(r.row)!;
    const outcome = outcomeOf(r, o.timeoutMs);
    const result: CaseResult = { case: c, outcome, problems: judge(c.expect, outcome), seconds: r.clave ? timed.seconds(r.clave) : 0 };
    results[c.seq - 1] = result;
    while (next < results.length && results[next]) o.onResult?.(results[next++]!);
  };
  const runner = new BatchRunner({
    backend: timed.backend,
    concurrency: o.concurrency,
    onResult,
    // As `fecr batch --wait` waits (commands/batch/run.ts): one shared query watches every waiting document locally.
    wait: { timeoutMs: o.timeoutMs, concurrency: o.backend.mode === 'local' ? Math.max(128, o.concurrency * 16) : Math.max(16, o.concurrency * 4) },
  });
  o.signal?.addEventListener('abort', () => runner.stop(), { once: true });
  await runner.run(
    (async function* () {
      for (const c of cases) yield { row: c.seq, ...(c.body !== undefined ? { body: c.body } : {}), ...(c.errors ? { errors: c.errors } : {}), ...(c.csvRows ? { csvRows: c.csvRows } : {}) };
    })(),
  );
  if (runner.fatal) throw runner.fatal;
  const done = results.filter((r): r is CaseResult => r !== undefined);
  const failed = done.filter((r) => r.problems.length > 0).length;
  return { total: done.length, passed: done.length - failed, failed, seconds: (performance.now() - started) / 1000, results: done };
}

/** A batch result as an outcome: Hacienda's verdict, fecr's refusal, or what kept the document from either. */
export function outcomeOf(r: BatchResult, timeoutMs: number): Outcome {
  const base = { ...(r.clave ? { clave: r.clave } : {}), errores: r.errores ?? [], findings: r.errors ?? [] };
  if (r.state === 'invalido') return { ...base, estado: 'invalido' };
  if (r.state === 'error') return { ...base, estado: 'error', failure: `could not send: ${firstMessage(r) ?? 'unknown error'}` };
  if (r.errors?.length) return { ...base, estado: r.estado ?? 'enviado', failure: firstMessage(r)! };
  const estado = r.estado ?? 'enviado';
  if (estado === 'aceptado' || estado === 'rechazado' || estado === 'error') return { ...base, estado };
  if (estado === 'credenciales_invalidas') return { ...base, estado, failure: "held: Hacienda refused the issuer's credentials (fecr emisor update)" };
  return { ...base, estado, failure: `no verdict within ${Math.round(timeoutMs / 1000)} s (still ${estado})` };
}

function firstMessage(r: BatchResult): string | undefined {
  const f = r.errors?.find((e) => e.message) ?? r.errors?.[0];
  return f ? (f.path ? `${f.path}: ${f.message}` : f.message) : undefined;
}

/**
 * The backend, timing each document from its submission to its verdict (a proxy: every other method runs on the
 * backend itself).
 */
function timing(backend: Backend): { backend: Backend; seconds: (clave: string) => number } {
  const started = new Map<string, number>();
  const ended = new Map<string, number>();
  const submit: Backend['submit'] = async (body, opts) => {
    const t = performance.now();
    const r = await backend.submit(body, opts);
    if (!started.has(r.clave)) started.set(r.clave, t);
    return r;
  };
  const waitForVerdict: Backend['waitForVerdict'] = async (clave, opts): Promise<DocumentStatus> => {
    try {
      return await backend.waitForVerdict(clave, opts);
    } finally {
      ended.set(clave, performance.now());
    }
  };
  const wrapped = new Proxy(backend, {
    get(target, prop, receiver) {
      if (prop === 'submit') return submit;
      if (prop === 'waitForVerdict') return waitForVerdict;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    backend: wrapped,
    seconds: (clave) => {
      const s = started.get(clave);
      const e = ended.get(clave);
      return s !== undefined && e !== undefined ? Math.max(0, (e - s) / 1000) : 0;
    },
  };
}
