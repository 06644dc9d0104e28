"""Readers of the deployment files for the deploy tests: the Dockerfile's instructions, YAML
documents, and which ONEMODEL_* variables onemodeld accepts.

    stages = dockerfile_stages(os.path.join(REPO, 'Dockerfile'))   # [[('FROM', 'debian:...'), ...]]
    assert 'ONEMODEL_LISTEN' in onemodeld_env_names()
"""

import os
import re
import subprocess

import yaml

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
DEPLOY = os.path.join(REPO, 'deploy')


def dockerfile_stages(path):
    """The Dockerfile's instructions as (KEYWORD, arguments) pairs, one list per FROM stage;
    continuation lines are joined and comments dropped."""
    with open(path, encoding='utf-8') as f:
        text = re.sub(r'\\\n', ' ', f.read())
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        keyword, _, args = line.partition(' ')
        if keyword.upper() == 'FROM':
            stages.append([])
        if not stages:
            raise ValueError('%s: %r comes before the first FROM' % (path, line))
        stages[-1].append((keyword.upper(), ' '.join(args.split())))
    return stages


def yaml_documents(path):
    """Every YAML document in the file at `path` (empty documents left out)."""
    with open(path, encoding='utf-8') as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def onemodeld_env_names():
    """The environment variables onemodeld reads, from `$ONEMODELD --help` ("(Env:NAME)")."""
    binary = os.environ.get('ONEMODELD')
    if not binary:
        raise RuntimeError('ONEMODELD is not set: run through ctest (tests deploy_*), or set '
                           'ONEMODELD=<build dir>/server/onemodeld')
    help_text = subprocess.run([binary, '--help'], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r'\(Env:(ONEMODEL_[A-Z_]+)\)', help_text))
