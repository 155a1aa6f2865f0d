// The image: the Dockerfile passes a real linter and builds what the chart runs (a production-only, non-root
// image whose entrypoint is the dispatcher); the dispatcher picks a component by name.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  DockerfileParser,
  type Copy,
  type Env,
  type From,
  type Instruction,
  type JSONInstruction,
} from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { COMPONENTS } from '../src/components.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dockerfileText = readFileSync(join(root, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(dockerfileText);

interface Stage {
  name: string | null;
  image: string | null;
  instructions: Instruction[];
}

const stages: Stage[] = [];
for (const instruction of dockerfile.getInstructions()) {
  if (instruction.getKeyword() === 'FROM') {
    const from = instruction as From;
    stages.push({ name: from.getBuildStage(), image: from.getImage(), instructions: [] });
  } else stages.at(-1)?.instructions.push(instruction);
}
const stageNamed = (name: string | null) => stages.find((stage) => stage.name !== null && stage.name === name);
/** A stage's instructions with those of the stages it is built FROM first: what applies in it. */
const inherited = (stage: Stage): Instruction[] => {
  const parent = stageNamed(stage.image);
  return [...(parent ? inherited(parent) : []), ...stage.instructions];
};
const final = stages.at(-1) as Stage;
const finalInstructions = inherited(final);
const last = (keyword: string, instructions = finalInstructions) =>
  instructions.filter((instruction) => instruction.getKeyword() === keyword).at(-1);
const words = (instruction: Instruction) => instruction.getArguments().map((argument) => argument.getValue());
const installs = (instructions: Instruction[]) =>
  instructions.filter((i) => i.getKeyword() === 'RUN' && /\bnpm (ci|install)\b/.test(i.getRawArgumentsContent() ?? ''));
const flag = (instruction: Instruction, name: string) =>
  (instruction as Copy)
    .getFlags()
    .find((f) => f.getName() === name)
    ?.getValue();

describe('Dockerfile', () => {
  it('has no problems that dockerfile-utils (the VS Code Docker extension linter) reports', () => {
    const problems = validate(dockerfileText).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });

  it('starts from a slim Node image whose major, an ARG, is one the code supports', () => {
    const nodeMajor = dockerfile.getInitialARGs().find((arg) => arg.getProperty()?.getName() === 'NODE_MAJOR');
    const major = Number(nodeMajor?.getProperty()?.getValue());
    const supported = Number(
      />=(\d+)/.exec(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node)?.[1],
    );
    expect(major).toBeGreaterThanOrEqual(supported);
    expect(stages[0]?.image).toMatch(/^node:\$\{NODE_MAJOR\}-(\w+-)?slim$/);
  });

  it('runs the final stage as a numeric non-root user, with NODE_ENV=production', () => {
    const user = words(last('USER') as Instruction).join(' ');
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    const env = finalInstructions.filter((i) => i.getKeyword() === 'ENV').flatMap((i) => (i as Env).getProperties());
    expect(
      env
        .filter((p) => p.getName() === 'NODE_ENV')
        .at(-1)
        ?.getValue(),
    ).toBe('production');
  });

  it('enters through the dispatcher, bin/gateway.js, in the working directory', () => {
    const entrypoint = (last('ENTRYPOINT') as JSONInstruction).getJSONStrings().map((s) => s.getJSONValue());
    const workdir = words(last('WORKDIR') as Instruction)[0];
    expect(entrypoint).toEqual(['node', `${workdir}/bin/gateway.js`]);
    expect(existsSync(join(root, 'bin/gateway.js'))).toBe(true);
  });

  it('takes only built stages into the final one, its node_modules from an `npm ci --omit=dev`', () => {
    const copies = final.instructions.filter((i) => i.getKeyword() === 'COPY');
    // Nothing from the build context: no TypeScript sources, no tests.
    expect(copies.map((copy) => flag(copy, 'from'))).not.toContain(undefined);
    const dependencySources = copies.filter((copy) => {
      const source = stageNamed(flag(copy, 'from') ?? null) as Stage;
      const paths = words(copy).slice(0, -1);
      const workdir = words(last('WORKDIR', inherited(source)) as Instruction)[0];
      return installs(source.instructions).length > 0 && paths.some((p) => p === workdir || p.includes('node_modules'));
    });
    expect(dependencySources.length).toBeGreaterThan(0);
    const stagesInstalling = dependencySources.map((copy) => stageNamed(flag(copy, 'from') ?? null) as Stage);
    for (const install of [
      ...stagesInstalling.flatMap((s) => installs(s.instructions)),
      ...installs(finalInstructions),
    ])
      expect(install.getRawArgumentsContent()).toContain('--omit=dev');
  });

  it("exposes every component's port and the devchain's", () => {
    const exposed = final.instructions.filter((i) => i.getKeyword() === 'EXPOSE').flatMap(words);
    expect(exposed.map(Number).sort()).toEqual([...COMPONENTS.map((c) => c.defaultPort), 9944].sort());
  });

  it('has a development stage (skaffold dev) that the final stage is not built from, run as the same user through the dev entrypoint', () => {
    const dev = stageNamed('dev') as Stage;
    expect(dev).toBeDefined();
    const ancestry = (stage: Stage | undefined): string[] =>
      stage ? [stage.name ?? '', ...ancestry(stageNamed(stage.image))] : [];
    expect(ancestry(final)).not.toContain('dev');
    expect(final.instructions.map((i) => (i.getKeyword() === 'COPY' ? flag(i, 'from') : undefined))).not.toContain(
      'dev',
    );
    const devInstructions = inherited(dev);
    expect(words(last('USER', devInstructions) as Instruction)).toEqual(words(last('USER') as Instruction));
    const entrypoint = (last('ENTRYPOINT', devInstructions) as JSONInstruction)
      .getJSONStrings()
      .map((s) => s.getJSONValue());
    expect(entrypoint).toEqual(['/app/dev/images/dev-entrypoint']);
    // The stage makes the vendor bundles its runner loads the packages from.
    expect(
      devInstructions.some(
        (instruction) =>
          instruction.getKeyword() === 'RUN' &&
          instruction.getRawArgumentsContent()?.includes('dev/images/dev-vendor.mjs'),
      ),
    ).toBe(true);
    // What the entrypoint runs is in the build context.
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const file of [
      'dev/images/dev-entrypoint',
      'dev/images/dev-runner.mjs',
      'dev/images/dev-vendor.mjs',
      'dev/images/dev-vendor-hooks.mjs',
    ]) {
      expect(existsSync(join(root, file))).toBe(true);
      expect(ignored).toContain(`!${file}`);
    }
  });

  it('keeps installed and built output, local state and tests out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const pattern of ['**/node_modules', '**/dist', '**/*.tsbuildinfo', '.git', '.dev', '**/test'])
      expect(ignored).toContain(pattern);
  });

  it('keeps in the build context the tools/ scripts that the Dockerfile and `npm run build` run (tools/* is left out)', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { build: string } };
    const runs = dockerfile
      .getInstructions()
      .filter((instruction) => instruction.getKeyword() === 'RUN')
      .map((instruction) => instruction.getTextContent());
    const scripts = [
      ...[...manifest.scripts.build.matchAll(/\bnode (tools\/\S+)/g)].map((match) => match[1]),
      ...runs.flatMap((text) => [...text.matchAll(/(?:^|[\s;&|])(tools\/[\w.-]+)/g)].map((match) => match[1])),
    ];
    expect(scripts).toEqual(expect.arrayContaining(['tools/copyLuaScripts.js', 'tools/build-with-cache']));
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toContain('tools/*');
    for (const script of scripts) expect(ignored).toContain(`!${script}`);
  });
});

const run = promisify(execFile);
/** Runs the dispatcher; resolves with its exit code and output, whatever the code. */
async function gateway(args: string[], nodeOptions: string[] = []) {
  try {
    const { stdout, stderr } = await run(process.execPath, [...nodeOptions, 'bin/gateway.js', ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('bin/gateway.js', () => {
  it('prints its usage and exits 2 without a command', async () => {
    const { code, stderr } = await gateway([]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^usage: gateway <command>/);
  });

  it('names an unknown command, prints its usage and exits 2', async () => {
    const { code, stderr } = await gateway(['accounts', 'api']);
    expect(code).toBe(2);
    expect(stderr).toContain('gateway: unknown command accounts\nusage: gateway <command>');
  });

  it('offers every service under services/, the devchain and the chart hooks ensure-secret and keep-replicas', async () => {
    const { code, stdout } = await gateway(['--help']);
    expect(code).toBe(0);
    const offered = stdout
      .split('\n')
      .slice(1, -1)
      .map((line) => line.trim().split(' ')[0]);
    expect(offered.sort()).toEqual(
      [...readdirSync(join(root, 'services')), 'devchain', 'ensure-secret', 'keep-replicas'].sort(),
    );
  });

  it('starts each command from a package export whose built file mirrors its source', () => {
    const entries = [
      ...readFileSync(join(root, 'bin/gateway.js'), 'utf8').matchAll(/'(@frequency-gateway\/[^/']+)\/([^']+)'/g),
    ];
    expect(entries).toHaveLength(6);
    const workspaces = [
      ...['shared', 'services'].flatMap((dir) => readdirSync(join(root, dir)).map((name) => join(root, dir, name))),
      join(root, 'dev/devchain'),
    ];
    for (const [, name, subpath] of entries) {
      const folder = workspaces.find(
        (w) => JSON.parse(readFileSync(join(w, 'package.json'), 'utf8')).name === name,
      ) as string;
      const target = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).exports[`./${subpath}`];
      expect(existsSync(join(folder, target.source))).toBe(true);
      expect(target.default).toBe(target.source.replace(/^\.\/src\//, './dist/').replace(/\.ts$/, '.js'));
    }
  });

  it('hands the rest of the arguments to the service, whose own usage answers a wrong component (exit 2)', async () => {
    const { code, stderr } = await gateway(['account', 'scheduler'], ['--conditions=source', '--import', 'tsx']);
    expect({ code, stderr }).toEqual({ code: 2, stderr: 'usage: account <api|worker|migrate>\n' });
  }, 120_000);
});
