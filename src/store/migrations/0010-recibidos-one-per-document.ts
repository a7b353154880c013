/**
 * Received documents keyed by the document, not by the file's bytes (issue 25): the same supplier comprobante imported
 * again with other bytes (a UTF-8 BOM, a trailing newline) used to become a second row, answered twice and counted
 * twice by the monthly summary.
 *
 *  - `recibidos.emisor_consecutivo`: the clave's issuer identificación and consecutivo (positions 10–41), filled from
 *    the clave for the rows there are.
 *  - Duplicates already stored (several rows that are not `invalido` with the same account and issuer + consecutivo,
 *    which includes the same clave): one is kept, the earliest row that was answered (its MensajeReceptor is the one
 *    Hacienda has; when several were answered, the earliest answer), else the earliest row. The others become
 *    `invalido` with a finding naming the row kept and the state they had; their rows, bytes and MensajeReceptor
 *    documents stay (webhook deliveries point at them), but they no longer count in the summary nor can be answered.
 *  - Refused rows (`invalido` before this migration) keep their findings and sha256, not their bytes: `xml` emptied,
 *    as refused files are stored from now on.
 *  - Unique indexes, on both stores, over the rows that are not `invalido`: (account_id, clave) and
 *    (account_id, emisor_consecutivo). A refused copy never blocks the genuine document.
 */
import { sql, type Kysely, type Migration } from 'kysely';

interface Row {
  id: number;
  account_id: number;
  emisor_consecutivo: string;
  clave: string | null;
  estado: string;
  mensaje_document_id: number | null;
  decided_at: number | string | null;
  hallazgos_json: string;
}

export const recibidosOnePerDocument: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('recibidos').addColumn('emisor_consecutivo', 'text').execute();
    await sql`UPDATE recibidos SET emisor_consecutivo = substr(clave, 10, 32) WHERE clave IS NOT NULL AND length(clave) = 50`.execute(db);
    await sql`UPDATE recibidos SET xml = '' WHERE estado = 'invalido'`.execute(db);

    const rows = (
      await sql<Row>`SELECT id, account_id, emisor_consecutivo, clave, estado, mensaje_document_id, decided_at, hallazgos_json FROM recibidos
        WHERE estado <> 'invalido' AND emisor_consecutivo IS NOT NULL ORDER BY id`.execute(db)
    ).rows;
    const groups = new Map<string, Row[]>();
    for (const r of rows) {
      const k = `${r.account_id}:${r.emisor_consecutivo}`;
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const now = Date.now();
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const answered = group.filter((r) => r.mensaje_document_id !== null).sort((a, b) => Number(a.decided_at ?? 0) - Number(b.decided_at ?? 0) || a.id - b.id);
      const keep = answered[0] ?? group[0]!;
      for (const r of group) {
        if (r.id === keep.id) continue;
        const findings = [
          ...(JSON.parse(r.hallazgos_json) as unknown[]),
          {
            path: 'clave',
            message: `the same document as the received row ${keep.id} (clave ${keep.clave}), imported again from other bytes; that row is kept (migration 0010: it was ${r.estado}${r.mensaje_document_id !== null ? `, answered by MensajeReceptor document ${r.mensaje_document_id}` : ''})`,
          },
        ];
        await sql`UPDATE recibidos SET estado = 'invalido', hallazgos_json = ${JSON.stringify(findings)}, updated_at = ${now} WHERE id = ${r.id}`.execute(db);
      }
    }

    await sql`CREATE UNIQUE INDEX recibidos_account_clave_unique ON recibidos (account_id, clave) WHERE estado <> 'invalido'`.execute(db);
    await sql`CREATE UNIQUE INDEX recibidos_account_emisor_consecutivo ON recibidos (account_id, emisor_consecutivo) WHERE estado <> 'invalido'`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('recibidos_account_emisor_consecutivo').execute();
    await db.schema.dropIndex('recibidos_account_clave_unique').execute();
    await db.schema.alterTable('recibidos').dropColumn('emisor_consecutivo').execute();
  },
};
