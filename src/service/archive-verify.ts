/**
 * `fecr archive verify` (issues 29, 37.3, 37.4): reads an archive of service/archive.ts as a stream and checks that
 * the manifest and the files agree (every file listed present, its sha256 and size equal, no file the manifest does
 * not list, every field of a line as the signed XML says: ./archive-manifest.ts), every XML file's signature
 * (core/sign/verify.ts, at its own SigningTime when its certificate has since expired) and its signer (who must sign
 * it: core/sign/expected-signer.ts; Hacienda's answers chained to the seal's trust anchors, service/recibidos/trust.ts
 * SEAL_TRUST, fecr's test root only in an archive of env local), and its XSD (in batches per schema). Entry names that
 * are absolute or climb out are refused. Each difference names the file.
 *
 * Memory (./archive-limits.ts): one entry at a time, streamed: an XML file is held whole up to ARCHIVE_XML_MAX_BYTES
 * (4 MiB), any other file only hashed as it streams, up to ARCHIVE_OTHER_MAX_BYTES; an entry whose tar header says more
 * is refused before it is read, and the check stops there. tar metadata (PAX, GNU long names) is capped before
 * tar-stream buffers it (./archive-tar-guard.ts). XSD batches hold at most XSD_BATCH_BYTES. The name → sha256 and
 * facts of every file go to a temporary on-disk index (store/scratch-index.ts), and the manifest, the archive's last
 * entry, is checked line by line as it streams: memory does not grow with the archive.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { createXsdValidator, SCHEMAS, SCHEMA_NAMES, type SchemaName, type XsdValidator } from '../adapters/xsd/index.js';
import type { TrustStore } from '../core/sign/chain.js';
import { signedFacts, signerPartyCheck } from '../core/sign/expected-signer.js';
import { verifyXadesDocument } from '../core/sign/verify.js';
import { parseXmlDocument } from '../core/sign/xml-dom.js';
import type { VerifyReport } from '../core/sign/verify-report.js';
import { ScratchFileIndex } from '../store/scratch-index.js';
import { MANIFEST_NAME } from './archive.js';
import { ARCHIVE_MAX_PROBLEMS, ARCHIVE_OTHER_MAX_BYTES, ARCHIVE_XML_MAX_BYTES, clip, XSD_BATCH_BYTES, XSD_BATCH_FILES } from './archive-limits.js';
import { SANDBOX_SEAL_CN } from '../core/sign/expected-signer.js';
import { checkManifestLine, entryNameProblem, LineSplitter, StopArchive, type NotedFacts } from './archive-manifest.js';
import { tarMetaGuard } from './archive-tar-guard.js';
import { loadSealTrustStore, TEST_ROOT_SOURCE } from './recibidos/trust.js';

export interface ArchiveProblem {
  file: string;
  message: string;
}

export interface ArchiveVerifyResult {
  ok: boolean;
  files: number;
  signatures: number;
  xsd: number;
  problems: ArchiveProblem[];
  /** Problems beyond ARCHIVE_MAX_PROBLEMS, counted only. */
  moreProblems: number;
  /** What fecr cannot judge and says so without failing (the sandbox's seal: its CAs are not shipped). */
  warnings: ArchiveProblem[];
  /** The env every manifest line says (absent in archives of before issue 37). */
  env?: string;
  /** The trust anchors Hacienda's answers chained to, and how many each. */
  anchors: Array<{ name: string; source: string; testRoot: boolean; files: number }>;
}

/** The schema of an XML file from its root element and namespace; undefined when none of the v4.4 ones. */
function schemaOf(xml: string): SchemaName | undefined {
  const root = /<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)\b[^>]*?\sxmlns="([^"]*)"/.exec(xml.replace(/^\uFEFF?<\?xml[^>]*\?>/, ''));
  if (!root) return undefined;
  return SCHEMA_NAMES.find((n) => SCHEMAS[n].rootName === root[1] && SCHEMAS[n].namespace === root[2]);
}

function verifyAtSigningTime(dom: Document, xml: string, now: Date, trust: TrustStore | undefined): VerifyReport {
  const opts = { crossCheck: false, ...(trust ? { trust } : {}) };
  const r = verifyXadesDocument(dom, xml, now, opts);
  // An archive outlives its certificates: a signature valid when it was made stays valid.
  if (!r.ok && r.signingTime && !Number.isNaN(Date.parse(r.signingTime))) return verifyXadesDocument(dom, xml, new Date(r.signingTime), opts);
  return r;
}

/**
 * A full garbage collection once RECLAIM_EVERY_BYTES of XML (one file of the largest) have been read since the last
 * one. Each XML file leaves many times its size of garbage (its bytes, its text, its DOM: xmldom's parse of 2 MB makes
 * some 35 MB) in V8's large-object space, which V8 collects only as the old generation nears its limit. Measured with
 * `node bin/fecr.js archive verify` of 240 files of 2 MB: 137 MB of RSS without this (146 MB with their XSD), 94 MB
 * with it (105 MB), for 2.4 s more over 480 MB of XML. V8's `gc()` is exposed at run time (`--expose-gc` through
 * node:v8, a new context's global); where it cannot be, nothing happens.
 */
const RECLAIM_EVERY_BYTES = 2 * 1024 * 1024;
let collect: (() => void) | undefined | null = null;
function reclaim(): void {
  if (collect === null) {
    try {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    } catch {
      collect = undefined;
    }
  }
  collect?.();
}

/** Reads an entry: its sha256 and size, and its bytes when `keep` (an XML file). */
async function readEntry(stream: Readable, keep: boolean): Promise<{ sha256: string; size: number; data?: Buffer }> {
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    hash.update(c);
    size += c.length;
    if (keep) chunks.push(c);
  }
  return { sha256: hash.digest('hex'), size, ...(keep ? { data: Buffer.concat(chunks, size) } : {}) };
}

export interface VerifyArchiveOptions {
  now?: Date;
  xsd?: XsdValidator;
  /** More CAs for Hacienda's seal (files or folders, as FECR_RECIBIDOS_TRUST): the sandbox's, not shipped. */
  trust?: readonly string[];
}

export async function verifyArchive(file: string, opts: VerifyArchiveOptions = {}): Promise<ArchiveVerifyResult> {
  const now = opts.now ?? new Date();
  // The seal's anchors with fecr's test root: a chain to it is accepted only for a line of env local (archive-manifest.ts).
  const sealTrust = loadSealTrustStore('local', opts.trust ?? []);
  const problems: ArchiveProblem[] = [];
  let moreProblems = 0;
  const warnings: ArchiveProblem[] = [];
  const problem = (p: ArchiveProblem) => (problems.length < ARCHIVE_MAX_PROBLEMS ? problems.push({ file: clip(p.file), message: p.message }) : moreProblems++);
  const seen = new ScratchFileIndex();
  const envs = new Set<string>();
  const anchors = new Map<string, { name: string; source: string; testRoot: boolean; files: number }>();
  let manifestSeen = false;
  let xmlSinceReclaim = 0;
  let stopped: StopArchive | undefined;
  const stop = (name: string, message: string): StopArchive => (stopped ??= new StopArchive(name, message));
  let signatures = 0;
  let xsdChecked = 0;
  const pending = new Map<SchemaName, { files: { file: string; xml: string }[]; bytes: number }>();
  const xsd = opts.xsd ?? createXsdValidator({ persistentShell: true });
  const flush = async (schema: SchemaName): Promise<void> => {
    const group = pending.get(schema)?.files ?? [];
    pending.delete(schema);
    if (group.length === 0) return;
    const results = await xsd.validate(
      group.map((g) => g.xml),
      schema,
    );
    group.forEach((g, i) => {
      xsdChecked++;
      const r = results[i];
      if (r && !r.valid) problem({ file: g.file, message: `not valid against ${schema} v4.4: ${clip(r.errors[0]?.message ?? 'invalid', 300)}` });
    });
  };

  /** The XML checks of one file: signature, signer, facts (noted for the manifest), XSD queued. */
  const checkXml = async (name: string, xml: string): Promise<string | null> => {
    signatures++;
    // One DOM for the facts and the signature (fast-xml-parser on a 4 MB file costs 30 times the memory); no DTD.
    const dom = /<!DOCTYPE/i.test(xml) ? 'DOCTYPE declarations are not allowed' : parseXmlDocument(xml);
    if (typeof dom === 'string') {
      problem({ file: name, message: `not well-formed XML: ${clip(dom, 300)}` });
      return null;
    }
    const facts = signedFacts(dom);
    const isSeal = typeof facts !== 'string' && facts.type === 'MensajeHacienda';
    const r = verifyAtSigningTime(dom, xml, now, isSeal ? sealTrust : undefined);
    // The sandbox's seal, `… (SELLO ELECTRONICO)(PRUEBAS)` (NOTES §3.4), under CA SINPE - PERSONA JURIDICA - PRUEBAS
    // v2: fecr ships none of the sandbox's CAs (schemas/trust/SOURCES.md), so its chain cannot be judged. Where that is
    // all that fails, a warning, not a refusal: what fecr does not know warns. Such an answer names itself a test one
    // (of no fiscal validity), so it cannot pass for a production verdict.
    if (isSeal && !r.ok && SANDBOX_SEAL_CN.test(r.signer?.subject ?? '') && r.checks.every((c) => c.ok || c.name === 'certificate.chain')) {
      warnings.push({ file: clip(name), message: `Hacienda's sandbox seal (${clip(r.signer?.subject ?? '', 120)}) not chained: the sandbox's CAs are not shipped (--trust FILE|DIR adds them); a sandbox answer has no fiscal validity` });
      if (typeof facts === 'string') problem({ file: name, message: facts });
      return queueXsd(name, xml, typeof facts === 'string' ? facts : { ...facts, sandboxSeal: true });
    }
    if (!r.ok) {
      const failed = r.checks.filter((c) => !c.ok).map((c) => `${c.name}${c.detail ? `: ${clip(c.detail, 300)}` : ''}`);
      problem({ file: name, message: `signature does not verify (${failed.join('; ') || 'no signature'})` });
    }
    let noted: NotedFacts | undefined;
    if (typeof facts === 'string') problem({ file: name, message: facts });
    else {
      const who = signerPartyCheck(facts, r);
      if (!who.ok) problem({ file: name, message: `not signed by who must sign it: ${clip(who.detail, 300)}` });
      noted = facts;
      if (isSeal && r.anchor) {
        const testRoot = r.anchor.source === TEST_ROOT_SOURCE;
        noted = { ...facts, ...(testRoot ? { testRoot } : {}) };
        const a = anchors.get(r.anchor.fingerprint) ?? { name: r.anchor.name, source: r.anchor.source, testRoot, files: 0 };
        a.files++;
        anchors.set(r.anchor.fingerprint, a);
      }
    }
    return queueXsd(name, xml, noted);
  };
  /** The file queued for its XSD check; the facts noted for the manifest (JSON), or null. */
  const queueXsd = async (name: string, xml: string, noted: NotedFacts | string | undefined): Promise<string | null> => {
    const schema = schemaOf(xml);
    if (!schema) problem({ file: name, message: 'not a v4.4 document fecr knows the XSD of' });
    else {
      const group = pending.get(schema) ?? { files: [], bytes: 0 };
      group.files.push({ file: name, xml });
      group.bytes += xml.length;
      pending.set(schema, group);
      if (group.files.length >= XSD_BATCH_FILES || group.bytes >= XSD_BATCH_BYTES) await flush(schema);
    }
    return noted && typeof noted !== 'string' ? JSON.stringify(noted) : null;
  };

  const onManifestLine = (text: string, n: number) => {
    const v = checkManifestLine(seen, text, n, MANIFEST_NAME);
    for (const p of v.problems) problem(p);
    envs.add(v.env ?? '(none)');
  };

  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    void (async () => {
      const name = header.name;
      const size = header.size ?? 0;
      const nameProblem = entryNameProblem(name);
      if (nameProblem) {
        problem({ file: name, message: `refused: ${nameProblem}` });
        if (size > ARCHIVE_OTHER_MAX_BYTES) throw stop(name, `${size} bytes (over ${ARCHIVE_OTHER_MAX_BYTES}): the rest of the archive is not read`);
        await readEntry(stream, false);
        return;
      }
      if (header.type !== 'file') {
        problem({ file: name, message: `not a regular file (${header.type ?? 'unknown'})` });
        if (size > ARCHIVE_OTHER_MAX_BYTES) throw stop(name, `${size} bytes (over ${ARCHIVE_OTHER_MAX_BYTES}): the rest of the archive is not read`);
        await readEntry(stream, false);
        return;
      }
      if (name === MANIFEST_NAME) {
        // The manifest, last: checked line by line as it streams, against the files already indexed.
        if (manifestSeen) problem({ file: name, message: 'twice in the archive' });
        manifestSeen = true;
        const lines = new LineSplitter(onManifestLine, name);
        for await (const c of stream as AsyncIterable<Buffer>) {
          try {
            lines.push(c);
          } catch (e) {
            // Noted before the loop's end destroys the entry (the pipeline then fails with "Premature close").
            if (e instanceof StopArchive) stopped ??= e;
            throw e;
          }
        }
        lines.end();
        return;
      }
      if (manifestSeen) problem({ file: name, message: 'after the manifest (an archive of fecr ends with it)' });
      const isXml = name.endsWith('.xml');
      const cap = isXml ? ARCHIVE_XML_MAX_BYTES : ARCHIVE_OTHER_MAX_BYTES;
      if (size > cap) throw stop(name, `${size} bytes, over the ${cap}-byte cap of ${isXml ? 'an XML document' : 'a file'} in an archive: the rest of the archive is not read`);
      const e = await readEntry(stream, isXml);
      const facts = e.data ? await checkXml(name, e.data.toString('utf8')) : null;
      if (isXml && (xmlSinceReclaim += e.size) >= RECLAIM_EVERY_BYTES) {
        xmlSinceReclaim = 0;
        reclaim();
      }
      if (!seen.add(name, e.sha256, e.size, facts)) problem({ file: name, message: 'twice in the archive' });
    })().then(
      () => next(),
      (err: unknown) => next(err as Error),
    );
  });
  let files = 0;
  try {
    try {
      await pipeline(createReadStream(file), createGunzip(), tarMetaGuard(), extract);
      for (const schema of [...pending.keys()]) await flush(schema);
    } catch (thrown) {
      const e = stopped ?? thrown;
      if (e instanceof StopArchive) problem({ file: e.file, message: e.message });
      else problem({ file, message: `cannot be read as a .tar.gz: ${clip(e instanceof Error ? e.message : String(e), 300)}` });
    } finally {
      if (!opts.xsd) await xsd.close?.();
    }
    if (!manifestSeen) problem({ file: MANIFEST_NAME, message: 'missing' });
    else for (const name of seen.unlisted()) problem({ file: name, message: 'in the archive, not in the manifest' });
    if (envs.size > 1) problem({ file: MANIFEST_NAME, message: `its lines say more than one env (${[...envs].map((e) => clip(e, 20)).join(', ')})` });
    files = seen.size;
  } finally {
    seen.close();
  }
  const env = envs.size === 1 ? [...envs][0] : undefined;
  return {
    ok: problems.length === 0 && moreProblems === 0,
    files,
    signatures,
    xsd: xsdChecked,
    problems,
    moreProblems,
    warnings,
    ...(env && env !== '(none)' ? { env } : {}),
    anchors: [...anchors.values()],
  };
}
