/**
 * XAdES-EPES signature policy of comprobantes electrónicos v4.4 (ANEXOS Y ESTRUCTURAS v4.4, Anexo 2, p.86).
 * The digest is base64 of the SHA-256 of the policy PDF the URL points to.
 */

/** `xades:SigPolicyId/xades:Identifier` for v4.4. */
export const POLICY_V44_URL =
  'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/Resoluci%C3%B3n_General_sobre_disposiciones_t%C3%A9cnicas_comprobantes_electr%C3%B3nicos_para_efectos_tributarios.pdf';

/** `xades:SigPolicyHash/ds:DigestValue` for v4.4 (SHA-256, base64). */
export const POLICY_V44_DIGEST = 'DWxin1xWOeI8OuWQXazh4VjLWAaCLAA954em7DMh0h8=';

/** `xades:SigPolicyHash/ds:DigestMethod/@Algorithm` for v4.4. */
export const POLICY_V44_DIGEST_METHOD = 'http://www.w3.org/2001/04/xmlenc#sha256';

/** Algorithm and namespace URIs used by the signature. */
export const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
export const NS_XADES = 'http://uri.etsi.org/01903/v1.3.2#';
export const ALG_EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
export const ALG_ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
export const ALG_RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
export const ALG_SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
export const TYPE_SIGNED_PROPERTIES = 'http://uri.etsi.org/01903#SignedProperties';
