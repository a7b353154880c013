/**
 * The accountant's reports (issue 29): `fecr report iva`. Local mode runs the use case (service/report-iva.ts) in this
 * process on the profile's data dir; remote mode asks the service's POST /api/reportes/iva (src/server/api-reportes.ts).
 */
import type { IvaReport } from '../service/report-iva.js';

export type { IvaReport, LeftOutSale } from '../service/report-iva.js';

export interface ReportsApi {
  /** One month's IVA figures (`mes` YYYY-MM), of one issuer (`emisor`, its identificación) or of the account's. */
  iva(mes: string, emisor?: string, opts?: { plazoDias?: number }): Promise<IvaReport>;
}
