/** The flags of the lookup verbs (cabys, contribuyente, exoneracion). */
export interface LookupFlags {
  json?: boolean;
  /** cabys, exoneracion: the table as CSV */
  csv?: boolean;
}
