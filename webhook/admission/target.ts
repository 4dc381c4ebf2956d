import { GROUP, KIND } from '../../api/index.ts';
import type { AdmissionRequest } from './review.ts';

/** Why a request is not for this webhook, or undefined when it is a StaticSite of a served version. */
export function wrongTarget(request: AdmissionRequest, servedVersions: readonly string[]): string | undefined {
  const { group, version, kind } = request.kind;
  if (group !== GROUP || kind !== KIND) {
    return `this webhook admits ${KIND}.${GROUP} objects, not ${kind}${group ? `.${group}` : ''}`;
  }
  if (!servedVersions.includes(version)) {
    return `${KIND}.${GROUP} has no version ${JSON.stringify(version)}: served versions are ${servedVersions.join(', ')}`;
  }
  return undefined;
}
