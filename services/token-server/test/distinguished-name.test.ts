import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseDn, subjectMatches } from '../src/distinguished-name.js';
import { CERTS } from '@chain/testkit';

/** What subjectMatches reads of a certificate: Node's subject text. */
const withSubject = (subject: string) => ({ subject }) as X509Certificate;

describe('distinguished names (tls_client_auth_subject_dn)', () => {
  it('parses RFC 4514: root first, types in upper case, escapes undone, multi-valued RDNs as sets', () => {
    expect(parseDn('CN=api-a,O=secured-rest-chain dev')).toEqual([
      ['O=secured-rest-chain dev'],
      ['CN=api-a'],
    ]);
    expect(parseDn('cn = a\\,b , uid=x+ou=y')).toEqual([['OU=y', 'UID=x'], ['CN=a,b']]);
    expect(parseDn('CN=\\41\\C3\\A9\\ ')).toEqual([['CN=Aé ']]);
    expect(parseDn('2.5.4.3=x')).toEqual([['2.5.4.3=x']]);
  });

  it.each(['api-a', 'CN=', '=x', 'CN=a,', 'CN=a\\', '1CN=a', 'CN=a,,O=b'])(
    '%s is not a distinguished name',
    (text) => expect(parseDn(text)).toBeUndefined(),
  );

  it('a generated client certificate matches its subject, and only it', () => {
    const cert = new X509Certificate(fs.readFileSync(path.join(CERTS, 'clients', 'api-a.crt')));
    expect(subjectMatches(cert, 'CN=api-a,O=secured-rest-chain dev')).toBe(true);
    expect(subjectMatches(cert, 'cn=api-a, o=secured-rest-chain dev')).toBe(true);
    expect(subjectMatches(cert, 'CN=api-b,O=secured-rest-chain dev')).toBe(false);
    expect(subjectMatches(cert, 'O=secured-rest-chain dev,CN=api-a')).toBe(false);
    expect(subjectMatches(cert, 'CN=api-a')).toBe(false);
    expect(subjectMatches(cert, 'CN=API-A,O=secured-rest-chain dev')).toBe(false);
  });

  it('reads Node’s subject text: escapes as RFC 2253, a multi-valued RDN joined by " + "', () => {
    const cert = withSubject('O=Acme\\, Inc.\nOU=a + UID=x\nCN=svc \\"one\\"=1');
    expect(subjectMatches(cert, 'CN=svc \\"one\\"=1,UID=x+OU=a,O=Acme\\, Inc.')).toBe(true);
    expect(subjectMatches(cert, 'CN=svc "one"=1,OU=a+UID=x,O=Acme\\2C Inc.')).toBe(true);
    expect(subjectMatches(cert, 'CN=svc "one"=1,OU=a,O=Acme\\, Inc.')).toBe(false);
    expect(subjectMatches(cert, 'not a name')).toBe(false);
  });
});
