"""The status page (/status on the metrics port) drawn by headless Chromium against a real
onemodeld with three sessions holding tensors: the DOM after the page's script ran has the
server's identity, one SVG bar group per pool size class, one row per session (by serial, no
session id) and the RPC table; a screenshot is kept in $ONEMODEL_ARTIFACTS/status.png.

Run through ctest (test status_page_browser); needs Debian's chromium (scripts/install-deps).
"""

import html.parser
import importlib.util
import json
import os
import shutil
import subprocess
import urllib.request

import numpy as np
import pytest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
_spec = importlib.util.spec_from_file_location(
    'onemodel_server_fixtures', os.path.join(REPO, 'client', 'python', 'tests', 'conftest.py'))
server_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(server_fixtures)

# Virtual time Chromium gives the page's script (its fetch of /status.json and first drawing).
BUDGET_MS = 5000


def chromium(*args):
    """Runs headless Chromium with `args`; returns its stdout."""
    binary = shutil.which('chromium')
    if binary is None:
        pytest.fail('chromium is not installed: run scripts/install-deps', pytrace=False)
    result = subprocess.run(
        [binary, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
         '--virtual-time-budget=%d' % BUDGET_MS, *args],
        capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


class Dom(html.parser.HTMLParser):
    """The elements of a DOM dump as (tag, attributes, text directly inside) in document order."""

    def __init__(self, text):
        super().__init__()
        self.elements = []
        self._open = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append([tag, dict(attrs), ''])
        self._open.append(self.elements[-1])

    def handle_endtag(self, tag):
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if self._open:
            self._open[-1][2] += data

    def find(self, tag, cls=None, **attrs):
        return [e for e in self.elements if e[0] == tag
                and (cls is None or cls in e[1].get('class', '').split())
                and all(e[1].get(k) == v for k, v in attrs.items())]


@pytest.fixture(scope='module')
def running():
    """A onemodeld with three sessions holding 1, 2 and 3 tensors (one more released, so that
    its class has an idle buffer), and its /status.json."""
    server = server_fixtures.start_server()
    client = server.client()
    sessions = [client.session() for _ in range(3)]
    for i, s in enumerate(sessions):
        for n in range(i + 1):
            s.put(np.ones(1000 * (n + 1) * (i + 1), np.float32))
    sessions[0].release(sessions[0].put(np.ones(100000, np.float32)))
    with urllib.request.urlopen('http://%s/status.json' % server.metrics, timeout=10) as reply:
        status = json.load(reply)
    yield server, sessions, status
    server_fixtures.stop_and_check(server)


def test_the_page_draws_the_classes_sessions_and_rpcs(running):
    server, sessions, status = running
    dump = chromium('--dump-dom', 'http://%s/status' % server.metrics)
    dom = Dom(dump)
    assert dom.find('span', id='instance')[0][2] == server.instance
    assert 'uptime' in [e[2] for e in dom.find('dt')]

    (chart,) = dom.find('svg', id='pool-chart')
    groups = dom.find('g', 'size-class')
    assert [int(g[1]['data-size-bytes']) for g in groups] == \
        [c['size_bytes'] for c in status['pool']['classes']]
    assert len(groups) >= 3, 'six tensors of different sizes use several classes'
    assert len(dom.find('rect', 'rented')) == len(groups) + 1  # one per class and the legend's
    assert any(float(r[1]['width']) > 0 for r in dom.find('rect', 'idle')[1:]), \
        "the released tensor's idle buffer has a bar"


    rows = dom.find('tr', 'session-row')
    assert len(rows) == 3
    cells = [e[2] for e in dom.elements if e[0] == 'td']
    for serial in (r['session'] for r in status['sessions']['rows']):
        assert serial in cells
    for s in sessions:
        assert s.id not in dump, 'a session id must never appear on the page'

    rpcs = {e[2] for e in dom.elements if e[0] == 'td'}
    assert {'CreateSession', 'PutTensor'} <= rpcs
    assert len(dom.find('tr', 'rpc-row')) == len(status['rpcs'])
    assert dom.find('div', id='updated')[0][2].startswith('updated '), 'the script read /status.json'


def test_a_screenshot_is_kept(running):
    server, _, _ = running
    artifacts = os.environ.get('ONEMODEL_ARTIFACTS', os.getcwd())
    os.makedirs(artifacts, exist_ok=True)
    path = os.path.join(artifacts, 'status.png')
    if os.path.exists(path):
        os.remove(path)
    chromium('--window-size=1100,1300', '--screenshot=%s' % path, 'http://%s/status' % server.metrics)
    with open(path, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    assert os.path.getsize(path) > 10000, 'a drawn page, not a blank one'
    print('status page screenshot: %s' % path)
