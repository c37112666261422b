import { canonicalArgv } from '../../src/shell/canonical-argv.js';
import { awkCommands } from '../../src/shell/launcher-scripts/awk.js';
import { sedCommands } from '../../src/shell/launcher-scripts/sed.js';

const words = (line: string): string[] => line.split(' ');

describe('canonicalArgv: the global options before a subcommand are removed', () => {
  it.each([
    ['git -p push origin main', 'git push origin main'],
    ['git --paginate push', 'git push'],
    ['git --git-dir .git push', 'git push'],
    ['git --git-dir=.git --work-tree . push -f', 'git push -f'],
    ['git -C . -p push', 'git push'],
    ['git -C. --no-pager --exec-path=/x push', 'git push'],
    ['git --namespace ns -c a=b push', 'git push'],
    ['/usr/bin/git -P push', 'git push'],
    ['kubectl -nprod delete pod x', 'kubectl delete pod x'],
    ['kubectl -n prod --context c delete pod x', 'kubectl delete pod x'],
    ['kubectl --request-timeout 5s apply -f k.yaml', 'kubectl apply -f k.yaml'],
    ['kubectl -v=5 --insecure-skip-tls-verify apply', 'kubectl apply'],
    ['helm --debug uninstall web', 'helm uninstall web'],
    ['helm -nprod rollback web 1', 'helm rollback web 1'],
    ['helm --kube-context x upgrade web', 'helm upgrade web'],
    ['npm --registry https://registry.npmjs.org publish', 'npm publish'],
    ['npm --registry=https://r publish', 'npm publish'],
    ['npm -w pkg publish', 'npm publish'],
    ['pnpm -C pkg publish', 'pnpm publish'],
    ['pnpm -w -r --filter x publish', 'pnpm publish'],
    ['yarn --cwd pkg publish', 'yarn publish'],
    ['cargo +nightly publish', 'cargo publish'],
    ['cargo --locked publish', 'cargo publish'],
    ['cargo +stable -Z unstable-options --offline publish', 'cargo publish'],
    ['docker image push img:1', 'docker push img:1'],
    ['docker -H tcp://x image push img', 'docker push img'],
    ['docker buildx build --push -t img .', 'docker build --push -t img .'],
    ['docker buildx --builder b build --push .', 'docker build --push .'],
    ['terraform -chdir=infra apply', 'terraform apply'],
    ['tofu -chdir=x destroy', 'tofu destroy'],
  ])('%s → %s', (written, canonical) => {
    expect(canonicalArgv(words(written))).toEqual(words(canonical));
  });

  it.each([
    'git push origin main',
    'git log',
    'kubectl get pods',
    'ls -la',
    'docker image ls',
    'cargo build',
  ])('%s is its own canonical form (null)', (written) => {
    expect(canonicalArgv(words(written))).toBeNull();
  });

  it('keeps the arguments after the subcommand as written, options included', () => {
    expect(canonicalArgv(words('git -p log -p --stat'))).toEqual(words('git log -p --stat'));
    expect(canonicalArgv(words('kubectl -n x get pods -n y'))).toEqual(words('kubectl get pods -n y'));
  });
});

describe('awkCommands', () => {
  it.each([
    ['BEGIN{system("sudo id")}', ['sudo id']],
    ['BEGIN { system ( "a b" ) ; system("c") }', ['a b', 'c']],
    ['BEGIN{"date" | getline d}', ['date']],
    ['{ print $1 | "sort -u" }', ['sort -u']],
    ['{ print |& "bc" }', ['bc']],
    ['BEGIN{system("echo \\"q\\"")}', ['echo "q"']],
    ['/a|b/ { print $1 }', []],
    ['$1 ~ /x|y/ || $2 == "a|b" { n++ } END { print n }', []],
    ['{ print "x" > "out.txt" } # system("id")', []],
  ])('%s runs %j', (program, commands) => {
    expect(awkCommands(program)).toEqual({ commands });
  });

  it.each([
    'BEGIN{c="sudo id"; system(c)}',
    'BEGIN{system("sudo " x)}',
    '{ print | cmd }',
    '{ cmd | getline }',
  ])('%s runs a command known only at run time', (program) => {
    expect(awkCommands(program).dynamic).toEqual(expect.any(String));
  });
});

describe('sedCommands', () => {
  it.each([
    ['1e sudo id', ['sudo id']],
    ['e sudo id', ['sudo id']],
    ['/x/e date\ns/a/b/', ['date']],
    ['s/a/b/g;2e ls -l', ['ls -l']],
    ['s|e|x|g', []],
    ['s/a/b/w out.txt', []],
    ['y/abc/xyz/', []],
    ['1,/re/{p;d}', []],
    ['$!N;P;D', []],
    ['a\\\nappended e text', []],
    ['/start/,+2d', []],
    ['\\,e,d', []],
    ['s/x/y/3g', []],
    [':a;N;$!ba;s/\\n/ /g', []],
  ])('%j runs %j', (script, commands) => {
    expect(sedCommands(script)).toEqual({ commands });
  });

  it.each([
    ['s/a/b/e', 'dynamic'],
    ['1e', 'dynamic'],
    ['s/a/b/ge', 'dynamic'],
    ['s/a/b', 'problem'],
    ['1k', 'problem'],
  ])('%j is refused (%s)', (script, kind) => {
    expect(sedCommands(script)).toHaveProperty(kind, expect.any(String));
  });
});
