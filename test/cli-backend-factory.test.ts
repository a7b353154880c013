// The backend factory on the CLI context (Ctx.backend, as cli/cli's Factory): a command run in-process with a
// context whose factory hands it a small in-memory Backend. No profile, no data dir, no service: the command
// parses its flags, takes the backend from the context, calls it and renders what it answered.
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { BackendError, type Backend, type DocumentStatus } from '../src/client/backend.js';

const CLAVE = '50601012600310112345600100001010000000001100000001';

function status(estado: DocumentStatus['estado'], mensaje: number | null): DocumentStatus {
  return {
    clave: CLAVE,
    estado,
    mensaje,
    detalleMensaje: null,
    kind: 'factura',
    numeroConsecutivo: '00100001010000000001',
    fechaEmision: '2026-01-01T10:00:00-06:00',
    totalComprobante: '11300.00000',
    moneda: 'CRC',
    receptorNombre: 'Cliente Uno',
    createdAt: '2026-01-01T16:00:00.000Z',
    decidedAt: mensaje === null ? null : '2026-01-01T16:00:05.000Z',
  };
}

/** An in-memory Backend: the documents it knows by clave; what the command asked, and whether it was closed. */
class StubBackend implements Backend {
  readonly mode = 'remote' as const;
  readonly asked: string[] = [];
  closed = false;
  constructor(private readonly docs: Map<string, DocumentStatus | Error>) {}

  async status(clave: string): Promise<DocumentStatus | null> {
    this.asked.push(`status ${clave}`);
    const d = this.docs.get(clave);
    if (d instanceof Error) throw d;
    return d ?? null;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  private none(what: string): never {
    throw new Error(`the stub backend has no ${what}`);
  }
  registerIssuer(): Promise<void> {
    return this.none('registerIssuer');
  }
  updateIssuer(): Promise<void> {
    return this.none('updateIssuer');
  }
  getIssuer(): Promise<null> {
    return this.none('getIssuer');
  }
  listIssuers(): Promise<never[]> {
    return this.none('listIssuers');
  }
  submit(): Promise<{ clave: string }> {
    return this.none('submit');
  }
  waitForVerdict(): Promise<DocumentStatus> {
    return this.none('waitForVerdict');
  }
  file(): Promise<Buffer | null> {
    return this.none('file');
  }
  listDocuments(): Promise<DocumentStatus[]> {
    return this.none('listDocuments');
  }
  emailDocument(): Promise<never> {
    return this.none('emailDocument');
  }
  cabys(): Promise<never[]> {
    return this.none('cabys');
  }
  taxpayer(): Promise<null> {
    return this.none('taxpayer');
  }
  exoneracion(): Promise<null> {
    return this.none('exoneracion');
  }
  webhookUrl(): Promise<string | null> {
    return this.none('webhookUrl');
  }
  setWebhookUrl(): Promise<{ secret: string | null }> {
    return this.none('setWebhookUrl');
  }
  keepWorking(): Promise<void> {
    return this.none('keepWorking');
  }
  deliverQueuedMail(): Promise<number> {
    return this.none('deliverQueuedMail');
  }
}

async function run(args: string[], backend: StubBackend) {
  const opened: unknown[] = [];
  // No HOME, no profile: the command can only reach the backend it is handed.
  const r = await runCli(args, {
    env: {},
    cwd: '/nonexistent',
    backend: async (ctx, opts) => {
      opened.push({ ...opts, profile: ctx.profile });
      return backend;
    },
  });
  return { ...r, opened };
}

describe('a command takes its backend from the context', () => {
  it('fecr status CLAVE --json prints what the backend answered, exit 0, and closes it', async () => {
    const b = new StubBackend(new Map([[CLAVE, status('aceptado', 1)]]));
    const r = await run(['status', CLAVE, '--json'], b);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(status('aceptado', 1));
    expect(b.asked).toEqual([`status ${CLAVE}`]);
    expect(r.opened).toHaveLength(1);
    expect(b.closed).toBe(true);
  });

  it('a rejected document: its estado on stdout, exit 3', async () => {
    const b = new StubBackend(new Map([[CLAVE, status('rechazado', 3)]]));
    const r = await run(['status', CLAVE], b);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/rechazado/);
    expect(r.stderr).toContain(`Hacienda rejected ${CLAVE}`);
  });

  it('a clave the backend does not know: one line, exit 1', async () => {
    const r = await run(['status', CLAVE], new StubBackend(new Map()));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: no document with clave ${CLAVE}\n`);
  });

  it("the backend's errors still become the CLI's (withBackend): an auth refusal is exit 4", async () => {
    const b = new StubBackend(new Map([[CLAVE, new BackendError('auth', 'session refused by the stub')]]));
    const r = await run(['status', CLAVE], b);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('error: session refused by the stub\n');
    expect(b.closed).toBe(true);
  });

  it('the factory receives the context of the run, which carries the global --profile', async () => {
    const b = new StubBackend(new Map([[CLAVE, status('aceptado', 1)]]));
    const named = await run(['--profile', 'hosted', 'status', CLAVE], b);
    expect(named.code, named.stderr).toBe(0);
    expect(named.opened).toEqual([{ profile: 'hosted' }]);
    const after = await run(['status', CLAVE, '--profile', 'other'], b);
    expect(after.opened).toEqual([{ profile: 'other' }]);
    expect((await run(['status', CLAVE], b)).opened).toEqual([{ profile: undefined }]);
  });

  it('a usage error is found before any backend is opened', async () => {
    const r = await run(['status', 'not-a-clave'], new StubBackend(new Map()));
    expect(r.code).toBe(2);
    expect(r.opened).toEqual([]);
  });
});
