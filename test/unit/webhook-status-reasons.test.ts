import { expect } from 'chai';
import { errored, reasonForCode } from '../../webhook/admission/responses.ts';
import { statusBody } from '../../webhook/http/review-endpoint.ts';

// The reason Kubernetes gives each code, read off k8s.io/apimachinery v0.37.2 (the version
// devenv/controlplane/go.mod builds): the StatusReason constants in pkg/apis/meta/v1/types.go, and
// which code each constructor of pkg/api/errors/errors.go pairs them with.
const KUBERNETES: ReadonlyArray<[code: number, reason: string, source: string]> = [
  [400, 'BadRequest', 'errors.go:318-319 NewBadRequest; types.go:1026 StatusReasonBadRequest'],
  [401, 'Unauthorized', 'errors.go:202-203 NewUnauthorized; types.go:919 StatusReasonUnauthorized'],
  [403, 'Forbidden', 'errors.go:220-221 NewForbidden; types.go:930 StatusReasonForbidden'],
  [404, 'NotFound', 'errors.go:148-149 NewNotFound; types.go:940 StatusReasonNotFound'],
  [405, 'MethodNotAllowed', 'errors.go:353-354 NewMethodNotSupported; types.go:1032 StatusReasonMethodNotAllowed'],
  [406, 'NotAcceptable', 'errors.go:461-462 NewGenericServerResponse; types.go:1038 StatusReasonNotAcceptable'],
  [409, 'Conflict', 'errors.go:235-236 NewConflict; types.go:954 StatusReasonConflict'],
  [410, 'Gone', 'errors.go:266-267 NewGone; types.go:959 StatusReasonGone'],
  [
    413,
    'RequestEntityTooLarge',
    'errors.go:430-431 NewRequestEntityTooLargeError; types.go:1042 StatusReasonRequestEntityTooLarge',
  ],
  [
    415,
    'UnsupportedMediaType',
    'errors.go:469-470 NewGenericServerResponse; types.go:1048 StatusReasonUnsupportedMediaType',
  ],
  [422, 'Invalid', 'errors.go:296-297 NewInvalid; types.go:972 StatusReasonInvalid'],
  [429, 'TooManyRequests', 'errors.go:330-331 NewTooManyRequests; types.go:1019 StatusReasonTooManyRequests'],
  [500, 'InternalError', 'errors.go:390-391 NewInternalError; types.go:1055 StatusReasonInternalError'],
  [503, 'ServiceUnavailable', 'errors.go:343-344 NewServiceUnavailable; types.go:1067 StatusReasonServiceUnavailable'],
  [504, 'Timeout', 'errors.go:404-405 NewTimeoutError; types.go:1010 StatusReasonTimeout'],
];

describe('webhook: one map from HTTP code to Status reason, as k8s.io/apimachinery has it', () => {
  for (const [code, reason, source] of KUBERNETES) {
    it(`${code} is ${reason} (${source})`, () => {
      expect(reasonForCode(code)).to.equal(reason);
    });
  }

  // NewGenericServerResponse (errors.go:437-525): a code it does not name is InternalError from
  // 500 on (errors.go:489-490) and StatusReasonUnknown, the empty reason, below (errors.go:438).
  it('any other 5xx is InternalError; any other code has no reason', () => {
    expect(reasonForCode(502)).to.equal('InternalError');
    expect(reasonForCode(418)).to.equal(undefined);
    expect(statusBody(418, 'teapot')).to.not.have.property('reason');
    expect(errored('u', 418, 'teapot').status).to.not.have.property('reason');
  });

  it('the HTTP answers and the denials in reviews both take it', () => {
    for (const [code, reason] of KUBERNETES) {
      expect(statusBody(code, 'm')).to.include({ code, reason, status: 'Failure', kind: 'Status' });
      expect(errored('u', code, 'm').status).to.include({ code, reason, status: 'Failure' });
    }
  });
});
