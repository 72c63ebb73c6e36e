// Path checks in TypeScript with regular expressions that hold '/' in a character class
// and follow comments. Written for ctxtools' scanner tests.
import path from 'node:path';

export const isEscaping = (input: string): boolean =>
  path.isAbsolute(input) ||
  // a drive letter and a colon not followed by a separator ("C:foo") is relative to
  // that drive's own working directory: escaping too.
  /^[a-zA-Z]:(?![/\\])/.test(input) ||
  /* a home reference */ /^~(?:[/\\]|$)/.test(input) ||
  input.split(/[/\\]/).includes('..');

// The realpath injected by tests: a plain function of a string.
type RealpathFn = (p: string) => Promise<string>;

export const locales = {
  en: { tag: 'en', og: 'en_US' },
  'pt-br': { tag: 'pt-BR', og: 'pt_BR' },
} as const;

export type Locale = keyof typeof locales;

const stripSuffix = (rest: string) =>
  rest
    .replace(/\.md$/, '')
    .replace(/(^|\/)index$/, '$1')
    .replace(/^\/+/, '');

type PageHeadContext = {
  page: string;
  title: string;
};

export function baseName(input: string): string {
  const last = `${input.split(/[/\\]/).pop()}`;
  return stripSuffix(last);
}

export async function resolveInside(root: string, input: string, realpath: RealpathFn) {
  if (isEscaping(input)) throw new Error(`escapes ${root}`);
  return realpath(path.join(root, input));
}
