import { GROUP, KIND, PLURAL, VERSION_V1 } from './constants.ts';

/**
 * The StaticSite REST resource at the storage version, in the shape of kube/'s ResourceType (api/
 * imports nothing, so the shape is spelled out here, not imported).
 */
export const STATICSITES = {
  group: GROUP,
  version: VERSION_V1,
  plural: PLURAL,
  kind: KIND,
  namespaced: true,
};
