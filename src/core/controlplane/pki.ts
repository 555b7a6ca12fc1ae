import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A tiny certificate authority for the local control plane's etcd: one CA, and leaf certificates for
 * 127.0.0.1 / localhost that serve as both server and client certificates (etcd's client and peer ports,
 * kube-apiserver's etcd client). Everything is ECDSA P-256 with SHA-256, X.509 v3, encoded here in DER by
 * hand (Node can sign but cannot issue certificates), and checked in tests with Node's `X509Certificate`.
 *
 * Keys are returned as PKCS#8 PEM and never leave the control plane's private (0700) dir.
 */

/** A certificate and its private key, both PEM. */
export interface IssuedCert {
  readonly certPem: string;
  readonly keyPem: string;
}

/** The CA of one control plane, able to issue leaf certificates. */
export interface MiniCa extends IssuedCert {
  /** A certificate for `commonName`, valid for 127.0.0.1 and localhost, usable as TLS server and client. */
  issue(commonName: string): IssuedCert;
}

// ---- DER ----

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
}

const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [];
    let v = p;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function utcTime(d: Date): Buffer {
  const p = (n: number) => String(n).padStart(2, '0');
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

interface CertSpec {
  subject: string;
  issuer: string;
  subjectKey: KeyObject;
  signingKey: KeyObject;
  ca: boolean;
  validDays: number;
}

function certificate(s: CertSpec): Buffer {
  const now = Date.now();
  const extensions = s.ca
    ? [
        extension('2.5.29.19', true, seq(bool(true))), // basicConstraints: CA
        extension('2.5.29.15', true, bits(Buffer.from([0x86]), 1)), // keyUsage: digitalSignature, keyCertSign, cRLSign
      ]
    : [
        extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
        extension('2.5.29.15', true, bits(Buffer.from([0xa0]), 5)), // keyUsage: digitalSignature, keyEncipherment
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))), // serverAuth, clientAuth
        extension('2.5.29.17', false, seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from('localhost')))), // IP, DNS
      ];
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ECDSA_SHA256,
    name(s.issuer),
    seq(utcTime(new Date(now - 3600_000)), utcTime(new Date(now + s.validDays * 86_400_000))),
    name(s.subject),
    s.subjectKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, { key: s.signingKey, dsaEncoding: 'der' });
  return seq(tbs, ECDSA_SHA256, bits(signature));
}

function keyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

/** A new CA named `commonName` (valid `validDays`, default 365). */
export function createMiniCa(commonName: string, validDays = 365): MiniCa {
  const caKeys = keyPair();
  const caPem = pem('CERTIFICATE', certificate({ subject: commonName, issuer: commonName, subjectKey: caKeys.publicKey, signingKey: caKeys.privateKey, ca: true, validDays }));
  const caKeyPem = caKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return {
    certPem: caPem,
    keyPem: caKeyPem,
    issue(cn: string): IssuedCert {
      const k = keyPair();
      const der = certificate({ subject: cn, issuer: commonName, subjectKey: k.publicKey, signingKey: createPrivateKey(caKeyPem), ca: false, validDays });
      return { certPem: pem('CERTIFICATE', der), keyPem: k.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
    },
  };
}
