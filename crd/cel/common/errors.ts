/** An error a Kubernetes CEL library function returns at runtime (cel-go types.NewErr); the message is cel-go's. */
export class CelFunctionError extends Error {
  override name = 'CelFunctionError';
}

/** A parser as a CEL conversion function: what it throws becomes a CelFunctionError, `prefix` before its message. */
export function celConversion<T>(parse: (s: string) => T, prefix = ''): (s: string) => T {
  return (s) => {
    try {
      return parse(s);
    } catch (error) {
      throw new CelFunctionError(`${prefix}${(error as Error).message}`);
    }
  };
}

/** A parser as a CEL `isX(string): bool` check: whether it parses the string without throwing. */
export function celParses(parse: (s: string) => unknown): (s: string) => boolean {
  return (s) => {
    try {
      parse(s);
      return true;
    } catch {
      return false;
    }
  };
}
