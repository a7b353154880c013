/** `fecr documents list`: the documents of the profile's account, newest first. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags } from '../../cli/table.js';
import type { DocumentEstado } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import { printStatusTable } from './shared.js';
import { DOCUMENT_STATES } from '../../core/lifecycle.js';

export interface ListFlags {
  state?: string;
  since?: string;
  issuer?: string;
  limit?: string;
  json?: boolean;
  csv?: boolean;
}

const STATES: readonly DocumentEstado[] = DOCUMENT_STATES;
const DATE = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:\d{2})?$/;

/** An ISO 8601 date or date-time that names a real instant (offset optional). */
function isIsoDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m || (m[5] && !m[2])) return false;
  return !Number.isNaN(Date.parse(`${m[1]}${m[2] ?? 'T00:00'}${m[5] ?? 'Z'}`));
}

export async function list(ctx: Ctx, opts: ListFlags): Promise<void> {
  checkTableFlags(opts);
  const state = opts.state?.trim().toLowerCase();
  if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw new UsageError(`--state must be one of ${STATES.join(', ')}`);
  const since = opts.since?.trim();
  if (since !== undefined && !isIsoDate(since)) {
    throw new UsageError(`--since must be an ISO 8601 date or date-time, e.g. 2026-03-01 or 2026-03-01T08:00:00-06:00 (got "${opts.since}")`);
  }
  const issuer = opts.issuer?.trim();
  if (issuer !== undefined && !/^\d{9,12}$/.test(issuer)) throw new UsageError(`--issuer must be an identificación, 9 to 12 digits (got "${opts.issuer}")`);
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
  }
  const rows = await withBackend(ctx, (b) =>
    b.listDocuments({
      ...(state !== undefined ? { estado: state as DocumentEstado } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(issuer !== undefined ? { emisor: issuer } : {}),
    }),
  );
  if (opts.json) printJson(ctx, rows);
  else printStatusTable(ctx, rows, { csv: opts.csv });
}
