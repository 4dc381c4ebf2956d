import type { Tier } from './constants.ts';

/** The subset of ObjectMeta this project reads and writes. Unknown keys pass through. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface StaticSiteStatus {
  observedGeneration?: number;
  readyReplicas?: number;
  url?: string;
  conditions?: Condition[];
}

export interface StaticSiteSpecV1alpha1 {
  /** The site's index.html. */
  content: string;
  replicas?: number;
  tier?: Tier;
}

export interface StaticSiteSpecV1 extends StaticSiteSpecV1alpha1 {
  /** DNS name of the site's external record. */
  hostname?: string;
}

export interface StaticSiteV1alpha1 {
  apiVersion: 'staticsite.dev/v1alpha1';
  kind: 'StaticSite';
  metadata: ObjectMeta;
  spec: StaticSiteSpecV1alpha1;
  status?: StaticSiteStatus;
}

export interface StaticSiteV1 {
  apiVersion: 'staticsite.dev/v1';
  kind: 'StaticSite';
  metadata: ObjectMeta;
  spec: StaticSiteSpecV1;
  status?: StaticSiteStatus;
}

export type StaticSite = StaticSiteV1alpha1 | StaticSiteV1;
