/** The character codes of JSON's structure (all ASCII: a UTF-8 multi-byte character never contains one). */
export const JsonByte = {
  Quote: 0x22,
  Backslash: 0x5c,
  Comma: 0x2c,
  Colon: 0x3a,
  OpenArray: 0x5b,
  CloseArray: 0x5d,
  OpenObject: 0x7b,
  CloseObject: 0x7d,
  Space: 0x20,
  Tab: 0x09,
  Newline: 0x0a,
  Return: 0x0d,
} as const;
