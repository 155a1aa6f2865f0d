// Which inline code spans name a repository path, and whether that path and each relative link resolve.
import { posix } from 'node:path';
import { globPattern, type RepositoryIndex } from './repositoryIndex.js';

/** A name without a slash is a file name when it ends in one of these. */
const FILE_NAME = /\.(md|ts|js|mjs|cjs|json|ya?ml|sh|lua|tpl|txt)$/;
/** Folders that exist only after a build or an install: not part of the repository. */
const BUILD_OUTPUT = new Set(['dist', 'node_modules', '.dev', 'coverage', '.cache']);
/** `kubernetes.io/…`, `coordination.k8s.io/v1`: a label, annotation or API group, not a folder. */
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;
/** `SIWF_V2_URL/api/payload`: an environment variable's value with a path after it. */
const VARIABLE = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/;
const MEDIA_TYPES = new Set(['application', 'audio', 'font', 'image', 'message', 'multipart', 'text', 'video']);

/**
 * The repository path an inline code span names, or undefined when it names none. A span is a path when it is
 * made of letters, digits and `. _ - / *` only (with an optional `#anchor`), has a letter, and has a slash or
 * ends in a file extension of the repository's (`.md`, `.ts`, `.yaml`, …). So these are not paths: anything with
 * a space, a placeholder (`<service>`, `{msaId}`, `…`), a colon (URLs, `image:tag`, `other-project:path`), `=`,
 * `@` (npm packages), `~` or `$`; a path starting with `/` (HTTP routes, `/var/lib/…`); CIDRs (`10.0.0.0/8`);
 * media types (`text/plain`); a first folder that is a domain (`kubernetes.io/name`, `coordination.k8s.io/v1`)
 * or an environment variable (`SIWF_V2_URL/api/payload`); and build output (a `dist`, `node_modules`, `.dev`, `coverage` or `.cache` folder,
 * `*.tsbuildinfo`), which a fresh clone lacks.
 */
export function repositoryPathIn(span: string): string | undefined {
  const [path = '', ...anchor] = span.split('#');
  if (anchor.length > 1 || !/^[\w.\-/*]+$/.test(path) || !/[A-Za-z]/.test(path) || path.startsWith('/'))
    return undefined;
  if (!path.includes('/') && !FILE_NAME.test(path)) return undefined;
  const segments = path.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => BUILD_OUTPUT.has(segment)) || path.endsWith('.tsbuildinfo')) return undefined;
  if (segments.length === 2 && MEDIA_TYPES.has(segments[0]!)) return undefined;
  if (path.includes('/') && (DOMAIN.test(segments[0]!) || VARIABLE.test(segments[0]!))) return undefined;
  return path;
}

/**
 * Whether a path named in `from` (a Markdown file) resolves: relative to the Markdown file's folder, or to the
 * repository root, or as the end of a longer path (`src/main.ts` names every service's; `values.yaml` the
 * chart's). `./` and `../` paths resolve from the Markdown file's folder only. Wildcards expand.
 */
export function pathResolves(path: string, from: string, index: RepositoryIndex): boolean {
  const beside = posix.normalize(posix.join(posix.dirname(from), path)).replace(/\/$/, '');
  const wildcard = path.includes('*');
  if (!beside.startsWith('..') && (wildcard ? index.matches(globPattern(beside)) : index.has(beside))) return true;
  if (/^\.\.?\//.test(path)) return false;
  return index.has(path.replace(/\/$/, '')) || index.matches(globPattern(path, { tail: true }));
}

/**
 * What is wrong with a link from `from`, or undefined: a relative target must be a file or folder of the
 * repository (from the Markdown file's folder; from the root when it starts with `/`), and an anchor into a
 * Markdown file must be one of its headings. Links with a scheme (`https:`, `mailto:`) are not followed.
 */
export function linkProblem(
  target: string,
  from: string,
  index: RepositoryIndex,
  anchorsOf: (path: string) => ReadonlySet<string> | undefined,
): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined;
  const [pathPart = '', anchor] = target.split('#');
  const path = decodeURI(pathPart.split('?')[0]!);
  const resolved =
    path === '' ? from : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(from), path));
  const file = resolved.replace(/\/$/, '');
  if (file.startsWith('..')) return `link ${target} leaves the repository`;
  if (!index.has(file)) return `link ${target}: no file or folder ${file}`;
  if (anchor && file.endsWith('.md') && !anchorsOf(file)?.has(anchor))
    return `link ${target}: no heading #${anchor} in ${file}`;
  return undefined;
}
