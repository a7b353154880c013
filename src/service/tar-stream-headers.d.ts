/** The header codec of tar-stream 2 (its extract.js uses it; no types ship for it), as archive-tar-guard.ts uses it. */
declare module 'tar-stream/headers.js' {
  export interface TarHeader {
    name: string;
    size: number;
    type: string | null;
  }
  const headers: {
    decode(buf: Buffer, filenameEncoding?: string, allowUnknownFormat?: boolean): TarHeader | null;
    decodePax(buf: Buffer): Record<string, string>;
  };
  export default headers;
}
