import { type AdmissionResult, printedErrors } from '../../crd/index.ts';
import { stringifyJson } from '../../crd/json-int64.ts';
import { ENGINE_MESSAGE_LIMIT } from '../../webhook/admission/bounds.ts';

export type Status = 'valid' | 'invalid' | 'error' | 'skipped';

/** What became of one object (one YAML document) of one input. */
export interface ObjectResult {
  /** The path given or found, `<stdin>` for `-`. */
  file: string;
  /** 1-based index of the document in its file; absent when the file could not be read. */
  document?: number;
  /** `Kind/name` (with placeholders for what the object lacks); empty when there is no object. */
  label: string;
  status: Status;
  /** The API server's message for a denial, the reason for an error or a skip; empty when valid. */
  message: string;
  warnings: string[];
  result?: AdmissionResult;
}

export interface Totals {
  files: number;
  valid: number;
  invalid: number;
  errors: number;
  skipped: number;
}

/** Prints results as they come and a closing part once all are in. */
export interface Reporter {
  add(result: ObjectResult): void;
  end(totals: Totals): void;
}

export const OUTPUT_FORMATS = ['text', 'json', 'junit', 'tap'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

function summary(t: Totals): string {
  const objects = t.valid + t.invalid + t.errors + t.skipped;
  return `Summary: ${objects} object${objects === 1 ? '' : 's'} in ${t.files} file${t.files === 1 ? '' : 's'}: ${t.valid} valid, ${t.invalid} invalid, ${t.errors} error${t.errors === 1 ? '' : 's'}, ${t.skipped} skipped`;
}

/** Where a result belongs within its file: `document N: Kind/name`, or what of it there is. */
function place(r: ObjectResult): string {
  return [r.document === undefined ? '' : `document ${r.document}`, r.label].filter(Boolean).join(': ');
}

function verdict(r: ObjectResult): string {
  if (r.status === 'valid') return 'valid';
  if (r.status === 'invalid') return `${r.result?.code === 400 ? 'rejected' : 'invalid'}: ${r.message}`;
  return `${r.status}: ${r.message}`;
}

function textReporter(write: (text: string) => void): Reporter {
  return {
    add(r) {
      const lines = r.warnings.map((w) => `Warning: ${w}`);
      lines.push(`${[r.file, place(r), verdict(r)].filter(Boolean).join(': ')}`);
      write(`${lines.join('\n')}\n`);
    },
    end(totals) {
      write(`${summary(totals)}\n`);
    },
  };
}

function jsonReporter(write: (text: string) => void): Reporter {
  return {
    add(r) {
      const result = r.result;
      write(
        `${stringifyJson({
          file: r.file,
          document: r.document ?? null,
          status: r.status,
          allowed: result ? result.allowed : null,
          code: result?.code ?? null,
          message: r.message,
          // The errors the message lists, bounded as the message is.
          errors: !result
            ? []
            : result.code === 400
              ? result.decodeErrors
              : printedErrors(result.errors, ENGINE_MESSAGE_LIMIT),
          warnings: r.warnings,
          object: result?.object ?? null,
        })}\n`,
      );
    },
    end() {},
  };
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text as XML 1.0 attribute or character data: escaped, and without the characters XML 1.0 forbids. */
export function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/[&<>"']/g, (c) => XML_ESCAPES[c] ?? c);
}

/** JUnit XML as CI systems read it: one testsuite, a testcase per object (classname = file). */
function junitReporter(write: (text: string) => void): Reporter {
  const cases: string[] = [];
  return {
    add(r) {
      const open = `    <testcase classname="${xmlText(r.file)}" name="${xmlText(place(r) || r.file)}"`;
      if (r.status === 'valid') {
        cases.push(`${open}/>`);
      } else {
        const tag = r.status === 'invalid' ? 'failure' : r.status === 'error' ? 'error' : 'skipped';
        cases.push(`${open}>\n      <${tag} message="${xmlText(r.message)}"/>\n    </testcase>`);
      }
    },
    end(t) {
      const tests = t.valid + t.invalid + t.errors + t.skipped;
      write(
        [
          '<?xml version="1.0" encoding="UTF-8"?>',
          `<testsuites name="staticsite validate" tests="${tests}" failures="${t.invalid}" errors="${t.errors}" skipped="${t.skipped}">`,
          `  <testsuite name="staticsite validate" tests="${tests}" failures="${t.invalid}" errors="${t.errors}" skipped="${t.skipped}">`,
          ...cases,
          '  </testsuite>',
          '</testsuites>',
          '',
        ].join('\n'),
      );
    },
  };
}

/** TAP version 13: a test point per object as it comes, a YAML block with the reason, the plan last. */
function tapReporter(write: (text: string) => void): Reporter {
  let n = 0;
  write('TAP version 13\n');
  return {
    add(r) {
      n++;
      const description = `${r.file} ${place(r)}`.trimEnd().replace(/#/g, '\\#');
      if (r.status === 'valid') write(`ok ${n} - ${description}\n`);
      else if (r.status === 'skipped') write(`ok ${n} - ${description} # SKIP ${r.message}\n`);
      else {
        write(
          `not ok ${n} - ${description}\n  ---\n  message: ${JSON.stringify(r.message)}\n  severity: ${r.status === 'invalid' ? 'fail' : 'error'}\n  ...\n`,
        );
      }
    },
    end() {
      write(`1..${n}\n`);
    },
  };
}

export function createReporter(format: OutputFormat, write: (text: string) => void): Reporter {
  switch (format) {
    case 'json':
      return jsonReporter(write);
    case 'junit':
      return junitReporter(write);
    case 'tap':
      return tapReporter(write);
    default:
      return textReporter(write);
  }
}
