/** field.Path's String() for its Child, Index and Key steps (k8s.io/apimachinery/pkg/util/validation/field/path.go). */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}
