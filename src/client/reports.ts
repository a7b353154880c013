/**
 * The accountant's reports (issue 29): `fecr report iva`. Local mode runs the use case (service/report-iva.ts) in this
 * process on the profile's data dir; remote mode asks the service's POST /api/reportes/iva (src/server/api-reportes.ts).
 * A figure belongs to one taxpayer (issue 36): one issuer's report, or one report per issuer; never a sum across them.
 */
import type { IvaReport } from '../service/report-iva.js';

export type { IvaReport, LeftOutSale } from '../service/report-iva.js';

export interface ReportsApi {
  /** One month's IVA figures (`mes` YYYY-MM) of one issuer (`emisor`, its identificación). */
  iva(mes: string, emisor: string, opts?: { plazoDias?: number }): Promise<IvaReport>;
  /** The same, one report per issuer of the account, by identificación. */
  ivaEach(mes: string, opts?: { plazoDias?: number }): Promise<IvaReport[]>;
}
