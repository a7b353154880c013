/**
 * The account's rules for suppliers' mail (issue 30, `fecr recibidos watch --rules FILE`): per supplier (its
 * identificación, leading zeros ignored), what to do with a comprobante imported from its mail:
 *
 *   hold    imported and left unanswered, for a person (`fecr recibidos list --due`); the default
 *   accept  answered at once with MensajeReceptor 1 (the aceptar use case, service/recibidos/decide.ts), with
 *           `condicionImpuesto` when given (Nota 18 of the ANEXOS: 01..05; decide.ts's default 01, and for 04 no IVA
 *           credited)
 *
 *   { "default": "hold",
 *     "suppliers": { "3101987654": "accept",
 *                    "4000001021": { "action": "accept", "condicionImpuesto": "04" } } }
 *
 * A rule file that cannot be used is refused whole, one finding per problem; nothing is answered by a guess.
 */
import { z } from 'zod';
import type { Finding } from '../../core/model.js';

export type MailRule = { action: 'hold' } | { action: 'accept'; condicionImpuesto?: string };

const Action = z.enum(['hold', 'accept']);
const Rule = z.union([
  Action,
  z
    .object({
      action: Action,
      // Nota 18: 01 crédito IVA, 02 crédito parcial, 03 bienes de capital, 04 gasto corriente sin crédito, 05 proporcionalidad.
      condicionImpuesto: z.string().regex(/^0[1-5]$/, 'must be 01, 02, 03, 04 or 05 (Nota 18)').optional(),
    })
    .strict(),
]);
const RulesFile = z
  .object({
    default: Rule.optional(),
    suppliers: z.record(z.string().regex(/^\d{9,12}$/, 'a supplier is its identificación: 9 to 12 digits'), Rule).optional(),
  })
  .strict();

export interface MailRules {
  ruleFor(emisor: string | null): MailRule;
}

const HOLD: MailRule = { action: 'hold' };
const stripZeros = (s: string) => s.replace(/^0+/, '');

function normal(r: z.infer<typeof Rule>): MailRule {
  const x = typeof r === 'string' ? { action: r } : r;
  if (x.action === 'hold') return HOLD;
  return { action: 'accept', ...('condicionImpuesto' in x && x.condicionImpuesto ? { condicionImpuesto: x.condicionImpuesto } : {}) };
}

/** No rules: every comprobante held. */
export const HOLD_ALL: MailRules = { ruleFor: () => HOLD };

export class MailRulesError extends Error {
  constructor(
    message: string,
    readonly findings: Finding[],
  ) {
    super(message);
  }
}

/** The rules of a parsed JSON file; throws MailRulesError with one finding per problem. */
export function parseMailRules(json: unknown): MailRules {
  const r = RulesFile.safeParse(json);
  if (!r.success) {
    throw new MailRulesError(
      'the rules file cannot be used',
      r.error.issues.map((i) => ({ path: i.path.length ? i.path.join('.') : 'rules', message: i.message })),
    );
  }
  const fallback = r.data.default ? normal(r.data.default) : HOLD;
  const bySupplier = new Map(Object.entries(r.data.suppliers ?? {}).map(([k, v]) => [stripZeros(k), normal(v)]));
  return { ruleFor: (emisor) => (emisor ? bySupplier.get(stripZeros(emisor)) : undefined) ?? fallback };
}
