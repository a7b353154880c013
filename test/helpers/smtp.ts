// A real SMTP server for the mail tests: smtp-server (from nodemailer's authors) on 127.0.0.1:0 in the test process,
// optionally with STARTTLS (a test certificate made here with node-forge for 127.0.0.1) and AUTH PLAIN/LOGIN, and a
// scriptable answer per message (e.g. 451 twice, then accept; or 550 always). Every accepted message is kept raw.
import forge from 'node-forge';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  raw: Buffer;
  from: string;
  to: string[];
  /** Whether the connection was TLS (STARTTLS) and who authenticated. */
  secure: boolean;
  user: string | undefined;
}

export interface TestSmtp {
  port: number;
  url: string;
  /** PEM of the server's certificate (self-signed: also its CA). */
  ca: string | undefined;
  received: ReceivedMail[];
  /** DATA commands seen, accepted or not. */
  attempts: number;
  close(): Promise<void>;
}

export interface TestSmtpOptions {
  tls?: boolean;
  auth?: { user: string; pass: string };
  /** The answer to the n-th DATA (1-based): undefined accepts, else an error with that SMTP code. */
  answer?: (n: number) => { code: number; message: string } | undefined;
}

/** A self-signed certificate for 127.0.0.1 / localhost. */
export function testCertificate(): { key: string; cert: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01' + forge.util.bytesToHex(forge.random.getBytesSync(8));
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: '127.0.0.1' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { key: forge.pki.privateKeyToPem(keys.privateKey), cert: forge.pki.certificateToPem(cert) };
}

export async function startTestSmtp(opts: TestSmtpOptions = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const self: TestSmtp = { port: 0, url: '', ca: undefined, received, attempts: 0, close: async () => undefined };
  const tls = opts.tls ? testCertificate() : undefined;
  const options: SMTPServerOptions = {
    secure: false,
    disabledCommands: [...(opts.tls ? [] : ['STARTTLS']), ...(opts.auth ? [] : ['AUTH'])],
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    authOptional: !opts.auth,
    ...(opts.auth ? { authMethods: ['PLAIN', 'LOGIN'] } : {}),
    size: 50 * 1024 * 1024,
    logger: false,
    onAuth(auth, _session, cb) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const n = ++self.attempts;
        const a = opts.answer?.(n);
        if (a) return cb(Object.assign(new Error(a.message), { responseCode: a.code }));
        received.push({
          raw: Buffer.concat(chunks),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        cb(null, `Ok: queued as m${received.length}`);
      });
    },
  };
  const server = new SMTPServer(options);
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.server.address();
  self.port = typeof addr === 'object' && addr ? addr.port : 0;
  self.url = `smtp://127.0.0.1:${self.port}`;
  self.ca = tls?.cert;
  self.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return self;
}
