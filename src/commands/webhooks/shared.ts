/** What `fecr webhooks list|replay` share: their flags, an account's id by its name. */
import { UserError } from '../../cli/errors.js';
import type { ServiceContext } from '../../service/context.js';

export interface WebhookFlags {
  account: string;
  dataDir?: string;
  state?: string;
  limit?: string;
  json?: boolean;
  /** list: the table as CSV */
  csv?: boolean;
}

export async function accountId(svc: ServiceContext, base: string): Promise<number> {
  const { findAccount } = await import('../../service/accounts.js');
  const a = await findAccount(svc, base);
  if (!a) throw new UserError(`no account named ${base}`);
  return a.id;
}
