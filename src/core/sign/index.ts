/** Signing: .p12 loading, XAdES-EPES signing and verification (test certificates: ./testcert.js). */
export {
  loadP12,
  describeP12,
  credentials,
  validityAt,
  SigningError,
  type SigningCredentials,
  type SigningErrorCode,
  type P12Description,
  type CertificateValidity,
} from './p12.js';
export {
  certificateInfo,
  identificacionFromSerialNumber,
  type CertificateInfo,
  type TipoIdentificacionFirmante,
} from './cert.js';
export { signCanonical, signXmlDocument, XML_DECLARATION, type SignOptions } from './xades.js';
export { verifyXades } from './verify.js';
export { addCheck, type VerifyReport, type VerifyCheck } from './verify-report.js';
export { POLICY_V44_URL, POLICY_V44_DIGEST, POLICY_V44_DIGEST_METHOD } from './policy.js';
