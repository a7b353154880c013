// The one prompt module (src/cli/prompt.ts): never asks without a terminal; Ctrl-C is exit 130.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { profileBackend, type Ctx } from '../src/cli/context.js';
import { EXIT, UsageError } from '../src/cli/errors.js';
import { Cancelled, confirm, input, password } from '../src/cli/prompt.js';

function ctxWith(tty: boolean) {
  const stdin = new PassThrough();
  const stderr = new PassThrough();
  let shown = '';
  stderr.on('data', (c: Buffer) => (shown += c.toString()));
  const ctx: Ctx = {
    io: { stdin, stdout: new PassThrough(), stderr, env: {}, cwd: '/', stdoutIsTTY: false, stdinIsTTY: tty },
    debug: false,
    now: () => new Date(),
    randomBytes: (n) => new Uint8Array(n),
    backend: profileBackend,
  };
  return { ctx, stdin, shown: () => shown };
}

describe('src/cli/prompt.ts', () => {
  it('without a terminal: a usage error, and nothing is shown', async () => {
    const { ctx, shown } = ctxWith(false);
    for (const ask of [() => input(ctx, { message: 'Name:' }), () => password(ctx, { message: 'Secret:' }), () => confirm(ctx, { message: 'Sure?' })]) {
      const e = await ask().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UsageError);
      expect((e as UsageError).exitCode).toBe(EXIT.usage);
    }
    expect(shown()).toBe('');
  });

  it('asks on stderr and answers what was typed; a password is not echoed', async () => {
    const { ctx, stdin, shown } = ctxWith(true);
    const name = input(ctx, { message: 'Name:' });
    setTimeout(() => stdin.write('acme\r'), 50);
    expect(await name).toBe('acme');
    const secret = password(ctx, { message: 'Secret:' });
    setTimeout(() => stdin.write('s3cr3t-value\r'), 50);
    expect(await secret).toBe('s3cr3t-value');
    expect(shown()).toContain('Name:');
    expect(shown()).not.toContain('s3cr3t-value');
  });

  it('Ctrl-C: Cancelled, exit 130 (EXIT.interrupted)', async () => {
    const { ctx, stdin } = ctxWith(true);
    const name = input(ctx, { message: 'Name:' });
    setTimeout(() => stdin.write('\u0003'), 50);
    const e = await name.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Cancelled);
    expect((e as Cancelled).exitCode).toBe(130);
  });
});
