// docs/ci.md's recipes, run (issue 28): each fenced block marked `<!-- ci-recipe: NAME -->` is read as the CI service
// reads it (YAML through a real parser) and its script part is run with bash on a fresh HOME, in a temp working dir
// holding a copy of a small bodies folder (`invoices/`: four bodies of fixtures/test-suite, two of them expected
// rejected, and a JSONL of tiquetes):
//  - github: every job, each `run:` step as GitHub runs it (`bash --noprofile --norc -eo pipefail`, the job's env,
//    GITHUB_ACTIONS=true), in a folder of its own; `uses:` steps are skipped, and the file an upload-artifact step
//    uploads must exist after the job;
//  - gitlab: the job's `script:` lines in order (the first failing line fails the job), then its JUnit report exists;
//  - git-hook: installed as .git/hooks/pre-commit of a fresh repository, and `git commit` of the folder passes; with a
//    body whose expectation is wrong, the commit is refused;
//  - pre-commit: each local hook's `entry`;
//  - github-sandbox (needs Hacienda and real credentials): the YAML parses, every `run:` is valid bash (bash -n),
//    secrets only through `${{ secrets.… }}` in env, `fecr doctor` before `fecr test --profile`; its profile step
//    (config, the issuer record written from the secrets, register, numbering) runs with stand-in secrets (a test
//    .p12), the steps that talk to Hacienda do not.
// The install line `npm install -g @fecr/cli` is not run: this checkout's bin/fecr.js is put on PATH as `fecr` (what
// a global install gives); `npx` is made to fail.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { tempDir } from './helpers/cli.js';

const root = new URL('..', import.meta.url).pathname;
const DOC = 'docs/ci.md';
const INSTALL = 'npm install -g @fecr/cli';
const BODIES = ['01-factura-servicios.json', '02-tiquete-persona.json', '03-fecha-futura.json', '03-fecha-futura.expect.json', '04-cabys-inexistente.json', '04-cabys-inexistente.expect.json', '07-tiquetes.jsonl'];

interface Recipe {
  name: string;
  lang: string;
  text: string;
  /** 1-based line of the block's first line in docs/ci.md. */
  line: number;
}

/** The marked fenced blocks of docs/ci.md (and every ```yaml block, marked or not, so none escapes the test). */
function recipes(markdown: string): { marked: Recipe[]; yamlBlocks: number } {
  const lines = markdown.split('\n');
  const marked: Recipe[] = [];
  let yamlBlocks = 0;
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, n) => n > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${DOC}:${i + 1}: unterminated block`);
    if (fence[1] === 'yaml') yamlBlocks++;
    const mark = /^<!-- ci-recipe: ([a-z-]+) -->$/.exec(lines[i - 1] ?? '');
    if (mark) marked.push({ name: mark[1]!, lang: fence[1]!, text: lines.slice(i + 1, end).join('\n') + '\n', line: i + 2 });
    i = end;
  }
  return { marked, yamlBlocks };
}

const doc = readFileSync(join(root, DOC), 'utf8');
const { marked, yamlBlocks } = recipes(doc);
const recipe = (name: string): Recipe => {
  const r = marked.find((x) => x.name === name);
  if (!r) throw new Error(`${DOC} has no recipe "${name}"`);
  return r;
};
const yamlOf = (name: string) => parseYaml(recipe(name).text, { uniqueKeys: true, strict: true }) as Record<string, any>;

const home = tempDir('fecr-ci-recipes-');
const bin = join(home, 'bin');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

beforeAll(() => {
  mkdirSync(bin, { recursive: true });
  // `fecr` as a global install puts it on PATH: this checkout's bin.
  writeFileSync(join(bin, 'fecr'), `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(join(root, 'bin/fecr.js'))} "$@"\n`);
  writeFileSync(join(bin, 'npx'), '#!/bin/sh\necho "ci-recipes: a recipe must not use npx" >&2\nexit 97\n');
  chmodSync(join(bin, 'fecr'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
});
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

let runs = 0;
/** A fresh machine: its own HOME and working dir with `invoices/`, none of the developer's fecr setup. */
function freshMachine(extraEnv: Record<string, string> = {}): { cwd: string; env: NodeJS.ProcessEnv } {
  const base = join(home, `run-${++runs}`);
  const cwd = join(base, 'work');
  mkdirSync(join(cwd, 'invoices'), { recursive: true });
  mkdirSync(join(base, 'home'), { recursive: true });
  mkdirSync(join(base, 'tmp'), { recursive: true });
  for (const f of BODIES) cpSync(join(root, 'fixtures/test-suite', f), join(cwd, 'invoices', f));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('FECR_') || k.startsWith('XDG_') || k.startsWith('GITHUB_') || k.startsWith('CI_') || k.startsWith('npm_') || k === 'DBUS_SESSION_BUS_ADDRESS' || k === 'CI' || k === 'GITLAB_CI') continue;
    env[k] = v;
  }
  Object.assign(env, { HOME: join(base, 'home'), PATH: `${bin}:${process.env.PATH}`, FECR_NO_KEYCHAIN: '1', RUNNER_TEMP: join(base, 'tmp'), CI: 'true' }, extraEnv);
  return { cwd, env };
}

function bash(args: string[], script: string, opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [...args, '-c', script], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, opts.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A recipe's script with the install line replaced (it must be there, as the doc prints it). */
function withoutInstall(script: string): string {
  return script
    .split('\n')
    .map((l) => (l.trim() === INSTALL ? `${l.replace(INSTALL, 'command -v fecr >/dev/null')}   # the recipe's install: this checkout's bin on PATH` : l))
    .join('\n');
}

const GITHUB_BASH = ['--noprofile', '--norc', '-eo', 'pipefail'];

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

/** Runs one GitHub job's `run:` steps in order on a fresh machine; returns the machine and the upload paths. */
async function runGithubJob(workflow: string, jobName: string, job: { steps: Step[]; env?: Record<string, string> }, extraEnv: Record<string, string> = {}) {
  const m = freshMachine({ GITHUB_ACTIONS: 'true', GITHUB_RUN_NUMBER: '7', GITHUB_WORKSPACE: '', ...extraEnv });
  m.env.GITHUB_WORKSPACE = m.cwd;
  const uploads: string[] = [];
  let stdout = '';
  for (const [i, step] of job.steps.entries()) {
    if (step.uses) {
      if (step.uses.startsWith('actions/upload-artifact@')) uploads.push(String(step.with?.path));
      continue;
    }
    expect(step.run, `${workflow} ${jobName} step ${i + 1}: run or uses`).toBeTypeOf('string');
    expect(step.run, 'a runnable recipe uses no ${{ }} expression').not.toMatch(/\$\{\{/);
    const r = await bash(GITHUB_BASH, withoutInstall(step.run!), { cwd: m.cwd, env: { ...m.env, ...job.env, ...step.env } });
    stdout += r.stdout;
    expect({ step: step.name ?? step.run, code: r.code }, `${workflow} job ${jobName}, step "${step.name ?? step.run}":\n--- stderr\n${r.stderr}\n--- stdout\n${r.stdout}`).toEqual({ step: step.name ?? step.run, code: 0 });
  }
  return { ...m, uploads, stdout };
}

describe('docs/ci.md recipes', () => {
  it('has the recipes, every YAML block is one of them and parses', () => {
    expect(marked.map((r) => r.name).sort()).toEqual(['git-hook', 'github', 'github-sandbox', 'gitlab', 'pre-commit']);
    expect(marked.filter((r) => r.lang === 'yaml')).toHaveLength(yamlBlocks);
    for (const r of marked.filter((x) => x.lang === 'yaml')) expect(() => yamlOf(r.name), `${DOC}:${r.line}`).not.toThrow();
    expect(() => parseYaml('a: [1\n', { strict: true })).toThrow();
    // The CI recipes install the published package, once per job.
    for (const name of ['github', 'gitlab', 'github-sandbox']) expect(recipe(name).text, name).toContain(INSTALL);
    expect(yamlOf('github').jobs['fecr-test'].steps.some((s: Step) => /\bfecr test invoices\/ --junit report\.xml\b/.test(s.run ?? ''))).toBe(true);
  });

  it('GitHub Actions: every job\'s run steps pass on a fresh machine; the report it uploads is a JUnit file of the bodies', async () => {
    const wf = yamlOf('github');
    expect(Object.keys(wf.jobs)).toEqual(['fecr-test', 'buyer-side']);
    const test = await runGithubJob('github', 'fecr-test', wf.jobs['fecr-test']);
    expect(test.uploads).toEqual(['report.xml']);
    const report = readFileSync(join(test.cwd, 'report.xml'), 'utf8');
    expect(report).toMatch(/<testsuites [^>]*tests="6"/);
    expect(report).toMatch(/<testsuites [^>]*failures="0"/);

    const buyer = await runGithubJob('github', 'buyer-side', wf.jobs['buyer-side']);
    // Three supplier documents imported, accepted (Hacienda accepted each MensajeReceptor) and their IVA counted.
    expect(buyer.stdout).toContain('imported 3 files: 3 valid, 0 refused; 3 new, 0 already imported\n');
    expect(buyer.stdout.match(/ aceptado: MensajeReceptor \d+ \(Mensaje 1\), Hacienda: aceptado$/gm)).toHaveLength(3);
    expect(buyer.stdout).toMatch(/^\d{4}-\d{2}: 3 counted \(/m);
  }, 180_000);

  it('GitHub Actions: a body whose expectation is wrong fails the job\'s test step (exit 3) with an ::error annotation on it', async () => {
    const wf = yamlOf('github');
    const m = freshMachine({ GITHUB_ACTIONS: 'true' });
    writeFileSync(join(m.cwd, 'invoices', '01-factura-servicios.expect.json'), JSON.stringify({ estado: 'rechazado', codigos: ['-53'] }));
    const step = (wf.jobs['fecr-test'].steps as Step[]).find((s) => /fecr test/.test(s.run ?? ''))!;
    const r = await bash(GITHUB_BASH, step.run!, { cwd: m.cwd, env: m.env });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/^::error file=invoices\/01-factura-servicios\.json/m);
  }, 120_000);

  it('GitLab CI: the job\'s script passes on a fresh machine and leaves its JUnit report', async () => {
    const ci = yamlOf('gitlab');
    const job = ci['fecr-test'] as { script: string[]; artifacts: { reports: { junit: string } } };
    expect(job.script).toContain(INSTALL);
    const m = freshMachine({ GITLAB_CI: 'true' });
    const r = await bash(['-eo', 'pipefail'], withoutInstall(job.script.join('\n')), { cwd: m.cwd, env: m.env });
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(readFileSync(join(m.cwd, job.artifacts.reports.junit), 'utf8')).toMatch(/<testsuites [^>]*tests="6"[^>]*/);
  }, 120_000);

  it('the git pre-commit hook lets a good commit through and refuses one whose expectation does not hold', async () => {
    const m = freshMachine({ GIT_AUTHOR_NAME: 'ci', GIT_AUTHOR_EMAIL: 'ci@example.com', GIT_COMMITTER_NAME: 'ci', GIT_COMMITTER_EMAIL: 'ci@example.com' });
    const hook = recipe('git-hook').text;
    expect(hook.startsWith('#!/bin/sh\n')).toBe(true);
    const setup = await bash(['-e'], 'git init -q . && git config commit.gpgsign false', { cwd: m.cwd, env: m.env });
    expect(setup.code, setup.stderr).toBe(0);
    writeFileSync(join(m.cwd, '.git/hooks/pre-commit'), hook);
    chmodSync(join(m.cwd, '.git/hooks/pre-commit'), 0o755);
    const good = await bash(['-e'], 'git add invoices && git commit -q -m "invoices"', { cwd: m.cwd, env: m.env });
    expect(good.code, good.stderr).toBe(0);
    // git runs hooks with their stdout on stderr.
    expect(good.stdout + good.stderr).toMatch(/6 documents: 6 passed, 0 failed/);

    writeFileSync(join(m.cwd, 'invoices', '02-tiquete-persona.expect.json'), JSON.stringify({ estado: 'rechazado', codigos: ['-53'] }));
    const bad = await bash([], 'git add invoices && git commit -q -m "wrong expectation"', { cwd: m.cwd, env: m.env });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toMatch(/✗ invoices\/02-tiquete-persona\.json/);
    const log = await bash([], 'git log --oneline | wc -l', { cwd: m.cwd, env: m.env });
    expect(log.stdout.trim()).toBe('1');
  }, 120_000);

  it('the pre-commit framework hook: its entry passes', async () => {
    const cfg = yamlOf('pre-commit') as { repos: { repo: string; hooks: { id: string; entry: string; language: string; pass_filenames: boolean }[] }[] };
    const hooks = cfg.repos.flatMap((r) => r.hooks);
    expect(hooks.map((h) => [h.id, h.language, h.pass_filenames])).toEqual([['fecr-test', 'system', false]]);
    const m = freshMachine();
    const r = await bash(['-e'], hooks[0]!.entry, { cwd: m.cwd, env: m.env });
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);

  it('the sandbox recipe: parses, valid bash, secrets from CI secrets, doctor before test; its profile step runs with stand-in secrets', async () => {
    const wf = yamlOf('github-sandbox');
    const job = wf.jobs.sandbox as { env: Record<string, string>; steps: Step[] };
    for (const [k, v] of Object.entries(job.env)) if (/HACIENDA_/.test(k)) expect(v, k).toBe(`\${{ secrets.${k} }}`);
    const runs = job.steps.filter((s) => s.run !== undefined);
    for (const s of runs) {
      const r = await bash(['-n'], s.run!, { cwd: home, env: process.env });
      expect(r.code, `${s.name}: ${r.stderr}`).toBe(0);
      expect(s.run).not.toMatch(/\$\{\{/);
    }
    const at = (re: RegExp) => runs.findIndex((s) => re.test(s.run!));
    expect(at(/^fecr doctor\b/m)).toBeGreaterThan(-1);
    expect(at(/^fecr doctor\b/m)).toBeLessThan(at(/^fecr test invoices\/ --profile sandbox\b/m));

    // The profile step (no network: config, the record from the secrets, register, numbers), with stand-in secrets.
    const profileStep = runs.find((s) => /fecr emisor register/.test(s.run!))!;
    const p12 = createTestP12({ id: '3101123456', type: '02', pin: '1234', name: 'SOFTWARE TICO SOCIEDAD ANONIMA' });
    const m = freshMachine({
      GITHUB_ACTIONS: 'true',
      GITHUB_RUN_NUMBER: '7',
      FECR_PROFILE: 'sandbox',
      ISSUER_ID: job.env.ISSUER_ID!,
      HACIENDA_USER: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
      HACIENDA_PASSWORD: 'pa$$ "word" \\ with quotes',
      HACIENDA_P12_BASE64: p12.toString('base64'),
      HACIENDA_P12_PIN: '1234',
    });
    const r = await bash(GITHUB_BASH, withoutInstall(profileStep.run!), { cwd: m.cwd, env: m.env });
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(existsSync(join(m.env.RUNNER_TEMP!, 'issuer.json'))).toBe(false);
    const nums = await bash(['-e'], 'fecr emisor numbers 3101123456 --json && fecr config get env', { cwd: m.cwd, env: m.env });
    expect(nums.code, nums.stderr).toBe(0);
    expect(nums.stdout).toMatch(/"FE"[^}]*7000/);
    expect(nums.stdout.trim().split('\n').at(-1)).toBe('sandbox');
  }, 120_000);
});
