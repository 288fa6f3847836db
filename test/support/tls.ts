import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl into `dir`.
 *  An EC key is generated in milliseconds; RSA 2048 would take far longer on a busy machine. */
export async function selfSignedCert(dir: string): Promise<{ cert: Buffer; key: Buffer; certPath: string; keyPath: string }> {
  const keyPath = join(dir, 'key.pem')
  const certPath = join(dir, 'cert.pem')
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyPath, '-out', certPath,
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ])
  return { cert: await readFile(certPath), key: await readFile(keyPath), certPath, keyPath }
}
