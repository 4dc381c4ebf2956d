/** An error a Kubernetes CEL library function returns at runtime (cel-go types.NewErr); the message is cel-go's. */
export class CelFunctionError extends Error {
  override name = 'CelFunctionError';
}
