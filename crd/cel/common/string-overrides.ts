/**
 * The string functions whose @marcbachmann/cel-js built-ins follow JavaScript rather than Go: parse.ts renames
 * their calls to the `k8s_*` overloads library/strings.ts and library/regex.ts register, and issues.ts names
 * them back in error texts. Here, below both, so that neither imports the other's folder.
 */
/** Calls renamed in the AST before checking: receiver method name -> our overload name. */
export const OVERRIDDEN_STRING_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['charAt', 'k8s_charAt'],
  ['indexOf', 'k8s_indexOf'],
  ['lastIndexOf', 'k8s_lastIndexOf'],
  ['lowerAscii', 'k8s_lowerAscii'],
  ['upperAscii', 'k8s_upperAscii'],
  ['replace', 'k8s_replace'],
  ['split', 'k8s_split'],
  ['substring', 'k8s_substring'],
  ['trim', 'k8s_trim'],
  ['format', 'k8s_format'],
  ['matches', 'k8s_matches'],
]);
