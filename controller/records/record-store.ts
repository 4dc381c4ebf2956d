/** What the outside world learns about a site: its DNS name and the Service that serves it. */
export interface ExternalRecord {
  hostname: string;
  /** The in-cluster DNS name of the site's Service. */
  service: string;
  port: number;
  /** namespace/name of the StaticSite. */
  site: string;
}

export type PublishOutcome = 'created' | 'updated' | 'unchanged';
export type RemoveOutcome = 'removed' | 'absent';

/**
 * Where external records live: one record per site, keyed by namespace/name. The file store is one
 * implementation; a DNS provider is another. Both operations are idempotent.
 */
export interface RecordStore {
  publish(siteKey: string, record: ExternalRecord): Promise<PublishOutcome>;
  /** Deletes the record; a record that is already gone is success ('absent'). */
  remove(siteKey: string): Promise<RemoveOutcome>;
}
