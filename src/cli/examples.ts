/**
 * The Examples section of every command's --help, in one map: command path ("" for fecr itself, "send",
 * "emisor register", …) → example lines, each a whole `fecr …` command with a short comment. buildProgram
 * (program.ts) appends them to each command's help; test/cli-help.test.ts fails for a command without an entry and
 * parses every example against the command tree (real commands, real flags, the arguments each takes). A new
 * command only adds its entry here. Part of the CLI shell bundle (scripts/bundle.mjs): plain data, no imports.
 */

/** [command line, comment]. */
export type Example = readonly [string, string];

export const EXAMPLES: Readonly<Record<string, readonly Example[]>> = {
  '': [
    ['fecr demo', 'offline, end to end: test issuer, every kind, verdicts, files'],
    ['fecr emisor register', 'register your issuer (interactive on a terminal)'],
    ['fecr send factura.json --wait', "sign, send and wait for Hacienda's verdict"],
    ['fecr batch facturas.csv --wait', 'many documents from a CSV, JSON or JSONL file'],
    ['fecr help exit-codes', 'what each exit code means'],
  ],
  validate: [
    ['fecr validate factura.json', "as Hacienda would judge it, offline: schema, rules, totals, the v4.4 XSD, the catalogues (-400, -408) and the date (-53)"],
    ['fecr validate factura.json --strict', 'warnings fail too (exit 1): for a CI gate'],
    ['fecr validate factura.json --issuer issuer.json', "also the checks that need the issuer's record"],
    ['fecr validate - --json < factura.json', 'the body from stdin, the findings as JSON'],
    ['fecr validate factura.json --no-complete', 'every figure must be in the body, as the client API takes it'],
  ],
  complete: [
    ['fecr complete factura.json', 'the body with every figure it leaves out computed (subTotal, montoTotal, impuestos, the resumen)'],
    ['fecr complete factura.json > factura-completa.json', 'written out, e.g. for the client API'],
    ['fecr complete - --encoding windows-1252 < factura.json', 'from stdin, a file Excel on Windows wrote'],
  ],
  xml: [
    ['fecr xml factura.json --issuer issuer.json --out factura.xml', 'build and sign the XML without sending it'],
    ['fecr xml factura.json --issuer issuer.json --out factura.xml --json', 'the same, and print clave and consecutive as JSON'],
  ],
  verify: [
    ['fecr verify factura.xml', 'signature, digests, certificate, v4.4 policy, the signer (the Emisor) and XSD'],
    ['fecr verify respuesta-hacienda.xml --env local', "a MensajeHacienda of the local emulator (fecr's test root as Hacienda's seal anchor)"],
    ['fecr verify factura.xml --no-xsd --json', 'the signature only, the report as JSON'],
  ],
  certs: [
    ['fecr certs create-test --id 3101123456 --type 02 --pin 1234 --out issuer.p12', 'a test .p12 for a company'],
    ['fecr certs show issuer.p12 --pin-stdin < pin.txt', "a .p12's subject, serial and validity"],
  ],
  'certs create-test': [
    ['fecr certs create-test --id 3101123456 --type 02 --pin 1234 --out issuer.p12', 'a company (cédula jurídica)'],
    ['fecr certs create-test --id 114560789 --type 01 --pin 1234 --out persona.p12 --days 365', 'a person, valid for a year'],
  ],
  'certs show': [
    ['fecr certs show issuer.p12 --pin-stdin < pin.txt', 'subject, serial and validity'],
    ['fecr certs show issuer.p12 --pin-stdin --json < pin.txt', 'the same as JSON'],
  ],
  init: [
    ['fecr init', 'issuer.json and a body of each kind here, for the test issuer'],
    ['fecr init facturas --p12 issuer.p12 --pin-stdin < pin.txt', 'in ./facturas, for the issuer of your .p12'],
    ['fecr init --force', 'write them again over the existing files'],
  ],
  doctor: [
    ['fecr doctor', 'the profile in use: config, data dir, certificates, the Hacienda it sends to, what is owed'],
    ['fecr doctor --profile sandbox', "another profile: its credentials at Hacienda's IdP, the reception API, the activity codes"],
    ['fecr doctor --json', 'every check as data; exit 0 when none fails'],
  ],
  demo: [
    ['fecr demo', 'profile "demo", files in ./fecr-demo'],
    ['fecr demo --out /tmp/demo --json', 'elsewhere, the results as JSON'],
  ],
  hacienda: [
    ['fecr hacienda serve', 'the Hacienda emulator alone, on a free port'],
    ['fecr hacienda serve --port 8443 --data emulator.db', 'fixed port, state kept across restarts'],
  ],
  'hacienda serve': [
    ['fecr hacienda serve', 'any free port; prints {"url": …}'],
    ['fecr hacienda serve --port 8443 --data emulator.db', 'fixed port, state kept in a file'],
    ['fecr hacienda serve --error-rate 0.1 --latency 500 --seed 7', 'with faults, reproducibly'],
  ],
  'hacienda suppliers': [
    ['fecr hacienda suppliers issue --to 3101123456 --count 5 --out entrada', "5 supplier invoices to the profile's issuer, from its embedded emulator"],
    ['fecr hacienda suppliers issue --url http://127.0.0.1:8090 --to 3101123456 --out entrada', 'from a running fecr hacienda serve'],
  ],
  'hacienda suppliers issue': [
    ['fecr hacienda suppliers issue --to 3101123456 --count 5 --out entrada', 'then: fecr recibidos import entrada, fecr recibidos aceptar CLAVE'],
    ['fecr hacienda suppliers issue --to 3101123456 --tipo NC --referencia CLAVE --out entrada', 'a credit note about a document the emulator received'],
    ['fecr hacienda suppliers issue --url http://127.0.0.1:8090 --to 3101123456 --json', 'from a running fecr hacienda serve; the claves and states as JSON'],
  ],
  serve: [
    ['fecr serve', 'auth server, API, worker and emulator on SQLite in the data dir'],
    ['fecr serve --data-dir ./srv --auth-port 8081 --api-port 8080', 'own data dir and ports'],
    ['fecr serve --env sandbox --database postgres://fecr@db/fecr --role api', 'one API process of a hosted deployment'],
    ["fecr serve --smtp-url smtps://USER:PASSWORD@smtp.example.com --mail-from 'ACME <facturas@acme.cr>'", 'mail each accepted comprobante to its receptor'],
  ],
  accounts: [
    ['fecr accounts create acme --password-stdin < password.txt', 'an account of the service'],
    ['fecr accounts list', 'every account'],
  ],
  'accounts create': [
    ['fecr accounts create acme --password-stdin < password.txt', 'the password from a file (or a pipe)'],
    ['fecr accounts create acme --password-stdin --webhook-url https://example.com/hook --env sandbox < password.txt', 'with a webhook (its secret printed once)'],
  ],
  'accounts list': [
    ['fecr accounts list', "the accounts of this machine's data dir"],
    ['fecr accounts list --data-dir ./srv --json', 'of another data dir, as JSON'],
  ],
  'accounts disable': [['fecr accounts disable acme', 'its tokens stop working at once']],
  'accounts enable': [['fecr accounts enable acme', 'allow it to log in again']],
  'accounts passwd': [['fecr accounts passwd acme --password-stdin < new-password.txt', 'a new password']],
  'accounts set': [
    ['fecr accounts set acme --webhook-url https://example.com/hook', 'a new webhook URL (and its new secret)'],
    ['fecr accounts set acme --webhook-url https://example.com/hook --env production', 'checked as a production service would'],
  ],
  'accounts mail': [
    ['fecr accounts mail acme', "the account's SMTP server and sender (never the password)"],
    ["fecr accounts mail acme --smtp-url smtps://facturas%40acme.cr:CLAVE@smtp.example.com --from 'ACME <facturas@acme.cr>'", 'its own server, the password sealed'],
    ['fecr accounts mail acme --clear', "back to the service's default (or the outbox)"],
  ],
  keys: [
    ['fecr keys rotate', 'a new token signing key'],
    ['fecr keys list', 'the signing keys'],
  ],
  'keys rotate': [['fecr keys rotate --data-dir ./srv', 'new tokens are signed with a new key; old ones stay valid']],
  'keys list': [['fecr keys list --json', 'the signing keys as JSON']],
  tokens: [['fecr tokens revoke JTI', 'revoke one token (its jti: see fecr whoami)']],
  'tokens revoke': [['fecr tokens revoke JTI --data-dir ./srv', 'that token stops working at once']],
  webhooks: [
    ['fecr webhooks listen --forward-to http://127.0.0.1:8080/hook', 'forward deliveries to a receiver'],
    ['fecr webhooks list --account acme --state fallido', 'deliveries that failed'],
  ],
  'webhooks list': [
    ['fecr webhooks list --account acme', 'the last 50 deliveries'],
    ['fecr webhooks list --account acme --state fallido --json', 'the failed ones, as JSON'],
  ],
  'webhooks replay': [['fecr webhooks replay DELIVERY_ID --account acme', 'deliver it again (same webhook-id)']],
  'webhooks listen': [
    ['fecr webhooks listen --forward-to http://127.0.0.1:8080/hook', 'forward the deliveries to your receiver'],
    ['fecr webhooks listen --profile hosted --public-url https://abc.tunnel.example --json', 'a hosted account, through a tunnel'],
  ],
  config: [
    ['fecr config list', 'every profile and its keys'],
    ['fecr config set env sandbox', "the default profile sends to Hacienda's sandbox"],
    ['fecr config get baseUrl --profile hosted', 'one key of another profile'],
  ],
  'config get': [
    ['fecr config get mode', 'local or remote'],
    ['fecr config get baseUrl --profile hosted', 'a key of another profile'],
  ],
  'config set': [
    ['fecr config set env sandbox', 'KEY VALUE'],
    ['fecr config set mode=remote authUrl=https://auth.example.com baseUrl=https://api.example.com base=acme --profile hosted', 'a remote profile in one go'],
    ['fecr config set contingencia=auto contingenciaPlazoHoras=24', 'sign in situación 3 when Hacienda cannot be reached; warn against a 24-hour term'],
  ],
  'config unset': [['fecr config unset dataDir', 'back to the default data dir']],
  'config list': [['fecr config list --json', 'every profile as JSON']],
  login: [
    ['fecr login --profile hosted', 'asks for the password on a terminal'],
    ['fecr login --profile hosted --base acme --password-stdin < password.txt', 'in a script'],
  ],
  logout: [['fecr logout --profile hosted', 'revoke the token and forget it']],
  whoami: [
    ['fecr whoami', 'account, issuer, token id and time left'],
    ['fecr whoami --profile hosted --json', 'of another profile, as JSON'],
  ],
  emisor: [
    ['fecr emisor register', 'asks for the .p12, PIN and record on a terminal'],
    ['fecr emisor register issuer.json', 'from the record in a file'],
    ['fecr emisor show 3101123456', 'an issuer, without secrets'],
    ['fecr emisor list', "the account's issuers"],
  ],
  'emisor register': [
    ['fecr emisor register', 'interactive: .p12, PIN, taxpayer lookup, record'],
    ['fecr emisor register issuer.json', 'the record in a file'],
    ['fecr emisor register issuer.json --p12 issuer.p12 --pin-stdin < pin.txt', 'the certificate and its PIN beside the record'],
  ],
  'emisor update': [
    ['fecr emisor update issuer.json', 'replace the record'],
    ['fecr emisor update issuer.json --p12 renewed.p12 --pin-stdin < pin.txt', 'a renewed certificate'],
  ],
  'emisor list': [
    ['fecr emisor list', "the account's issuers, without secrets"],
    ['fecr emisor list --profile hosted --json', 'of a hosted account, as JSON'],
  ],
  'emisor numbers': [
    ['fecr emisor numbers 3101123456', 'the next numeroReferencia of each kind (a body without one takes it)'],
    ['fecr emisor numbers 3101123456 --set FE=1501 --set NC=42', 'coming from another system: where each kind goes on'],
    ['fecr emisor numbers 3101123456 --set TE=900 --sucursal 2 --terminal 3', 'the series of another sucursal and terminal'],
  ],
  'emisor show': [
    ['fecr emisor show 3101123456', 'the record as the service keeps it, without secrets'],
    ['fecr emisor show 3101123456 --json', 'as JSON'],
  ],
  send: [
    ['fecr send factura.json', 'sign and send; prints the clave'],
    ['fecr send factura.json --wait', 'and wait: exit 0 aceptado, 3 rechazado'],
    ['fecr send venta.json --new', 'a body without numeroReferencia sent again within 24 h: another document on purpose (without --new: "already sent as CLAVE")'],
    ['fecr send factura.json --wait --quiet', 'print only the clave (CLAVE=$(…))'],
    ['fecr send - --wait --strict --timeout 120 < factura.json', 'from stdin, strict, a 2-minute wait'],
    ['fecr send factura.json --wait --cc contabilidad@cliente.cr', 'also mail the accepted comprobante there'],
    ['fecr send factura.json --wait --force', 'send even what Hacienda is known to reject (-400 an unknown CABYS code, …)'],
    ['fecr send factura.json --situacion 3', 'signed without internet: situación 3 in the clave (contingencia auto does it when Hacienda cannot be reached)'],
  ],
  batch: [
    ['fecr batch facturas.csv', 'results in facturas.csv.results.jsonl'],
    ['fecr batch facturas.csv --dry-run', 'validate every row, send nothing'],
    ['fecr batch facturas.jsonl --wait --concurrency 4', "and wait for Hacienda's verdicts"],
    ['fecr batch facturas.csv --resume', 'continue after Ctrl-C or a crash'],
    ['fecr batch facturas.csv --restart', 'start over; the earlier journal and results kept aside'],
    ['fecr batch facturas.csv --encoding windows-1252 --decimal-comma', 'a CSV of Excel in Spanish: ";", 1.250,50'],
    ['fecr batch ventas-sin-internet.jsonl --situacion 3', "every document's clave in situación 3 (sin internet)"],
  ],
  contingency: [
    ['fecr contingency record --numero P-0001 --fecha 2026-10-14T09:30 --emisor 3101123456 --total 11300', 'a paper comprobante handed out during the outage'],
    ['fecr contingency replace 1 factura.json --wait', 'its electronic replacement (situación 2, CodigoReferencia 05, TipoDocIR 08)'],
    ['fecr contingency send', 'Hacienda is back: send what the outage queued, wait for the verdicts'],
    ['fecr contingency status', 'what is still owed, since when and how old'],
  ],
  'contingency record': [
    ['fecr contingency record --numero P-0001 --fecha 2026-10-14T09:30 --emisor 3101123456 --total 11300 --receptor "Ana Mora"', 'one, from flags (FE, CRC unless --kind, --moneda)'],
    ['fecr contingency record --file provisionales.json --json', 'one object or a list: {numero, fechaEmision, emisor, totalComprobante, …}'],
  ],
  'contingency replace': [
    ['fecr contingency replace 1 factura.json --wait', 'sent in situación 2 with the reference to provisional 1; exit 0 aceptado'],
    ['fecr contingency replace 2 nota-credito.json', 'an NC keeps its own reference and gets the provisional one too'],
  ],
  'contingency send': [
    ['fecr contingency send', 'every document Hacienda has not received yet (any situación) or of situación 2 or 3 not decided, now: exit 0 all aceptado'],
    ['fecr contingency send --timeout 300 --json', 'a longer wait, the verdicts as JSON'],
  ],
  'contingency status': [
    ['fecr contingency status', 'documents not received yet, provisional comprobantes not replaced, contingency documents not accepted, with their age; warns near the term'],
    ['fecr contingency status --json', 'as JSON'],
  ],
  test: [
    ['fecr test invoices/', 'every body of the folder on a throwaway local profile: exit 0 when each verdict is what it expects'],
    ['fecr test invoices/ --junit report.xml', 'and a JUnit XML report for CI'],
    ['fecr test factura.json lote.jsonl ventas.csv', 'files: one body or an array (.json), one body a line (.jsonl), rows (.csv)'],
    ['fecr test invoices/ --faults faults.json', "the emulator answers 5xx, loses answers, … as the fault file says"],
    ['fecr test invoices/ --profile sandbox', "the same files on a profile of yours, e.g. Hacienda's sandbox (its issuers registered)"],
    ['fecr test invoices/ --keep', "keep the throwaway profile's data dir to look at the documents"],
  ],
  status: [
    ['fecr status "$CLAVE"', "state and Hacienda's answer; the notes, replacements and payments that reference it, and a sale's balance"],
    ['fecr status "$CLAVE" --watch --timeout 300', 'refresh until Hacienda decides'],
    ['fecr status "$CLAVE" --json', 'as JSON'],
  ],
  download: [
    ['fecr download "$CLAVE"', 'the signed XML, as <clave>.xml'],
    ['fecr download "$CLAVE" --type pdf --out factura.pdf', 'the PDF'],
    ['fecr download "$CLAVE" --type respuesta --out -', "Hacienda's answer on stdout"],
  ],
  documents: [
    ['fecr documents list --state rechazado', 'the rejected documents'],
    ['fecr documents annul "$CLAVE" --wait', 'annul an accepted comprobante with a nota de crédito'],
    ['fecr documents payment "$CLAVE" --amount 56500 --wait', 'record a payment against a credit sale (a REP)'],
  ],
  'documents list': [
    ['fecr documents list', 'the last 100, newest first'],
    ['fecr documents list --state rechazado --since 2026-03-01', 'rejected ones since a date'],
    ['fecr documents list --issuer 3101123456', "one issuer's"],
    ['fecr documents list --limit 1000 --json', 'more, as JSON'],
    ['fecr documents list --csv > documentos.csv', 'as CSV for a spreadsheet (cells starting =, +, -, @ get a leading \')'],
  ],
  'documents email': [
    ['fecr documents email 50624112600310112345600100001010000000042123456789', 'mail an accepted document to its receptor again'],
    ['fecr documents email 50624112600310112345600100001010000000042123456789 --to contabilidad@cliente.cr', 'to another address'],
  ],
  'documents annul': [
    ['fecr documents annul 50624112600310112345600100001010000000042123456789 --wait', 'send the NC that annuls an accepted FE in full, and wait for the verdict'],
    ['fecr documents annul "$CLAVE" --reason "Venta anulada a pedido del cliente" --json', 'with the reason the reference carries'],
  ],
  'documents replace': [
    ['fecr documents replace "$CLAVE" corregida.json --wait', 'send the corrected document replacing one Hacienda rejected (code 16), under a new number'],
    ['fecr documents replace "$CLAVE" - --json < corregida.json', 'the body from stdin'],
  ],
  'documents payment': [
    ['fecr documents payment "$CLAVE" --amount 56500 --wait', 'a payment received against a credit sale (condicionVenta 10): its REP, IVA in proportion'],
    ['fecr documents payment "$CLAVE" --amount 56500 --date 2026-11-20 --medio 06', 'paid by SINPE MÓVIL on another day'],
  ],
  recibidos: [
    ['fecr recibidos import facturas/', "check and keep a folder of suppliers' XML"],
    ['fecr recibidos list --state pendiente', 'the ones still to answer'],
    ['fecr recibidos watch --imap imaps://facturas@mail.example.cr/INBOX --rules reglas.json', "read the suppliers' mailbox, import and answer as the rules say"],
  ],
  report: [['fecr report iva 2026-11', "the month's IVA figures: sales, purchases, the difference"]],
  'report iva': [
    ['fecr report iva 2026-11', 'one section per issuer of the account (never a sum across cédulas): the table in colones, 2 decimals, then the documents left out'],
    ['fecr report iva 2026-11 --issuer 3101123456 --json', 'one issuer, every figure with 5 decimals'],
    ['fecr report iva 2026-11 --csv > iva-2026-11.csv', 'the table for a spreadsheet (the cédula in its first column)'],
  ],
  'recibidos import': [
    ['fecr recibidos import factura-proveedor.xml', 'one file: its checks, then kept (or refused with its reasons)'],
    ['fecr recibidos import facturas/ --json', 'a folder, the results as JSON'],
    ['fecr recibidos import - < factura.xml', 'from stdin'],
  ],
  'recibidos watch': [
    ['fecr recibidos watch --imap imaps://facturas@mail.example.cr/INBOX --rules reglas.json', 'password in FECR_IMAP_PASSWORD; every 60 s until Ctrl-C: mails done go to fecr-imported, those without a valid comprobante to fecr-set-aside'],
    ['fecr recibidos watch --maildir ~/Maildir --once', 'one pass over a Maildir, every comprobante held for you to answer'],
    ['fecr recibidos watch --maildir ~/Maildir --once --json', 'one JSON line per mail'],
  ],
  'accounts mailbox': [
    ['fecr accounts mailbox acme --imap imaps://facturas@mail.example.cr/INBOX --rules reglas.json', "password in FECR_IMAP_PASSWORD: fecr serve's worker reads the account's suppliers' mail every 60 s"],
    ['fecr accounts mailbox acme', 'the setting (never the password)'],
    ['fecr accounts mailbox acme --clear', 'stop reading it'],
  ],
  'recibidos list': [
    ['fecr recibidos list', 'every received document, newest first'],
    ['fecr recibidos list --state pendiente --since 2026-11-01', 'not answered yet, issued since a date'],
    ['fecr recibidos list --issuer 3101654321 --json', "one supplier's, as JSON"],
    ['fecr recibidos list --csv > recibidos.csv', 'as CSV for a spreadsheet (formulas neutralised)'],
    ['fecr recibidos list --due', 'not answered yet, oldest first, with their age; warns near the term (recibidosPlazoDias)'],
  ],
  archive: [
    ['fecr archive export --since 2026-11-01 --until 2026-11-30 2026-11.tar.gz', "the month's files, sales and purchases, with their manifest"],
    ['fecr archive verify 2026-11.tar.gz', 'exit 0 when manifest, files, signatures, their signers and XSDs agree'],
  ],
  'archive export': [
    ['fecr archive export --since 2026-01-01 --until 2026-12-31 --no-pdf 2026.tar.gz', 'a year, without the PDFs'],
    ['fecr archive export --since 2026-11-01 --until 2026-11-30 --issuer 3101123456 nov.tar.gz', "one issuer's month"],
  ],
  'archive verify': [
    ['fecr archive verify 2026-11.tar.gz', 'one line per file that differs, exit 1'],
    ['fecr archive verify 2026-11.tar.gz --json', 'the result as JSON'],
  ],
  'recibidos show': [
    ['fecr recibidos show 50624112600310165432100100001010000000042123456789', 'its checks, totals, IVA by tarifa and our answer'],
  ],
  'recibidos aceptar': [
    ['fecr recibidos aceptar 50624112600310165432100100001010000000042123456789', 'accept it, all the IVA creditable'],
    ["fecr recibidos aceptar 50624112600310165432100100001010000000042123456789 --condicion-impuesto 03 --gasto-aplicable 0", 'accept it as a capital good'],
  ],
  'recibidos parcial': [
    ["fecr recibidos parcial 50624112600310165432100100001010000000042123456789 --iva-acreditable 650 --detalle 'Una linea no recibida'", 'accept part of it'],
  ],
  'recibidos rechazar': [
    ["fecr recibidos rechazar 50624112600310165432100100001010000000042123456789 --detalle 'Mercaderia no recibida'", 'reject it, with the reason'],
  ],
  'recibidos resumen': [
    ['fecr recibidos resumen 2026-11', 'IVA acreditable and gasto aplicable by tarifa for the month'],
    ['fecr recibidos resumen 2026-11 --issuer 3101123456 --json', "one issuer's purchases as JSON (without --issuer: an array, one per issuer)"],
    ['fecr recibidos resumen 2026-11 --csv > iva-2026-11.csv', 'the table as CSV (the counts on stderr)'],
  ],
  cabys: [
    ['fecr cabys cafe molido', 'CABYS codes, descriptions and IVA rates'],
    ['fecr cabys servicios de consultoria --json', 'as JSON'],
  ],
  contribuyente: [
    ['fecr contribuyente 3101123456', 'name, régimen, estado and economic activities'],
    ['fecr contribuyente 3-101-123456 --json', 'dashes are fine; as JSON'],
  ],
  exoneracion: [
    ['fecr exoneracion AL-00020402-24', 'state, percentage and expiry of an exoneration'],
    ['fecr exoneracion AL-00020402-24 --json', 'as JSON'],
  ],
  'tipo-cambio': [
    ['fecr tipo-cambio', "today's dollar selling rate (BCCR, from Hacienda) and its source"],
    ['fecr tipo-cambio 2026-11-20 --json', 'the rate of a date, as JSON'],
    ['fecr tipo-cambio --moneda EUR', "today's euro rate in colones (the euro has no history at Hacienda)"],
  ],
  completion: [
    ['fecr completion bash > ~/.local/share/bash-completion/completions/fecr', 'bash (or: source <(fecr completion bash))'],
    ['fecr completion zsh > ~/.zfunc/_fecr', 'zsh: a directory of your fpath, before compinit'],
    ['fecr completion fish > ~/.config/fish/completions/fecr.fish', 'fish'],
  ],
  help: [
    ['fecr help send', 'the help of a command'],
    ['fecr help emisor register', 'of a subcommand'],
    ['fecr help exit-codes', 'what each exit code means'],
  ],
};

/** Widest help line the examples keep to when their comments are aligned beside them. */
const MAX_WIDTH = 100;

/**
 * The Examples section of a command's help (after its other text), or undefined when the map has none. Comments
 * go in one column beside the commands when every line then fits in MAX_WIDTH columns, else each on the line
 * above its command.
 */
export function examplesHelp(path: string): string | undefined {
  const examples = EXAMPLES[path];
  if (!examples || examples.length === 0) return undefined;
  const width = Math.max(...examples.map(([line]) => line.length));
  const beside = examples.every(([, comment]) => 2 + width + 4 + comment.length <= MAX_WIDTH);
  const lines = examples.map(([line, comment]) => (beside ? `  ${line.padEnd(width)}  # ${comment}` : `  # ${comment}\n  ${line}`));
  return `\nExamples:\n${lines.join('\n')}`;
}
