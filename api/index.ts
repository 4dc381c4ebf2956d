export * from './constants.ts';
export * from './conversion.ts';
export * from './crd.ts';
export * from './hostname.ts';
export * from './openapi.ts';
export * from './resource.ts';
export * from './schema.ts';
export * from './types.ts';
