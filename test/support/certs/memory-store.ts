/**
 * Test doubles for the bootstrapper's own seam: an in-memory certificate store. The clock and the
 * in-memory API server are in test/support/kube/. For this repository's tests only: nothing outside
 * test/ imports test/ (test/unit/layout.test.ts).
 */
import type { CertStore, MaterialKind, StoredCa, StoredServing } from '../../../certs/store.ts';

/** An in-memory CertStore that records every save, in order, into `log` (shared with a fake injector). */
export class MemoryStore implements CertStore {
  ca: StoredCa | undefined;
  serving: StoredServing | undefined;
  readonly log: string[];

  constructor(log: string[] = []) {
    this.log = log;
  }

  where(kind: MaterialKind, key: string): string {
    return `memory ${kind} ${key}`;
  }

  remedy(kind: MaterialKind): string {
    return `Clear the ${kind} material.`;
  }

  async loadCa(): Promise<StoredCa | undefined> {
    return this.ca && { ...this.ca };
  }

  async loadServing(): Promise<StoredServing | undefined> {
    return this.serving && { ...this.serving };
  }

  async saveCa(ca: Required<StoredCa>): Promise<boolean> {
    if (this.ca?.bundlePem === ca.bundlePem && this.ca.keyPem === ca.keyPem) return false;
    this.ca = { ...ca };
    this.log.push('save-ca');
    return true;
  }

  async saveServing(serving: Required<StoredServing>): Promise<boolean> {
    const s = this.serving;
    if (s?.certPem === serving.certPem && s.keyPem === serving.keyPem && s.caPem === serving.caPem) return false;
    this.serving = { ...serving };
    this.log.push('save-serving');
    return true;
  }
}
