/**
 * The API server's side of `staticsite webhook --client-ca`: a client certificate for kube-apiserver
 * and the two files a cluster admin passes to it. kube-apiserver reads `--admission-control-config-file`
 * (an AdmissionConfiguration, apiserver.config.k8s.io/v1); the ValidatingAdmissionWebhook and
 * MutatingAdmissionWebhook plugins each take a WebhookAdmissionConfiguration whose `kubeConfigFile`
 * (an absolute path) is a kubeconfig whose `users` are looked up by the host the API server calls
 * (k8s.io/apiserver pkg/util/webhook/authentication.go): `NAME.NAMESPACE.svc:PORT` for a Service
 * webhook, the URL's `host:port` for a URL webhook (port 443 when the URL has none); an exact name
 * first, then `*.`-prefixed suffixes (`*.NAMESPACE.svc`), then for port 443 the same without the
 * port, then `*`. CRD conversion calls do not use this kubeconfig (docs/certs.md).
 */
import { dump } from 'js-yaml';
import { CertsError } from './errors.ts';
import { keyMatches, parseCertificates, parsePrivateKey } from './pem.ts';
import { issueCertificate, type KeyPair } from './x509.ts';

/** The admission plugins that call webhooks and read the kubeconfig. */
export const WEBHOOK_ADMISSION_PLUGINS = ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'] as const;

export const APISERVER_CLIENT_COMMON_NAME = 'kube-apiserver-webhook-client';

/** A user name kube-apiserver matches (see above): a host, `host:port`, `*.suffix` or `*`. */
const WEBHOOK_HOST = /^(\*|(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?|\[[0-9A-Fa-f:.]+\]:\d{1,5})$/;

/** Checks each `--webhook-host`; a bad one is an InvalidInput naming it. */
export function checkWebhookHosts(hosts: readonly string[]): void {
  if (hosts.length === 0) throw new CertsError('InvalidInput', 'at least one --webhook-host is needed');
  for (const host of hosts) {
    if (!WEBHOOK_HOST.test(host)) {
      throw new CertsError(
        'InvalidInput',
        `--webhook-host "${host}" is not a host the API server looks up: NAME.NAMESPACE.svc, *.NAMESPACE.svc, HOST:PORT or *`,
      );
    }
  }
}

/** The CA in `caPem` (a bundle) whose key is `keyPem`: the current CA of a bootstrapper's store. */
export function currentCa(caPem: string, keyPem: string, where: { cert: string; key: string }): KeyPair {
  const fix = 'Run staticsite certs bootstrap with --out-dir first, or point --ca-dir at its directory.';
  const certs = parseCertificates(caPem, where.cert, fix);
  const key = parsePrivateKey(keyPem, where.key, fix);
  const match = certs.find((cert) => keyMatches(cert, key));
  if (!match) {
    throw new CertsError('KeyMismatch', `${where.key} belongs to none of the certificates in ${where.cert}. ${fix}`);
  }
  return { certPem: match.x509.toString(), keyPem };
}

/** kube-apiserver's client certificate (clientAuth only), signed by `ca`. */
export function issueApiServerClientCertificate(ca: KeyPair, validityDays: number, now = new Date()): KeyPair {
  return issueCertificate({
    ca,
    commonName: APISERVER_CLIENT_COMMON_NAME,
    usage: 'clientAuth',
    notBefore: new Date(now.getTime() - 5 * 60_000),
    validityDays,
  });
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The kubeconfig kube-apiserver reads for webhook calls: one user per host, all with `client`. */
export function webhookKubeconfigYaml(hosts: readonly string[], client: KeyPair): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    users: hosts.map((name) => ({
      name,
      user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
    })),
  });
}

/** The AdmissionConfiguration: both webhook plugins read `kubeconfigPath` (which must be absolute). */
export function admissionConfigurationYaml(kubeconfigPath: string): string {
  if (!kubeconfigPath.startsWith('/')) {
    throw new CertsError('InvalidInput', `kubeConfigFile must be an absolute path, not "${kubeconfigPath}"`);
  }
  return dump({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: WEBHOOK_ADMISSION_PLUGINS.map((name) => ({
      name,
      configuration: {
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'WebhookAdmissionConfiguration',
        kubeConfigFile: kubeconfigPath,
      },
    })),
  });
}
