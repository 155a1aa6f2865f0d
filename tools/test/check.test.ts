import { fileURLToPath } from 'node:url';
import { jestProjects, planCheck } from '../src/check.js';
import { readWorkspaces } from '../src/workspaces.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packages = readWorkspaces(root);
const projects = await jestProjects(root);
const plan = (...changed: string[]) => planCheck(changed, packages, projects);

describe('make check: from a change to what runs', () => {
  it('a library: its project and those of the packages that depend on it, never slow or e2e', () => {
    expect(plan('shared/webhooks/src/delivery.ts').projects.sort()).toEqual(
      ['account', 'content-publishing', 'content-watcher', 'tools', 'webhooks'].sort(),
    );
  });

  it('a service: its project and the tools that load it, not the other services', () => {
    expect(plan('services/content-watcher/src/api/component.ts').projects.sort()).toEqual(
      ['content-watcher', 'tools'].sort(),
    );
  });

  it('follows dependants through other packages (platform: every package but dsnp, which needs none)', () => {
    const { projects: selected } = plan('shared/platform/src/index.ts');
    expect(selected).toEqual(expect.arrayContaining(['platform', 'chain', 'devstack', 'devchain', 'account']));
    expect(selected).not.toContain('dsnp');
    expect(selected).not.toContain('slow');
  });

  it("starts jest's related-test search from the changed package files only; lints code; docs on Markdown", () => {
    const result = plan('README.md', 'shared/dsnp/src/index.ts', 'shared/dsnp/test/dsnp.test.ts', 'Makefile');
    expect(result.related).toEqual(['shared/dsnp/src/index.ts', 'shared/dsnp/test/dsnp.test.ts']);
    expect(result.lint).toEqual(['shared/dsnp/src/index.ts', 'shared/dsnp/test/dsnp.test.ts']);
    expect(result.projects.sort()).toEqual(['content-publishing', 'content-watcher', 'dsnp', 'tools']);
    expect(result.docs).toBe(true);
    expect(plan('docs/guides/developer.md')).toEqual({ projects: [], related: [], lint: [], docs: true });
  });
});
