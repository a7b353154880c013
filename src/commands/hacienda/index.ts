/** `fecr hacienda serve`: the local emulator of Hacienda's APIs. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { ServeEmulatorFlags } from './serve.js';
import type { SuppliersIssueFlags } from './suppliers.js';

export function defineHaciendaCommands(program: Command, ctx: Ctx): void {
  const hacienda = program.command('hacienda').description("Hacienda's APIs: the local emulator and its test suppliers");
  hacienda
    .command('serve')
    .description('run the local emulator (IdP, recepción, public queries); prints {"url": …} on stdout when ready')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', '0')
    .option('--users <file>', 'strict IdP: JSON file {username: password} (default: any non-empty credentials)')
    .option('--data <file>', 'keep the state in this SQLite file across restarts (default: in memory)')
    .option('--delay <ms>', 'processing time from reception to verdict', '200')
    .option('--latency <ms>', 'fault: added latency per request')
    .option('--error-rate <fraction>', 'fault: fraction of requests answered 503')
    .option('--rate-limit-rate <fraction>', 'fault: fraction of requests answered 429')
    .option('--drop-rate <fraction>', 'fault: fraction of connections dropped before processing')
    .option('--lost-response-rate <fraction>', 'fault: fraction processed whose answer is lost')
    .option('--idp-outage', 'fault: the IdP answers 503')
    .option('--reject <clave...>', 'fault: always reject these claves (by content: a --faults file)')
    .option('--index-delay <ms>', 'fault: GET /recepcion/{clave} answers 404 for this long after the POST was accepted (as the real sandbox)')
    .option('--quota-per-minute <n>', 'fault: POST /recepcion answers 429 with Retry-After once an issuer posted n documents this minute (no default: Hacienda publishes no figure)')
    .option('--faults <file>', 'fault file (JSON, docs/faults.md): rates, delays, quota, rejections by numeroReferencia/emisor/kind/detalle; the fault flags override it')
    .option('--seed <n>', 'seed for the random faults (reproducible runs)')
    .option('--validation-threads <n>', 'worker threads that validate received documents (0 = on the event loop; default cores - 1, from 1 to 2)')
    .option('--supplier-invoices <identificacion>', "test suppliers issue signed invoices to this receptor at start (the buyer's side: fecr recibidos import)")
    .option('--supplier-count <n>', 'how many supplier invoices --supplier-invoices issues', '3')
    .option('--supplier-out <dir>', 'write the supplier invoices there as <clave>.xml (default: only their claves on stdout)')
    .action(async (opts: ServeEmulatorFlags) => (await import('./serve.js')).run(ctx, opts));
  const suppliers = hacienda.command('suppliers').description("the emulator's test suppliers: signed comprobantes to a buyer, for fecr recibidos import");
  suppliers
    .command('issue')
    .description("test suppliers issue comprobantes to --to, written as <clave>.xml; waits until the emulator has decided them (then they can be imported and answered). Which emulator: --url, else the profile's (a local profile in env local: its embedded one)")
    .requiredOption('--to <identificacion>', "the buyer's identificación (the receptor)")
    .option('--count <n>', 'how many documents (1-1000)', '1')
    .option('--out <dir>', 'write them there as <clave>.xml (default: only their claves on stdout)')
    .option('--tipo <kind>', 'FE, NC, ND or FEC', 'FE')
    .option('--proveedor <identificacion>', 'this test supplier (default: one picked per document)')
    .option('--referencia <clave>', 'NC/ND: the clave of the document it corrects (one this emulator received)')
    .option('--url <url>', 'a running fecr hacienda serve (default: the embedded emulator of the profile, see --profile)')
    .option('--timeout <seconds>', "how long to wait for the emulator's verdict on them (default 60; 0: do not wait)")
    .option('--json', 'print as JSON')
    .action(async (opts: SuppliersIssueFlags) => (await import('./suppliers.js')).run(ctx, opts));
}
