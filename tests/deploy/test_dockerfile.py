"""The Dockerfile builds the way CI does and ships what the binaries need.

Its build steps are the commands of scripts/start (so the image and CI cannot drift), its slim
runtime stage installs the Debian package of every shared library the onemodeld and onemodel
binaries of this build link (ldd + dpkg -S), it runs as a non-root user, listens on all
interfaces through ONEMODEL_* variables onemodeld knows, exposes those ports, and its
HEALTHCHECK (`onemodel ... health`) passes against a serving onemodeld and fails without one.
Run through ctest (test deploy_dockerfile).
"""

import json
import os
import re
import shlex
import subprocess

import pytest

from cluster import free_port, server_fixtures
from deploy_files import REPO, dockerfile_stages, onemodeld_env_names, yaml_documents

DOCKERFILE = os.path.join(REPO, 'Dockerfile')


@pytest.fixture(scope='module')
def stages():
    build, runtime = dockerfile_stages(DOCKERFILE)  # exactly two stages
    return build, runtime


def args_of(stage, keyword):
    """The arguments of every `keyword` instruction of the stage."""
    return [args for k, args in stage if k == keyword]


def run_commands(stage):
    """The shell commands of the stage's RUN lines, split at &&."""
    return [c.strip() for run in args_of(stage, 'RUN') for c in run.split('&&')]


def env_of(stage):
    """The stage's ENV settings (KEY=VALUE form)."""
    return dict(shlex.split(kv)[0].split('=', 1) for env in args_of(stage, 'ENV') for kv in
                re.findall(r'\S+=(?:"[^"]*"|\S+)', env))


def test_the_build_stage_runs_the_commands_of_scripts_start(stages):
    build, _ = stages
    assert args_of(build, 'FROM')[0].startswith('debian:bookworm ')
    commands = run_commands(build)
    assert commands == ['scripts/install-deps', 'cmake --preset release',
                        'cmake --build --preset release --target onemodeld onemodel']
    with open(os.path.join(REPO, 'scripts', 'start'), encoding='utf-8') as f:
        start = f.read()
    for command in commands:
        assert command in start, 'scripts/start no longer runs %r: change both together' % command


def test_the_runtime_stage_copies_the_release_binaries(stages):
    _, runtime = stages
    assert args_of(runtime, 'FROM')[0].startswith('debian:bookworm-slim ')
    (copy,) = args_of(runtime, 'COPY')
    assert copy.split() == ['--from=build', '/src/build/release/server/onemodeld',
                            '/src/build/release/client/onemodel', '/usr/local/bin/']
    assert args_of(runtime, 'ENTRYPOINT') == ['["onemodeld"]']


def linked_packages(*binaries):
    """The Debian packages owning the shared libraries the `binaries` link (ldd, dpkg -S)."""
    libraries = set()
    for binary in binaries:
        ldd = subprocess.run(['ldd', binary], capture_output=True, text=True, check=True).stdout
        libraries.update(re.findall(r'=> (/\S+)', ldd))
    paths = sorted(libraries | {os.path.realpath(lib) for lib in libraries})
    # One dpkg call (each takes about a second); it fails for the paths no package lists.
    owners = subprocess.run(['dpkg', '-S'] + paths, capture_output=True, text=True).stdout
    owner_of = {}
    for line in owners.splitlines():
        packages, path = line.split(': ', 1)
        owner_of[path] = packages.split(',')[0].split(':')[0]
    unowned = [lib for lib in libraries if lib not in owner_of and os.path.realpath(lib) not in owner_of]
    assert not unowned, 'no Debian package owns %s (linked by %s)' % (unowned, binaries)
    return {owner_of.get(lib) or owner_of[os.path.realpath(lib)] for lib in libraries}


def test_the_runtime_stage_installs_every_linked_library(stages):
    _, runtime = stages
    installs = [c for c in run_commands(runtime) if 'apt-get install' in c]
    assert len(installs) == 1
    installed = {w for w in installs[0].split() if not w.startswith('-') and '=' not in w} - {
        'apt-get', 'install'}
    needed = linked_packages(os.environ['ONEMODELD'], os.environ['ONEMODEL_CLI'])
    # the asan and tsan presets link their runtimes; the image holds a release build
    needed = {p for p in needed if not re.fullmatch(r'lib(a|ub|t|l)san\d+', p)}
    assert needed - installed == set(), 'add these packages to the runtime stage of the Dockerfile'
    assert installed - needed == set(), 'the runtime stage installs packages nothing links'


def test_it_runs_as_the_non_root_user_of_the_kubernetes_pods(stages):
    _, runtime = stages
    (user,) = args_of(runtime, 'USER')
    uid, gid = (int(x) for x in user.split(':'))
    assert uid != 0 and gid != 0
    (deployment,) = yaml_documents(os.path.join(REPO, 'deploy', 'base', 'deployment.yaml'))
    pod = deployment['spec']['template']['spec']['securityContext']
    assert (pod['runAsUser'], pod['runAsGroup'], pod['runAsNonRoot']) == (uid, gid, True)


def test_it_listens_on_all_interfaces_on_the_ports_it_exposes(stages):
    _, runtime = stages
    env = env_of(runtime)
    assert env['ONEMODEL_LISTEN'] == '0.0.0.0:50051'
    assert env['ONEMODEL_METRICS_LISTEN'] == '0.0.0.0:9464'
    assert env['ONEMODEL_STATUS_PAGE'] == 'off', 'the status page would be open to the network'
    assert set(env) <= onemodeld_env_names(), 'ENV names a variable onemodeld does not read'
    exposed = {int(p) for e in args_of(runtime, 'EXPOSE') for p in e.split()}
    assert exposed == {50051, 9464}


def healthcheck_argv(runtime):
    """The HEALTHCHECK's exec-form CMD as a list."""
    (check,) = args_of(runtime, 'HEALTHCHECK')
    return json.loads(check.split(' CMD ', 1)[1])


def test_the_healthcheck_asks_grpc_health_through_the_cli(stages):
    _, runtime = stages
    argv = healthcheck_argv(runtime)
    assert argv[0] == 'onemodel' and argv[-1] == 'health'
    server = argv[argv.index('--server') + 1]
    assert server == '127.0.0.1:' + env_of(runtime)['ONEMODEL_LISTEN'].rsplit(':', 1)[1]

    def check(address):
        """Runs the HEALTHCHECK command against `address` with this build's CLI."""
        rewritten = [os.environ['ONEMODEL_CLI']] + [address if a == server else a for a in argv[1:]]
        env = {k: v for k, v in os.environ.items() if not k.startswith('ONEMODEL_')}
        return subprocess.run(rewritten, capture_output=True, text=True, env=env, timeout=30)

    replica = server_fixtures.start_server()
    try:
        serving = check(replica.grpc)
        assert (serving.returncode, serving.stdout.strip()) == (0, 'SERVING'), serving.stderr
    finally:
        server_fixtures.stop_and_check(replica)
    assert check('127.0.0.1:%d' % free_port()).returncode != 0, 'no server: the check must fail'


def test_dockerignore_keeps_build_trees_git_and_the_venv_out():
    with open(os.path.join(REPO, '.dockerignore'), encoding='utf-8') as f:
        ignored = {line.strip() for line in f if line.strip() and not line.startswith('#')}
    assert {'.git', 'build', '.venv', '**/node_modules'} <= ignored  # .venv: scripts/start's
