/** metav1.ObjectMeta and OwnerReference: the one definition lives with the Kubernetes client types. */
import type { ObjectMeta } from '../kube/objects.ts';
import type { Tier } from './constants.ts';

export type { ObjectMeta, OwnerReference } from '../kube/objects.ts';

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
