// Issue 36 item 7, the pure part: a comprobante Hacienda rejected owes nothing whatever references it (its
// replacement carries the sale), one annulled in full owes nothing once the annulment is accepted (nothing committed
// while it is on its way), and what replaced or annulled it is named (the latest standing one, with its state).
import { describe, expect, it } from 'vitest';
import { balanceOf, settledBy, type ReferenceLink } from '../src/core/corrections/references.js';

const link = (clave: string, kind: string, state: string, codigo: string | null, monto: string | null): ReferenceLink => ({ clave, kind, state, codigo, monto });

describe('balanceOf with the comprobante state, settledBy', () => {
  it('rejected (or error): 0 decided and committed, even with a replacement of its full amount; the replacement named', () => {
    const links = [link('R1', 'FE', 'rechazado', '16', '219419.03000'), link('R2', 'FE', 'aceptado', '16', '219419.03000')];
    expect(balanceOf('219419.03000', links, 'rechazado')).toEqual({ decided: '0.00000', committed: '0.00000' });
    expect(balanceOf('219419.03000', [], 'error')).toEqual({ decided: '0.00000', committed: '0.00000' });
    // Without the state (the callers that check it first): the arithmetic of issue 30, a replacement counting nothing.
    expect(balanceOf('219419.03000', links)).toEqual({ decided: '219419.03000', committed: '219419.03000' });
    expect(settledBy(links)).toEqual({ reemplazadoPor: { clave: 'R2', estado: 'aceptado' } });
    expect(settledBy([link('R1', 'FE', 'rechazado', '16', null)])).toEqual({});
  });

  it('annulled by an NC 01 or 13: 0 once accepted; committed 0 while on its way; a partial NC still counts its amount', () => {
    expect(balanceOf('1000.00000', [link('N', 'NC', 'aceptado', '01', '999.00000')], 'aceptado')).toEqual({ decided: '0.00000', committed: '0.00000' });
    expect(balanceOf('1000.00000', [link('N', 'NC', 'enviado', '13', '1000.00000')], 'aceptado')).toEqual({ decided: '1000.00000', committed: '0.00000' });
    expect(balanceOf('1000.00000', [link('N', 'NC', 'aceptado', '03', '400.00000')], 'aceptado')).toEqual({ decided: '600.00000', committed: '600.00000' });
    expect(balanceOf('1000.00000', [link('N', 'NC', 'rechazado', '01', '1000.00000')], 'aceptado')).toEqual({ decided: '1000.00000', committed: '1000.00000' });
    expect(settledBy([link('N', 'NC', 'enviado', '01', '1000.00000')])).toEqual({ anuladoPor: { clave: 'N', estado: 'enviado' } });
  });
});
