import type { NextFunction, Request, Response } from 'express';
import { ReviewError } from '../admission/review.ts';

/**
 * Reads the request body into `req.body` as a Buffer, refusing more than `limit` bytes with 413.
 * Leaner than body-parser on the hot path: no content-type negotiation (decodeJsonBody checks the
 * type) and no inflation (the API server does not compress webhook requests).
 */
export function rawBody(limit: number) {
  const tooLarge = () => new ReviewError(413, `request entity is too large; limit is ${limit} bytes`);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      req.resume(); // drain, so the connection stays usable for the error response
      next(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > limit) return next(tooLarge());
      req.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      next();
    });
    req.on('error', (error) => next(new ReviewError(400, `cannot read the request body: ${error.message}`)));
  };
}
